"""A tree search rebuilt from its trace (sculpt-mcts, sculpt-dfs, tot-bfs, tot-dfs, self-refine).

Every node joins with a ``tree_node`` event (id, parent, depth, how it
changed its parent, the candidate) and gets its verdict from ``tree_eval``;
visits and values are the sum of ``tree_backprop`` events (the virtual
losses of leaf-parallel MCTS are taken back before any is traced). Children
that never joined are kept beside their parent as :class:`Rejected`: a
duplicate or forbidden revision (``tree_rejected``), or a reply that could
not be read (``malformed`` with ``what: tree_child``). The answer is
``tree_answer``; its ``path`` is the chosen path (older traces: the
parents of the chosen node).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

TREE_EVENTS = ("tree_node", "tree_eval", "tree_backprop", "tree_answer")


@dataclass
class TreeNode:
    id: int
    parent: int | None
    depth: int
    kind: str  # root, extended or revised
    candidate: str
    simulated: bool = False
    score: float | None = None
    feedback: str = ""
    evaluator: str = ""
    items: list[Any] = field(default_factory=list)
    visits: int = 0
    value_sum: float = 0.0
    selected: int = 0  # times MCTS selected it to grow
    pruned: bool = False
    children: list[int] = field(default_factory=list)

    @property
    def mean_value(self) -> float | None:
        return self.value_sum / self.visits if self.visits else None


@dataclass(frozen=True)
class Rejected:
    """A child that did not join the tree, and why."""

    parent: int | None
    reason: str
    candidate: str


@dataclass
class SearchTree:
    nodes: dict[int, TreeNode] = field(default_factory=dict)
    rejected: list[Rejected] = field(default_factory=list)
    chosen: int | None = None
    path: list[int] = field(default_factory=list)
    answer: Any = None

    @property
    def root(self) -> TreeNode | None:
        return next((n for n in self.nodes.values() if n.parent is None), None)

    def preorder(self) -> list[TreeNode]:
        """Root first, each node followed by its subtree, children in the order they joined."""
        out: list[TreeNode] = []
        stack = [n.id for n in self.nodes.values() if n.parent is None or n.parent not in self.nodes][::-1]
        while stack:
            node = self.nodes[stack.pop()]
            out.append(node)
            stack.extend(reversed(node.children))
        return out


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def search_tree(events: Iterable[dict[str, Any]]) -> SearchTree | None:
    """The tree the events describe, or None when they hold no tree search."""
    tree = SearchTree()
    for e in events:
        kind = e.get("type")
        node = tree.nodes.get(_int(e.get("node")))  # type: ignore[arg-type]
        if kind == "tree_node" and _int(e.get("node")) is not None:
            nid, parent = int(e["node"]), _int(e.get("parent"))
            tree.nodes[nid] = TreeNode(nid, parent, _int(e.get("depth")) or 0, str(e.get("kind", "")),
                                       str(e.get("candidate", "")), bool(e.get("simulated")))
            if parent in tree.nodes:
                tree.nodes[parent].children.append(nid)
        elif kind == "tree_eval" and node is not None:
            node.score, node.feedback = _float(e.get("score")), str(e.get("feedback") or "")
            node.evaluator = str(e.get("evaluator") or "")
            node.items = e.get("items") if isinstance(e.get("items"), list) else []
        elif kind == "tree_backprop":
            reward = _float(e.get("reward")) or 0.0
            for nid in e.get("path") or []:
                if _int(nid) in tree.nodes:
                    tree.nodes[nid].visits += 1
                    tree.nodes[nid].value_sum += reward
        elif kind == "tree_select" and node is not None:
            node.selected += 1
        elif kind == "tree_prune" and node is not None:
            node.pruned = True
        elif kind == "tree_rejected":
            tree.rejected.append(Rejected(_int(e.get("parent")), str(e.get("reason", "")),
                                          str(e.get("candidate", ""))))
        elif kind == "malformed" and e.get("what") == "tree_child":
            tree.rejected.append(Rejected(_int(e.get("parent")), f"unreadable ({e.get('reason', '')})",
                                          str(e.get("raw", ""))))
        elif kind == "tree_answer":
            tree.chosen, tree.answer = _int(e.get("node")), e.get("answer")
            path = e.get("path")
            tree.path = [p for p in path if _int(p) is not None] if isinstance(path, list) else []
    if not tree.nodes:
        return None
    if tree.chosen in tree.nodes and not tree.path:  # a trace from before tree_answer had a path
        tree.path = _ancestry(tree, tree.chosen)
    return tree


def _ancestry(tree: SearchTree, node_id: int) -> list[int]:
    path, seen = [node_id], {node_id}
    while (parent := tree.nodes[path[-1]].parent) in tree.nodes and parent not in seen:
        path.append(parent)
        seen.add(parent)
    return path[::-1]
