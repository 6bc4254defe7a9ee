"""The tree-search kernel shared by ThoughtSculpt, Tree of Thoughts and Self-Refine.

In llm-reasoners' terms: ``world`` is what is searched (one problem and the
task's :class:`~thoughtloom.core.protocols.SearchTask` view of it);
``generator`` and ``evaluator`` are how thoughts are proposed and judged
(each a class a strategy picks once: revising or Tree-of-Thoughts generator,
model or symbolic evaluator; every batch is one ``lm.generate``); ``tree``
holds the nodes; ``scaffold`` is the :class:`~.scaffold.TreeSearch` base that
runs a strategy's control loop (its ``loop``) inside one run's :class:`~.scaffold.SearchRun`
state, its budget stop and its result. ``dfs`` is the pruned, backtracking
depth-first loop that ``sculpt-dfs-backtrack`` and ``tot-dfs`` share; ``reading`` reads the
evaluator's replies; ``budget`` cuts a batch to the calls left.

The strategies themselves: ``sculpt/`` (``sculpt-mcts``, ``sculpt-dfs``, ``sculpt-dfs-backtrack``),
``baselines/tot.py`` (``tot-bfs``, ``tot-dfs``), ``baselines/self_refine.py``.
"""
