"""ThoughtSculpt (Chi, Yang, Klein 2024): search over revisable thoughts.

``mcts`` (``sculpt-mcts``) and ``dfs`` (``sculpt-dfs``) add their control
loops to the tree-search kernel in :mod:`thoughtloom.strategies.treesearch`
(tree, generator, evaluator, the ``TreeSearch`` base), which the Tree of
Thoughts and Self-Refine baselines share.
"""
