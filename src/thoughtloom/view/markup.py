"""HTML built from Python values, escaped by construction.

Every string handed to :func:`h` (as a child or an attribute value) is
escaped; only :class:`Raw` passes through, and ``Raw`` is made here and in
:mod:`.layout`, from markup this package wrote. So model text (a reply
holding ``<script>`` or ``<img onerror=...>``) can reach the page only as
text: it shows, and runs nothing.
"""

from __future__ import annotations

import html
import json
from typing import Iterable, Union

from ..core import csp
from ..core.text import encodable


class Raw(str):
    """Markup this package wrote (never model text); :func:`h` inserts it as it is."""


Child = Union[str, int, float, Raw, None, Iterable["Child"]]

_VOID = {"br", "hr", "img", "input", "meta", "link"}


def esc(value: object) -> str:
    """Text or attribute value, escaped (quotes included) and made encodable."""
    return html.escape(encodable(str(value)), quote=True)


def _children(children: Iterable[Child]) -> str:
    parts = []
    for child in children:
        if child is None or child is False:
            continue
        if isinstance(child, Raw):
            parts.append(child)
        elif isinstance(child, (str, int, float)):
            parts.append(esc(child))
        else:
            parts.append(_children(child))
    return "".join(parts)


def h(tag: str, attrs: dict[str, object] | None = None, *children: Child) -> Raw:
    """``<tag attrs>children</tag>``; a ``None`` or ``False`` attribute is left out, ``True`` is bare."""
    rendered = []
    for name, value in (attrs or {}).items():
        if value is None or value is False:
            continue
        name = name.rstrip("_").replace("_", "-")  # class_ -> class, data_node -> data-node
        rendered.append(f" {name}" if value is True else f' {name}="{esc(value)}"')
    head = f"<{tag}{''.join(rendered)}>"
    if tag in _VOID:
        return Raw(head)
    return Raw(f"{head}{_children(children)}</{tag}>")


def content_security_policy(scripts: Iterable[str] = (), styles: Iterable[str] = ()) -> Raw:
    """The ``<meta>`` Content-Security-Policy of a report: nothing loads from anywhere (no network,
    no remote script, style, font, frame or form target); only the page's own inline ``scripts``
    and ``styles`` run, each allowed by its SHA-256, so an inline handler (``onerror=``), a
    ``style=`` attribute or a ``<script>`` that got into the page would not run. Put it first in
    ``<head>``. (The page blocks a report stores are of a type no browser runs: no hash needed.)"""
    return h("meta", {"http_equiv": "Content-Security-Policy", "content": csp.policy(scripts, styles)})


def bar(fraction: float, width: int = 120) -> Raw:
    """A horizontal bar ``fraction`` of ``width`` pixels long (an SVG: no ``style`` attribute,
    which the reports' Content-Security-Policy would block)."""
    w = max(0, min(width, round(width * fraction))) if fraction == fraction else 0
    return h("svg", {"class": "bar", "width": w, "height": 9, "aria_hidden": "true"},
             h("rect", {"width": w, "height": 9, "rx": 2}))


def join(*children: Child) -> Raw:
    """Several pieces as one (each escaped unless Raw)."""
    return Raw(_children(children))


def text_block(text: object, class_: str = "text") -> Raw:
    """Preformatted model text (kept as written, wrapped by the stylesheet)."""
    return h("pre", {"class": class_}, "" if text is None else str(text))


def fold(summary: Child, *body: Child, open_: bool = False, class_: str | None = None) -> Raw:
    """A ``<details>`` block: ``summary`` shown, ``body`` on a click."""
    return h("details", {"class": class_, "open": open_}, h("summary", None, summary), *body)


def table(head: Iterable[Child], rows: Iterable[Iterable[Child]], class_: str = "grid",
          attrs: dict[str, object] | None = None) -> Raw:
    return h("table", {"class": class_, **(attrs or {})},
             h("thead", None, h("tr", None, [h("th", None, c) for c in head])),
             h("tbody", None, [h("tr", None, [h("td", None, c) for c in row]) for row in rows]))


def clip(text: object, chars: int = 90) -> str:
    """``text`` on one line, cut to ``chars`` with an ellipsis (the whole text is shown elsewhere)."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= chars else flat[: chars - 1] + "…"


def answer_text(answer: object) -> str:
    """An answer or gold as a program writes it: text as it is, anything else (a list) as JSON."""
    return answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False, default=str)


def number(value: object, digits: int = 3) -> str:
    """A figure for a table: ints as they are, floats rounded, missing as a dash."""
    if value is None or isinstance(value, bool):
        return "–" if value is None else str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value != value:  # NaN: no examples
            return "–"
        return f"{value:,.{digits}f}"
    return str(value)
