"""The tree-search kernel shared by ThoughtSculpt, Tree of Thoughts and Self-Refine.

In llm-reasoners' terms: ``world`` is what is searched (one problem and the
task's :class:`~thoughtloom.core.protocols.SearchTask` view of it); a
generator, an evaluator and a search algorithm are how thoughts are
proposed, how good they are and how we search: three parts, each a protocol
with a registry (:mod:`.parts`; the search algorithm's beside the run, in
``scaffold``), made once per strategy from its config or passed in, and
keeping no run state (``generator``: revising or Tree-of-Thoughts;
``evaluator``: model or symbolic; every batch is one ``lm.generate``).
``tree`` holds the nodes; ``scaffold`` is the :class:`~.scaffold.TreeSearch`
base that runs the search algorithm's control loop inside one run's
:class:`~.scaffold.SearchRun` state, its budget stop and its result. ``dfs``
is the pruned, backtracking depth-first loop (``dfs-backtrack``) that
``sculpt-dfs-backtrack`` and ``tot-dfs`` share; ``reading`` reads the
evaluator's replies; ``budget`` cuts a batch to the calls left.

The strategies themselves: ``sculpt/`` (``sculpt-mcts``, ``sculpt-dfs``, ``sculpt-dfs-backtrack``),
``baselines/tot.py`` (``tot-bfs``, ``tot-dfs``), ``baselines/self_refine.py``.
"""
