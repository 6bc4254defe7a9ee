"""Where an eval's examples run: ``--executor local|ray``, ``--ray-address``, ``--workers``.

``eval`` and ``reproduce`` take these options. With ``ray``, no model
opens in this process: each Ray actor is sent the run's
:class:`~thoughtloom.eval.assembly.RunSpec` and opens its own services from
it, and the driver only sends examples and writes records
(:mod:`thoughtloom.eval.ray_executor`).
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from ..core.errors import ConfigError
from ..eval.assembly import RunSpec
from ..eval.executors import Executor

EXECUTORS = ("local", "ray")

ExecutorName = Annotated[str, typer.Option(
    "--executor", help="Where examples run: local (this process, --concurrency at a time) or ray (--workers "
                       "Ray actors, --concurrency at a time each; needs pip install \"thoughtloom[ray]\").")]
RayAddress = Annotated[Optional[str], typer.Option(
    "--ray-address", help="Ray cluster to join: auto (the one `ray start` made here), HOST:PORT of its head, "
                          "or ray://HOST:PORT (Ray Client). Default: a cluster of this machine, started for the run.")]
Workers = Annotated[int, typer.Option(
    "--workers", min=1, help="Ray actors (--executor ray); each opens its own model, retriever and judge.")]

def executor(name: str, spec: RunSpec, address: str | None, workers: int) -> Executor | None:
    """The executor for ``--executor``; None for local (the caller opens the model here)."""
    if name not in EXECUTORS:
        raise ConfigError(f"unknown --executor {name!r}", hint=f"use one of {', '.join(EXECUTORS)}")
    if name == "local":
        if address is not None:
            raise ConfigError("--ray-address needs --executor ray")
        return None
    from ..eval.ray_executor import RayExecutor, import_ray

    import_ray()  # a missing extra is one line now, before anything starts
    spec.check_model()  # a bad --model is one line here, not a failure on every worker
    return RayExecutor(spec, workers=workers, address=address)
