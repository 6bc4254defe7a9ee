"""``thoughtloom data``: what each task reads, the sample shipped with it, where the full set is.

``data list`` describes every task (:data:`thoughtloom.tasks.datasets.CATALOGUE`):
the file format ``--data`` takes, the packaged sample (examples, licence,
path) that ``eval`` uses without ``--data``, where the full set comes from
and the commands that fetch it and point ``--data`` at it. ``data path TASK``
prints the sample's path, e.g. for ``index build --corpus``.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.markup import escape

from .. import tasks
from ..tasks.datasets import CATALOGUE, TaskData, sample_path
from .render import count, out

data_app = typer.Typer(help="The data each task reads: packaged samples and where the full sets are.",
                       no_args_is_help=True)


def describe(info: TaskData) -> dict[str, Any]:
    """One task's entry, as ``data list --json`` prints it."""
    sample = None
    if info.sample is not None:
        path = sample_path(info.task)
        sample = {"path": str(path), "examples": len(tasks.get(info.task).load(path)), "licence": info.licence}
    return {"task": info.task, "format": info.format, "sample": sample, "full_set": info.full_set,
            "get": list(info.get), "note": info.note}


@data_app.command("list")
def list_data(as_json: Annotated[bool, typer.Option("--json", help="Print the list as JSON.")] = False) -> None:
    """Each task's data format, packaged sample and full set (and how to point --data at it)."""
    entries = [describe(CATALOGUE[name]) for name in tasks.available()]
    if as_json:
        out.print_json(json.dumps(entries))
        return
    for e in entries:
        out.print(f"[bold]{e['task']}[/]", highlight=False)
        for label, text in _lines(e):
            out.print(f"  {label:<9} {escape(text)}", highlight=False, soft_wrap=True)


def _lines(entry: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, text) rows of one task's block in ``data list``."""
    sample = entry["sample"]
    if sample is not None:
        held = (f"{count(sample['examples'], 'example')} ({sample['licence']}), used when --data is omitted: "
                f"{sample['path']}")
    else:
        held = f"none ({entry['note']})" if entry["note"] else "none"
    rows = [("format:", entry["format"]), ("sample:", held), ("full set:", entry["full_set"])]
    rows += [("get:" if i == 0 else "", line) for i, line in enumerate(entry["get"])]
    return rows


@data_app.command("path")
def data_path(task: Annotated[str, typer.Argument(help="Task name (see `thoughtloom data list`).")]) -> None:
    """Print the path of a task's packaged sample (a file, or a folder the task reads)."""
    tasks.get(task)  # an unknown task is named as such
    out.print(str(sample_path(task)), highlight=False, soft_wrap=True, markup=False)
