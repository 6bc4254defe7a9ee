"""The names ``thoughtloom.strategies.base`` held before it was split, kept so code written
against it still imports (nothing in the package imports this module).

New code imports ``Context``, ``Result``, ``Strategy`` and ``register`` from
:mod:`thoughtloom.strategies`, and the rest from the module that holds it:

- :mod:`.interface`: ``Strategy`` (a strategy writes ``solve``; ``run`` wraps it),
  ``NoConfig``, ``NEEDS``, ``DEFAULT_MAX_CALLS``;
- :mod:`.registry`: ``register``, ``get``, ``available``;
- :mod:`.context`: ``Context``; :mod:`.result`: ``Result``, ``SoFar``;
- :mod:`.prompting`: ``LAYOUTS``, ``check_layout``, ``LayoutChecked``, ``demo_turn``,
  ``render_demos``, ``few_shot``, ``finished``;
- :mod:`.vote`: ``vote_samples``; :mod:`thoughtloom.lm.meter`: ``CallCap``.
"""

from __future__ import annotations

from ..lm.meter import CallCap
from .context import Context
from .interface import DEFAULT_MAX_CALLS, NEEDS, NoConfig, Strategy
from .prompting import LAYOUTS, LayoutChecked, check_layout, demo_turn, few_shot, finished, render_demos
from .registry import available, get, register
from .result import Result, SoFar
from .vote import vote_samples

__all__ = ["DEFAULT_MAX_CALLS", "LAYOUTS", "NEEDS", "CallCap", "Context", "LayoutChecked", "NoConfig", "Result",
           "SoFar", "Strategy", "available", "check_layout", "demo_turn", "few_shot", "finished", "get",
           "register", "render_demos", "vote_samples"]
