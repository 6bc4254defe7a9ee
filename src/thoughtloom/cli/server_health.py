"""When a failing server pauses an eval: ``--server-failures``, ``--server-silence``, ``--server-wait``.

The circuit breaker (:mod:`thoughtloom.eval.breaker`): a call whose retries
are spent costs its example (an error record, rerun by ``--retry-errors``)
while other examples succeed; after ``--server-failures`` examples in a row
fail on the server, or ``--server-silence`` seconds with failures and no
answered example, new examples pause and the server is probed with growing
pauses until it answers, for at most ``--server-wait`` seconds. Defaults:
:class:`~thoughtloom.eval.breaker.BreakerSettings` (chosen from the soak
benchmark, ``benchmarks/soak.py``; see the README).
"""

from __future__ import annotations

from typing import Annotated

import typer

from ..eval.breaker import BreakerSettings

DEFAULTS = BreakerSettings()

ServerFailures = Annotated[int, typer.Option(
    "--server-failures", min=1,
    help="Examples in a row failing on the server (retries spent) before new examples pause and the server "
         "is probed; an isolated failure is that example's error.")]
ServerSilence = Annotated[float, typer.Option(
    "--server-silence", min=0.001,
    help="Or: seconds with failures and no example answered before the pause.")]
ServerWait = Annotated[float, typer.Option(
    "--server-wait", min=0.0,
    help="Seconds to keep probing a paused server before the eval stops (finished records are kept; "
         "the same command resumes).")]


def settings(failures: int, silence_s: float, wait_s: float) -> BreakerSettings:
    return BreakerSettings(trip_after=failures, silence_s=silence_s, max_wait_s=wait_s)
