"""Reasoning strategies, addressed by name through a registry.

Built-in strategies register on first use of :func:`get` / :func:`available`,
so importing this package stays cheap.
"""

from __future__ import annotations

import importlib

from .base import Context, Result, Strategy, available, get, make_config, register

_BUILTIN_MODULES = (
    "thoughtloom.strategies.baselines.direct",
    "thoughtloom.strategies.sculpt.mcts",
    "thoughtloom.strategies.sculpt.dfs",
    "thoughtloom.strategies.baselines.tot",
    "thoughtloom.strategies.baselines.self_refine",
    "thoughtloom.strategies.decomp.strategy",
    "thoughtloom.strategies.hgot.strategy",
    "thoughtloom.strategies.baselines.retrieval",
    "thoughtloom.strategies.baselines.react",
)


def _load_builtins() -> None:
    for module in _BUILTIN_MODULES:
        importlib.import_module(module)


__all__ = ["Context", "Result", "Strategy", "available", "get", "make_config", "register"]
