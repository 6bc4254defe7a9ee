"""ThoughtSculpt (Chi, Yang, Klein 2024): search over revisable thoughts.

``search`` (one run's state: generator and evaluator batches), ``mcts`` and
``dfs``; the tree, the task view and the evaluator's reply reading are in
:mod:`thoughtloom.strategies.treesearch`.
"""
