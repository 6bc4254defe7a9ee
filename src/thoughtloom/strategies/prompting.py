"""Prompting: how a few-shot prompt is laid out, and whether its reply finished.

:func:`few_shot` builds the messages of a prompt template with the task's
demos in one of :data:`LAYOUTS` (each demo in its own chat turns, or all in
one user message; :func:`render_demos` and :func:`demo_turn` write a demo);
a config declares its ``layout`` option with ``option(..., choices=LAYOUTS)``
(:mod:`thoughtloom.core.options`), so a bad one is refused when it is made.
:func:`finished` is how a strategy tells a reply cut off at ``max_tokens``
from a finished one.
"""

from __future__ import annotations

import typing

from .. import prompts
from ..core.options import Options, bad_value
from ..core.events import malformed
from ..core.types import Completion, Demo, Message, user
from .context import Context


def finished(ctx: Context, reply: Completion, what: str, **fields: object) -> bool:
    """Whether ``reply`` ended on its own; a reply cut off at ``max_tokens`` is
    not a finished plan, program step, evaluation or answer, and is traced as a
    ``malformed`` event (``what`` names the step, ``reason: truncated``) for the
    caller to treat as unreadable."""
    if reply.truncated:
        malformed(ctx.trace, what, "truncated", reply.text, **fields)
        return False
    return True


#: How a few-shot prompt is sent (see :mod:`thoughtloom.prompts`): ``chat``
#: puts each demo in its own user/assistant turns and the instruction in a
#: system message; ``text`` writes everything into one user message.
LAYOUTS = ("chat", "text")


def check_layout(layout: str, owner: str = "") -> None:
    """Refuse a layout that is not one of :data:`LAYOUTS`, in the options' one error format."""
    if layout not in LAYOUTS:
        raise bad_value(owner, "layout", layout, "must be one of: " + ", ".join(LAYOUTS))


class LayoutChecked(Options):
    """Kept for configs written against it: a config with a plain ``layout`` field whose layout
    is checked when made. New configs declare ``layout: str = option("chat", choices=LAYOUTS)``
    on an :class:`~thoughtloom.core.options.Options` dataclass instead."""

    def __post_init__(self) -> None:
        super().__post_init__()
        check_layout(self.layout, type(self).__name__)  # type: ignore[attr-defined]


def demo_turn(demo: Demo, *, with_rationale: bool) -> tuple[str, str]:
    """A demo as (question, answer) texts; the answer carries the rationale when asked."""
    if with_rationale and demo.rationale:
        return f"Question: {demo.question}", f"{demo.rationale}\nThe answer is: {demo.answer}"
    return f"Question: {demo.question}", f"Answer: {demo.answer}"


def render_demos(demos: typing.Sequence[Demo], *, with_rationale: bool) -> str:
    """Few-shot blocks in the same Question/answer layout the templates use."""
    blocks = ("\n".join(demo_turn(d, with_rationale=with_rationale)) for d in demos)
    return "".join(f"\n{b}\n" for b in blocks)


def few_shot(ctx: Context, name: str, demos: typing.Sequence[Demo], *, with_rationale: bool,
             layout: str, **fields: object) -> tuple[Message, ...]:
    """The messages of prompt ``name`` with ``demos``, laid out as ``layout``."""
    if layout == "text":
        return (user(ctx.prompt(name, demos=render_demos(demos, with_rationale=with_rationale), **fields)),)
    check_layout(layout)
    turns = [demo_turn(d, with_rationale=with_rationale) for d in demos]
    return tuple(prompts.render_turns(name, ctx.prompt_dir, turns, **fields))
