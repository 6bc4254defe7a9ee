"""ThoughtSculpt (Chi, Yang, Klein 2024): search over revisable thoughts.

``mcts`` (``sculpt-mcts``, Algorithm 1) and ``dfs`` (``sculpt-dfs``, Algorithm 2's
greedy descent, and the ``sculpt-dfs-backtrack`` variant) add their control
loops to the tree-search kernel in :mod:`thoughtloom.strategies.treesearch`
(tree, generator, evaluator, the ``TreeSearch`` base), which the Tree of
Thoughts and Self-Refine baselines share.
"""
