"""Reasoning strategies, addressed by name through a registry.

Built-in strategies register on first use of :func:`get` / :func:`available`,
so importing this package stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any, Mapping

from ..core.errors import ConfigError
from ..core.options import check_options
from ..core.protocols import TaskView
from .base import Strategy, available, get, register
from .config import make_config, option_sources
from .context import Context
from .result import Result

_BUILTIN_MODULES = (
    "thoughtloom.strategies.baselines.direct",
    "thoughtloom.strategies.sculpt.mcts",
    "thoughtloom.strategies.sculpt.dfs",
    "thoughtloom.strategies.baselines.tot",
    "thoughtloom.strategies.baselines.self_refine",
    "thoughtloom.strategies.decomp.strategy",
    "thoughtloom.strategies.hgot.strategy",
    "thoughtloom.strategies.baselines.retrieval",
    "thoughtloom.strategies.baselines.dsp",
    "thoughtloom.strategies.baselines.react",
)


def _load_builtins() -> None:
    for module in _BUILTIN_MODULES:
        importlib.import_module(module)


def build(name: str, options: Mapping[str, Any] | None = None, task: TaskView | None = None) -> Strategy:
    """The strategy ``name`` with ``options`` (``--set`` strings or typed
    values), type- and range-checked before any model call. A tree strategy
    built for ``task`` takes the task's search settings for the options not
    in ``options``; ``Strategy.sources`` says where each value came from."""
    cls = get(name)
    options = options or {}
    try:
        config = make_config(cls, options, task)
    except (TypeError, ValueError) as exc:  # a config's own __post_init__ check
        raise ConfigError(f"bad option for {name}: {exc}") from None
    check_options(config, owner=name)
    strategy = cls(config)
    strategy.sources = option_sources(cls, options, task)
    return strategy


__all__ = ["Context", "Result", "Strategy", "available", "build", "get", "make_config", "option_sources", "register"]
