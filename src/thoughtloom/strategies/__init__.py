"""Reasoning strategies, addressed by name through a registry.

The names a strategy's author needs: :class:`Strategy` (write ``solve``;
callers call ``run``, see :mod:`.interface`), :class:`Result`, the
per-question :class:`Context` (:mod:`.context`) and :func:`register`
(:mod:`.registry`). Built-in strategies register on first use of
:func:`get` / :func:`available`, so importing this package stays cheap.
Prompt layouts and few-shot are in :mod:`.prompting`, voting over samples in
:mod:`.vote`, options in :mod:`.config`.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..core.errors import ConfigError
from ..core.protocols import TaskView
from .config import make_config, option_sources, resolve_options
from .context import ROLES, Context, check_role
from .interface import Strategy, declares_max_calls
from .registry import available, get, register
from .result import Result


def build(name: str, options: Mapping[str, Any] | None = None, task: TaskView | None = None, *,
          max_calls: int | None = None) -> Strategy:
    """The strategy ``name`` with ``options`` (``--set`` strings, TOML or
    keyword values), coerced to each option's declared type and checked
    against its declared bounds and choices before any model call
    (:mod:`thoughtloom.core.options`). A tree strategy
    built for ``task`` takes the task's search settings for the options not
    in ``options``; ``Strategy.sources`` says where each value came from.
    ``max_calls`` (the run's call budget, when its caller was given one) is
    also the strategy's own cap where it has that option and ``options`` do
    not set it: one number bounds a question's calls, from the CLI and the
    API alike."""
    cls = get(name)
    options = dict(options or {})
    if max_calls is not None and "max_calls" not in options and declares_max_calls(cls.Config):
        options["max_calls"] = max_calls
    resolved = resolve_options(cls, options)  # once: the preset expanded, for the config and its sources
    try:
        config = make_config(cls, options, task, resolved)
    except (TypeError, ValueError) as exc:  # a user's config with a __post_init__ check of its own
        raise ConfigError(f"bad option for {name}: {exc}") from None
    strategy = cls(config)
    strategy.sources = option_sources(cls, options, task, resolved)
    return strategy


__all__ = ["ROLES", "Context", "Result", "Strategy", "available", "build", "check_role", "get", "make_config",
           "option_sources", "register"]
