"""ThoughtSculpt with depth-first search (``sculpt-dfs``): the kernel's
depth-first loop (:mod:`thoughtloom.strategies.treesearch.dfs`) over
children that may revise any part of their parent. ``tot-dfs``, the same
search over extensions only, is in :mod:`thoughtloom.strategies.baselines.tot`.
"""

from __future__ import annotations

from ..base import register
from ..treesearch.dfs import DepthFirst


@register("sculpt-dfs")
class SculptDFS(DepthFirst):
    """ThoughtSculpt: greedy depth-first search with pruning, backtracking and revision."""

    paper = "ThoughtSculpt"
    algorithm = "dfs"
