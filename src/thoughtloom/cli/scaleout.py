"""Where an eval's examples run: ``--executor local|ray``, ``--ray-address``, ``--workers``.

``eval`` takes these options (and a suite run can take the same ones). With
``ray``, no model opens in this process: each Ray actor opens its own from
the run options (:func:`worker_services`), and the driver only sends
examples and writes records (:mod:`thoughtloom.eval.ray_executor`).
"""

from __future__ import annotations

import functools
import os
from typing import Annotated, Optional

import typer

from ..core.errors import ConfigError
from ..eval.executors import Executor
from ..eval.runner import EvalResources
from ..lm import ModelSpec
from .options import RunOptions

EXECUTORS = ("local", "ray")

ExecutorName = Annotated[str, typer.Option(
    "--executor", help="Where examples run: local (this process, --concurrency at a time) or ray (--workers "
                       "Ray actors, --concurrency at a time each; needs pip install \"thoughtloom[ray]\").")]
RayAddress = Annotated[Optional[str], typer.Option(
    "--ray-address", help="Ray cluster to join: auto (the one `ray start` made here), HOST:PORT of its head, "
                          "or ray://HOST:PORT (Ray Client). Default: a cluster of this machine, started for the run.")]
Workers = Annotated[int, typer.Option(
    "--workers", min=1, help="Ray actors (--executor ray); each opens its own model, retriever and judge.")]

#: Variables the actors need and a node may lack (read by :func:`.options.build_lm`).
WORKER_ENV = ("THOUGHTLOOM_API_KEY", "OPENAI_API_KEY")


def worker_services(opts: RunOptions, concurrency: int) -> EvalResources:
    """What one Ray actor runs its examples on, opened on the actor from the run options."""
    return opts.resources(opts.lm(concurrency))


def executor(name: str, opts: RunOptions, concurrency: int, address: str | None, workers: int) -> Executor | None:
    """The executor for ``--executor``; None for local (the caller opens the model here)."""
    if name not in EXECUTORS:
        raise ConfigError(f"unknown --executor {name!r}", hint=f"use one of {', '.join(EXECUTORS)}")
    if name == "local":
        if address is not None:
            raise ConfigError("--ray-address needs --executor ray")
        return None
    from ..eval.ray_executor import RayExecutor, import_ray

    import_ray()  # a missing extra is one line now, before anything starts
    ModelSpec.parse(opts.model)  # a bad --model is one line here, not a failure on every worker
    env = {name: os.environ[name] for name in WORKER_ENV if os.environ.get(name)}
    return RayExecutor(functools.partial(worker_services, opts, concurrency), workers=workers, address=address,
                       env=env)
