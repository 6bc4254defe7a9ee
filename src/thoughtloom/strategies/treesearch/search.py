"""Moved: the tree strategies' base is :mod:`.scaffold` (``search`` names retrieval, ``Context.search``).

This module re-exports its names for code written against the old path; nothing in the package imports it.
"""

from .scaffold import SearchConfig, SearchRun, TreeSearch, report

__all__ = ["SearchConfig", "SearchRun", "TreeSearch", "report"]
