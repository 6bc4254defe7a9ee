"""Rich rendering for the CLI: summaries, one-line usage, and the live progress
displays of :mod:`thoughtloom.eval.rich_progress` (shared with notebooks and
other commands), drawn on :data:`notes`, which ``-q`` silences (errors go to
:data:`err`, which it never does)."""

from __future__ import annotations

import re
from typing import Any, Iterable

from rich.console import Console, ConsoleDimensions
from rich.segment import Segment
from rich.markup import escape

from ..core.text import encodable, printable
from ..eval.rich_progress import RichProgress, RichStatus
from ..eval.summary import step_problem_lines
from ..lm.meter import UsageTotals

#: The width a console writing to a pipe or a file lays lines out in: wide enough that no line wraps.
PIPE_WIDTH = 100_000


class PipeConsole(Console):
    """A console that, where its stream is not a terminal (a pipe, a file, a CI log), never wraps or
    clips a line: rich would lay it out 80 columns wide (or as wide as another stream's terminal).
    Colour is already off there, so what it writes is plain text, one line per line."""

    @property
    def size(self) -> ConsoleDimensions:
        if self._width is None and not self.is_terminal and not self.is_jupyter:
            return ConsoleDimensions(PIPE_WIDTH, super().size.height)
        return super().size

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        """The text to write; where lines do not wrap, without the spaces rich pads each table row with
        to the widest row (a pipe's lines end where their text does)."""
        text = super()._render_buffer(buffer)
        if self.is_terminal or self.is_jupyter:
            return text
        return _PADDING.sub("", text)


_PADDING = re.compile(r"[ \t]+$", re.M)


err = PipeConsole(stderr=True)  # errors: always shown
notes = PipeConsole(stderr=True)  # live progress and notes: silenced by -q (see .conventions)
out = PipeConsole()  # results

__all__ = ["PipeConsole", "RichProgress", "RichStatus", "err", "notes", "out", "print_summary", "rule", "shown",
           "usage_line"]


def rule(console: Console) -> None:
    """A horizontal rule: the terminal's width, or 40 columns where lines do not wrap."""
    if console.is_terminal or console.is_jupyter:
        console.rule()
    else:
        console.print("─" * 40, highlight=False, markup=False)


def count(n: int, noun: str, plural: str | None = None) -> str:
    """'1 example', '3 examples': a number with its noun in the right number."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def shown(text: object) -> str:
    """Model text made safe to print inside rich markup: encodable, control characters as escapes
    (``core.text.printable``: no ESC sequence reaches the terminal), with its brackets escaped."""
    return escape(printable(str(text)))


def usage_line(usage: UsageTotals, seconds: float) -> str:
    cached = f" ({usage.cached_calls} cached)" if usage.cached_calls else ""
    truncated = f" · {usage.truncated_calls} cut off at max_tokens" if usage.truncated_calls else ""
    return (f"LLM calls: {usage.calls}{cached} · tokens: {usage.prompt_tokens} prompt + "
            f"{usage.completion_tokens} completion{truncated} · {seconds:.2f} s")


def print_step_problems(tally: dict[str, Any], examples: int | None = None) -> None:
    """What went wrong inside the run, one line per kind (``eval.summary.step_problem_lines``)."""
    for line in step_problem_lines(tally, examples=examples):
        out.print(f"[yellow]{shown(line)}[/]", highlight=False)


def print_summary(summary: dict[str, Any], out_dir: str) -> None:
    metrics = " · ".join(f"{k} {v:.3f}" for k, v in summary["metrics"].items())
    run = summary["this_run"]
    out.print(f"[bold]{summary['task']} / {summary['strategy']}[/] on {summary.get('model', '?')}: "
              f"n={summary['n']}/{summary['total']}"
              + (" (the task's packaged sample)" if summary.get("data_sample") else "") + f" · {metrics}"
              + (f" · [red]{summary['n_errors']} errors[/]" if summary["n_errors"] else "")
              + (f" · [yellow]{summary['n_truncated']} truncated replies (scored as no answer)[/]"
                 if summary.get("n_truncated") else "")
              + (f" · [yellow]{summary['n_budget_stopped']} stopped by the budget (best answer so far)[/]"
                 if summary.get("n_budget_stopped") else ""))
    out.print(f"this run: {count(run['examples'], 'example')} · LLM calls: {run['calls']} "
              f"({run['cached_calls']} cached, {run['new_calls']} new) · tokens: "
              f"{run['prompt_tokens']} prompt + {run['completion_tokens']} completion · "
              f"{run['wall_s']:.1f} s")
    print_step_problems(summary.get("step_problems") or {}, summary["n"])
    strata = (summary.get("task_report") or {}).get("strata")  # length-stratified tasks (HGOT's Table 2)
    for metric, rows in (strata or {}).items():
        cells = " · ".join(f"{name.capitalize()} {rows[name]['mean']:.3f} (n={rows[name]['n']})"
                           for name in ("long", "medium", "short", "overall") if name in rows)
        out.print(f"{metric} by question length: {cells}")
    out.print(f"results: {out_dir}/results.jsonl · summary: {out_dir}/summary.json")
