"""One self-contained HTML file per run: ``write_report(RUN_DIR)``.

The file holds the run page, rendered, and one page per example, each
gzip-compressed and base64-encoded inside a ``<script
type="application/x-thoughtloom-page">`` block that the browser does not
run; the inline script (``report.js``) inflates a page only when it is
opened (``#example=ID``), so a run of hundreds of examples opens at once
and stays small enough to mail. Style and script are inline: no network,
no CDN. Every piece of model text was escaped when the page was built
(:mod:`.markup`), and pages are inserted as markup whose scripts a browser
never runs.
"""

from __future__ import annotations

import base64
import gzip
import logging
from pathlib import Path
from importlib import resources

from ..core.errors import ConfigError
from ..core.files import no_space_names
from ..eval.results import atomic_write
from .example_page import example_page
from .figures import figures
from .markup import Raw, content_security_policy, esc, h
from .run_page import run_page
from .rundir import RunFolder

log = logging.getLogger(__name__)

PAGE_TYPE = "application/x-thoughtloom-page"
REPORT = "report.html"


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def packed(page: str) -> str:
    """A page as the report stores it: gzip, then base64 (no character a script block could misread)."""
    return base64.b64encode(gzip.compress(page.encode("utf-8"), compresslevel=6, mtime=0)).decode("ascii")


def build_report(run: RunFolder, *, only: str | None = None, compare_href: str | None = None,
                 replicates: int = 10_000) -> str:
    """The report's HTML. ``only``: hold just that example's page, and open on it."""
    if only is not None and only not in run.records:
        raise ConfigError(f"no example {only!r} in {run.path}",
                          hint=f"ids look like {next(iter(run.records), '(the run has no records)')!r}")
    fig = figures(run, replicates=replicates)
    ruled = run.checked_by_rule()
    pages: dict[str, str] = {}
    for example, events in run.trace_blocks():
        record = run.records.get(example)
        if record is None or (only is not None and example != only):
            continue
        pages[example] = packed(example_page(record, events, fig.primary, ruled=ruled))  # a rerun's later block wins
    for example, record in run.records.items():  # examples without a trace block still get a page
        if example not in pages and (only is None or example == only):
            pages[example] = packed(example_page(record, [], fig.primary, ruled=ruled))
    blocks = "".join(f'<script type="{PAGE_TYPE}" data-example="{esc(example)}">{data}</script>\n'
                     for example, data in pages.items())
    title = f"{run.strategy} on {run.task_name} · thoughtloom"
    script, style = _asset("report.js"), _asset("report.css")
    body = h("body", {"data-open": only},
             run_page(run, fig, compare_href=compare_href, replicates=replicates),
             h("section", {"id": "example", "hidden": True}),
             Raw(blocks),
             h("script", None, Raw(script)))
    return ("<!DOCTYPE html>\n" + h("html", {"lang": "en"},
            h("head", None, h("meta", {"charset": "utf-8"}), content_security_policy([script], [style]),
              h("meta", {"name": "viewport", "content": "width=device-width, initial-scale=1"}),
              h("title", None, title), h("style", None, Raw(style))),
            body) + "\n")


def write_report(run_dir: str | Path, out: str | Path | None = None, *, example: str | None = None,
                 compare_href: str | None = None, replicates: int = 10_000) -> Path:
    """Write the report of the run in ``run_dir`` (default ``RUN_DIR/report.html``); returns its path."""
    run = RunFolder.open(run_dir)
    path = Path(out) if out is not None else run.path / (REPORT if example is None else f"report-{_safe(example)}.html")
    html = build_report(run, only=example, compare_href=compare_href, replicates=replicates)
    with no_space_names(str(path)):
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, html)
    log.info("wrote %s (%d bytes, %d examples)", path, len(html), len(run.records))
    return path


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:80]

