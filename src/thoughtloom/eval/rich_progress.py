"""Ready-made live progress displays (rich), for the CLI and for notebooks.

- :class:`RichStatus`: one transient line for one question -- spinner,
  phase, calls, tokens, elapsed -- updated at every model call and phase
  change. It is a progress hook (call it with a
  :class:`~thoughtloom.core.progress.ProgressUpdate`), so it goes wherever
  ``progress=`` takes one::

      with RichStatus() as status:
          answered = await run_problem(strategy, task, problem, resources, settings, progress=status)

- :class:`RichProgress`: an eval's bar (an :class:`~.progress.Progress`):
  done/total, running score, calls and tokens of finished *and* running
  questions, the latest question's phase, an ETA.

Both draw on stderr by default. Where it is not a terminal (a file, a pipe,
a CI log) there is no animation: :class:`RichStatus` writes nothing and
:class:`RichProgress` prints its final line once. In Jupyter rich renders
them as live widgets.
"""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn,
                           TimeElapsedColumn)

from ..core.progress import ProgressUpdate
from ..core.text import printable
from .progress import RunStats


def clock(seconds: float) -> str:
    """``seconds`` as h:mm:ss."""
    whole = max(0, int(round(seconds)))
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


def counters(calls: int, cached: int, tokens: int, in_flight: int = 0) -> str:
    """"12 calls (3 cached), 5 in flight · 4,567 tok"."""
    return (f"{calls} call{'' if calls == 1 else 's'}" + (f" ({cached} cached)" if cached else "")
            + (f", {in_flight} in flight" if in_flight else "") + f" · {tokens:,} tok")


def status_line(update: ProgressUpdate, idle: str = "starting") -> str:
    """One question's progress as rich markup: its phase, then its counters."""
    phase = escape(printable(update.phase or idle))
    return f"[bold]{phase}[/] · {counters(update.calls, update.cached_calls, update.total_tokens, update.in_flight)}"


class RichStatus:
    """A transient one-line status of one question; a progress hook (see the module doc).

    Draws only on a terminal or in Jupyter: elsewhere (a pipe, a file) it
    writes nothing at all. ``idle`` is shown until the strategy names a phase.
    """

    def __init__(self, console: Console | None = None, idle: str = "starting") -> None:
        self.idle = idle
        console = console or Console(stderr=True)
        self._bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                             console=console, transient=True) \
            if console.is_terminal or console.is_jupyter else None
        self._task: Any = None

    def __enter__(self) -> "RichStatus":
        if self._bar is not None:
            self._bar.__enter__()
            self._task = self._bar.add_task(f"[bold]{escape(self.idle)}[/]", total=None)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)

    def __call__(self, update: ProgressUpdate) -> None:
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, description=status_line(update, self.idle))


class RichProgress:
    """An eval's bar on stderr: done/total, running score, calls and tokens, phase, ETA, elapsed.

    ``label`` names the bar (e.g. a suite's task/strategy when one command runs several evals).
    """

    def __init__(self, metric: str, console: Console | None = None, label: str = "eval") -> None:
        self.metric, self.label = metric, label
        self._bar = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[info]}"),
            TimeElapsedColumn(),
            console=console or Console(stderr=True),
            transient=False,
        )
        self._task: Any = None
        self._t0 = time.perf_counter()
        self._latest: ProgressUpdate | None = None  # the running question heard from last
        self._recorded = False  # a record was written while the bar showed

    def __enter__(self) -> "RichProgress":
        return self  # the bar shows from start(): a run refused before it starts prints only its error

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if self._task is not None:
            if exc_type is not None and not self._recorded:  # a run that failed before its first record
                self._bar.live.transient = True  # the bar goes, and no blank line: it prints only its error
                self._bar.live.stop()
            else:
                self._bar.stop()

    def start(self, stats: RunStats) -> None:
        self._bar.start()
        self._t0 = time.perf_counter()
        self._task = self._bar.add_task(escape(self.label), total=stats.total, completed=stats.done,
                                        info=self.info(stats))

    def live(self, update: ProgressUpdate, stats: RunStats) -> None:
        self._latest = update
        self._bar.update(self._task, info=self.info(stats))

    def update(self, record: dict[str, Any], stats: RunStats) -> None:
        self._recorded = True
        self._bar.update(self._task, completed=stats.done, info=self.info(stats))

    def refresh(self, stats: RunStats) -> None:
        """The bar's text again (the runner calls it while the server fails)."""
        self._bar.update(self._task, info=self.info(stats))

    def info(self, stats: RunStats, elapsed_s: float | None = None) -> str:
        """The bar's text: score, counters, problems, the latest running question, ETA."""
        score = stats.running_metric
        shown = f"{self.metric} {score:.3f}" if score is not None else f"{self.metric} -"
        u = stats.usage_so_far()
        latest = self._latest if self._latest is not None and self._latest.question in stats.running else None
        eta = stats.eta_s(time.perf_counter() - self._t0 if elapsed_s is None else elapsed_s)
        parts = [shown, counters(u.calls, u.cached_calls, u.total_tokens, stats.in_flight)]
        parts += [f"[red]{stats.errors} errors[/]"] if stats.errors else []
        parts += [f"[yellow]{stats.truncated} truncated[/]"] if stats.truncated else []
        parts += [f"[yellow]{stats.budget_stopped} out of budget[/]"] if stats.budget_stopped else []
        server = stats.server.status() if stats.server is not None else ""
        parts += [f"[yellow]{escape(server)}[/]"] if server else []
        if latest is not None:
            parts.append(f"{escape(printable(str(latest.question)))}: {escape(printable(latest.phase or 'starting'))}")
        parts.append(f"ETA {clock(eta) if eta is not None else '-'}")
        return " · ".join(parts)
