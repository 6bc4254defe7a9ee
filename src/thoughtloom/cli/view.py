"""``thoughtloom view`` (a run as one offline HTML report) and ``thoughtloom compare`` (runs side by side).

Both read run folders only (:mod:`thoughtloom.view`); neither loads a model.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from ..core.errors import ConfigError
from ..core.files import no_space_names
from ..view import write_report
from ..view.compare import compare_runs, comparison_page, interval, said
from ..view.curve_view import spent
from ..eval.results import atomic_write
from .render import out, shown

RunDirs = Annotated[list[Path], typer.Argument(help="Run folders (the --out of `thoughtloom eval`).")]


def _existing(runs: list[Path]) -> list[Path]:
    """The run folders, each checked: one that is missing or a file is one line naming it."""
    for run in runs:
        if not run.exists():
            raise ConfigError(f"run folder {run} does not exist", hint="pass the --out folder of a `thoughtloom eval`")
        if not run.is_dir():
            raise ConfigError(f"{run} is a file, not a run folder", hint="pass the --out folder of a `thoughtloom eval`")
    return runs


def view(
    runs: RunDirs,
    out_file: Annotated[Optional[Path], typer.Option(
        "--out", "-o", help="Where to write the report (one run; default RUN_DIR/report.html).")] = None,
    example: Annotated[Optional[str], typer.Option(
        "--example", help="Only this example's page (opens on it); default RUN_DIR/report-ID.html.")] = None,
    compare_out: Annotated[Optional[Path], typer.Option(
        "--compare", help="With several runs: where to write their comparison (default compare.html beside "
                          "the runs' folders); each report links to it.")] = None,
) -> None:
    """Write a run's report: one self-contained HTML file (trees, plan graphs, programs, every call)."""
    runs = _existing(runs)
    if len(runs) > 1 and (out_file is not None or example is not None):
        raise ConfigError("--out and --example take one run folder",
                          hint="give one folder, or drop them (each report goes to RUN_DIR/report.html)")
    compare_file = None
    if len(runs) > 1:
        compare_file = compare_out or Path(os.path.commonpath([r.resolve() for r in runs])) / "compare.html"
    for run in runs:
        href = os.path.relpath(compare_file.resolve(), run.resolve()) if compare_file else None
        path = write_report(run, out_file, example=example, compare_href=href)
        anchor = f"#example={example}" if example else ""
        out.print(f"report: {shown(path)}  (open file://{shown(path.resolve())}{shown(anchor)})", soft_wrap=True)
    if compare_file is not None:
        _write_comparison([str(r) for r in runs], compare_file)


def _write_comparison(runs: list[str], path: Path) -> None:
    page = comparison_page(compare_runs(runs), path)
    with no_space_names(str(path)):
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, page)
    out.print(f"comparison: {shown(path)}", soft_wrap=True)


def budgets(text: str | None, flag: str) -> list[int]:
    """``10,20,40`` as budgets (whole numbers, 0 or more); anything else is one line naming ``flag``."""
    if text is None:
        return []
    parts = [p.strip() for p in text.split(",")]
    if any(not p for p in parts):
        raise ConfigError(f"{flag} takes budgets separated by commas, not {text[:40]!r}",
                          hint=f"e.g. {flag} 10,20,40")
    for p in parts:
        if not (p.isascii() and p.isdigit()) or len(p) > 18:
            said, unit = p if len(p) <= 20 else p[:20] + "…", flag.removeprefix("--at-")
            raise ConfigError(f"{flag}: {said!r} is not a whole number of {unit} (0 or more, under 10^18)",
                              hint=f"e.g. {flag} 10,20,40")
    return sorted({int(p) for p in parts})


def compare(
    runs: RunDirs,
    as_json: Annotated[bool, typer.Option("--json", help="Print the comparison as one JSON object.")] = False,
    html: Annotated[Optional[Path], typer.Option("--html", help="Also write it as an HTML page here.")] = None,
    at_calls: Annotated[Optional[str], typer.Option(
        "--at-calls", help="Also judge the runs at these call budgets (e.g. 10,20,40), from their anytime "
                           "trajectories.")] = None,
    at_tokens: Annotated[Optional[str], typer.Option(
        "--at-tokens", help="Also judge them at these token budgets (approximate between recorded points).")] = None,
) -> None:
    """Runs side by side: metrics with 95% bootstrap CIs, cost, and paired differences on shared examples."""
    chosen = {"at_calls": budgets(at_calls, "--at-calls"), "at_tokens": budgets(at_tokens, "--at-tokens")}
    result = compare_runs([str(r) for r in _existing(runs)], **chosen, curves=as_json or html is not None)
    if html is not None:
        page = comparison_page(result, html)
        with no_space_names(str(html)):
            html.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(html, page)
    if as_json:
        out.print_json(json.dumps(result, ensure_ascii=False))
        return
    _print_table(result)
    if html is not None:
        out.print(f"comparison: {shown(html)}", soft_wrap=True)


def _print_table(result: dict[str, Any]) -> None:
    """Lines, not a wide table: each run with its means and cost, then each pair's differences."""
    labels = {}
    for i, r in enumerate(result["runs"]):
        labels[i] = chr(ord("A") + i) if i < 26 else str(i + 1)
        metrics = " · ".join(f"{shown(m)} {interval(e)}" for m, e in r["metrics"].items()) or "no metrics"
        out.print(f"[bold]{labels[i]}[/] {shown(r['name'])}: {shown(r['strategy'])} on {shown(r['task'])} · model "
                  f"{shown(r['model'])} · n={r['n']}", soft_wrap=True, highlight=False)
        out.print(f"   {metrics}", soft_wrap=True, highlight=False)
        out.print(f"   {_fig(r['calls_per_example'], 1)} calls and {_fig(r['tokens_per_example'], 0)} tokens per "
                  f"example · {_fig(r['tokens_per_correct'], 0)} tokens per correct answer · wall "
                  f"{_fig(r['wall_s'], 1)} s", soft_wrap=True, highlight=False)
    if result["pairs"]:
        out.print("[dim]means with 95% bootstrap CIs over examples; differences b − a paired on the examples both "
                  "runs scored, with their test's p-value and the verdict after Holm's correction over every "
                  "difference here[/]", soft_wrap=True)
    for p in result["pairs"]:
        diffs = " · ".join(f"{shown(m)} {shown(said(d))}" for m, d in p["differences"].items())
        out.print(f"[bold]{labels[p['b']]} − {labels[p['a']]}[/] on {p['shared']} shared examples: "
                  f"{diffs or 'no common metric'}", soft_wrap=True, highlight=False)
        for note in p["notes"]:
            out.print(f"   [yellow]note:[/] {shown(note)}", soft_wrap=True, highlight=False)
    _print_budgets(result, labels)


def _print_budgets(result: dict[str, Any], labels: dict[int, str]) -> None:
    """At each chosen budget: each run's metrics (or why it has none there), then each pair's differences."""
    if not result["at"]:
        return
    out.print("[dim]at chosen budgets, from each run's anytime trajectories: an example counts what it had "
              "answered by then; descriptive (more looks: no verdict)[/]", soft_wrap=True)
    for i, r in enumerate(result["runs"]):
        for note in r["anytime"]["notes"]:
            out.print(f"   [yellow]note:[/] {labels[i]}: {shown(note)}", soft_wrap=True, highlight=False)
    for at in result["at"]:
        where = spent(at["budget"], at["axis"])
        out.print(f"[bold]at {where}[/]", soft_wrap=True, highlight=False)
        for i, entry in enumerate(at["runs"]):
            figures = (" · ".join(f"{shown(m)} {interval(e)}" for m, e in entry["metrics"].items()) or "no metrics") \
                if entry["metrics"] is not None else shown(entry["note"])
            out.print(f"   {labels[i]} {figures}", soft_wrap=True, highlight=False)
        for p in at["pairs"]:
            diffs = " · ".join(f"{shown(m)} {shown(said(d))}" for m, d in p["differences"].items())
            out.print(f"   {labels[p['b']]} − {labels[p['a']]}: {diffs or 'no difference to judge here'}",
                      soft_wrap=True, highlight=False)


def _fig(value: float | None, digits: int) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"
