"""The strategy registry: each strategy by name, for the CLI, the eval runner and ``strategies.build``.

:func:`register` names a strategy class; :func:`get` and :func:`available`
first import the built-in strategies' modules (:data:`BUILTIN_MODULES`), so
importing :mod:`thoughtloom.strategies` stays cheap.
"""

from __future__ import annotations

import importlib

from ..core.names import unknown
from .interface import Strategy

#: The modules of the built-in strategies, imported on first use of :func:`get` / :func:`available`.
BUILTIN_MODULES = (
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

_REGISTRY: dict[str, type[Strategy]] = {}


def register(name: str, *, again: bool = False):
    """Names ``cls``; a name another class holds is refused, unless ``again`` and that class is
    this one loaded anew (the same module and qualified name: a user's file imported twice)."""
    def deco(cls: type[Strategy]) -> type[Strategy]:
        old = _REGISTRY.get(name)
        if again and old is not None and (old.__module__, old.__qualname__) == (cls.__module__, cls.__qualname__):
            old = cls
        if old is not None and old is not cls:
            raise ValueError(f"strategy {name!r} is registered twice")
        cls.name = name
        _REGISTRY[name] = cls
        return cls

    return deco


def _load_builtins() -> None:
    for module in BUILTIN_MODULES:
        importlib.import_module(module)


def get(name: str) -> type[Strategy]:
    _load_builtins()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise unknown("strategy", name, available()) from None


def available() -> list[str]:
    _load_builtins()
    return sorted(_REGISTRY)
