"""ThoughtSculpt (Chi, Yang, Klein 2024): search over revisable thoughts.

``tree`` (nodes, backpropagation, JSON dump), ``view`` (what the search asks
of a task), ``evaluator`` (reading scores and feedback), ``search`` (one
run's state: generator and evaluator batches), ``mcts`` and ``dfs``.
"""
