"""``thoughtloom cache merge SRC... --into DST``: join completion caches into one file.

A Ray run across several nodes leaves one cache file per node (each actor
writes the ``--cache`` path on its own machine); merged into one, the run
replays later from that file alone (``--replay``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..core.errors import ConfigError
from ..lm import CompletionStore
from .render import out


def merge(
    sources: Annotated[list[Path], typer.Argument(
        metavar="SRC", help="Cache files to copy from (e.g. one per node).", show_default=False)],
    into: Annotated[Path, typer.Option("--into", metavar="DST", help="Cache file to copy into (created if absent).")],
) -> None:
    """Join cache files (say one per node of a Ray run) into DST; an entry DST already has is kept."""
    def say(line: str) -> None:
        out.print(line, highlight=False, markup=False, soft_wrap=True)

    missing = [str(src) for src in sources if not src.expanduser().is_file()]
    if missing:
        raise ConfigError(f"cache file not found: {', '.join(missing)}", hint="check the paths")
    store = CompletionStore(into)
    try:
        for src in sources:
            n = store.merge(src)
            kept = f", {n['differing']} differing (kept the earlier answer)" if n["differing"] else ""
            say(f"{src}: {n['added']} added, {n['same']} already there{kept}")
        say(f"{store.path}: {store.stats()['entries']} entries")
    finally:
        store.close()
