"""The search tree: thought nodes holding candidate solutions.

A tree lives inside one run (a local variable of ``Strategy.solve``), never on
the strategy object, so any number of searches can run at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...core.trace import Trace


@dataclass
class Node:
    """One thought: a (possibly partial) candidate and what we know of it.

    ``score`` is the evaluator's v(x) in [0, 1] (None until evaluated);
    ``visits`` and ``value_sum`` are MCTS statistics; ``kind`` says how the
    node came from its parent: 'root', 'extended' or 'revised'.
    """

    id: int
    candidate: str
    parent: int | None = None
    depth: int = 0
    kind: str = "root"
    score: float | None = None
    feedback: str = ""
    items: list[dict[str, Any]] = field(default_factory=list)
    evaluator: str = ""  # 'model', 'symbolic' or 'malformed'
    salvaged: bool = False  # the model's score was read in part from a malformed reply
    visits: int = 0
    value_sum: float = 0.0
    children: list[int] = field(default_factory=list)
    expanded: bool = False
    simulated: bool = False

    @property
    def mean_value(self) -> float | None:
        return self.value_sum / self.visits if self.visits else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "parent": self.parent, "depth": self.depth, "kind": self.kind,
            "candidate": self.candidate, "score": self.score, "feedback": self.feedback,
            "items": self.items, "evaluator": self.evaluator, "salvaged": self.salvaged, "visits": self.visits,
            "mean_value": None if self.mean_value is None else round(self.mean_value, 6),
            "children": list(self.children), "expanded": self.expanded, "simulated": self.simulated,
        }


class Tree:
    """Nodes by id; every addition and evaluation is traced as it happens."""

    def __init__(self, trace: Trace | None = None) -> None:
        self.nodes: list[Node] = []
        self._trace = trace

    @property
    def root(self) -> Node:
        return self.nodes[0]

    def add(self, candidate: str, parent: Node | None = None, kind: str = "root",
            simulated: bool = False) -> Node:
        node = Node(id=len(self.nodes), candidate=candidate,
                    parent=None if parent is None else parent.id,
                    depth=0 if parent is None else parent.depth + 1,
                    kind=kind, simulated=simulated)
        self.nodes.append(node)
        if parent is not None:
            parent.children.append(node.id)
        if self._trace is not None:
            self._trace.emit("tree_node", node=node.id, parent=node.parent, depth=node.depth,
                             kind=kind, simulated=simulated, candidate=candidate)
        return node

    def scored(self, node: Node) -> None:
        if self._trace is not None:
            self._trace.emit("tree_eval", node=node.id, score=node.score, feedback=node.feedback,
                             evaluator=node.evaluator, items=node.items)

    def children(self, node: Node) -> list[Node]:
        return [self.nodes[i] for i in node.children]

    def path(self, node: Node) -> list[Node]:
        """Root ... node."""
        out = [node]
        while out[-1].parent is not None:
            out.append(self.nodes[out[-1].parent])
        return out[::-1]

    def backpropagate(self, node: Node, reward: float, *, include_node: bool = True) -> None:
        """Add one visit and ``reward`` to each ancestor of ``node`` up to the root, and to
        ``node`` itself unless ``include_node`` is False (its own evaluation was this visit)."""
        path = self.path(node) if include_node else self.path(node)[:-1]
        self._visit(node, reward, path)

    def first_visit(self, node: Node) -> None:
        """Count ``node``'s own evaluation as its first visit: one visit with reward v(x), on it alone."""
        if node.score is not None:
            self._visit(node, node.score, [node], evaluation=True)

    def _visit(self, node: Node, reward: float, path: list[Node], **flags: bool) -> None:
        for n in path:
            n.visits += 1
            n.value_sum += reward
        if self._trace is not None:
            self._trace.emit("tree_backprop", node=node.id, reward=reward, path=[n.id for n in path], **flags)

    def best_by_score(self) -> Node:
        """Highest evaluator score; ties go to the deeper (more worked) node, then the earlier."""
        scored = [n for n in self.nodes if n.score is not None] or self.nodes
        return max(scored, key=lambda n: (n.score or 0.0, n.depth, -n.id))

    def best_by_value(self) -> Node:
        """The highest evaluator score v(x) among every evaluated node, ties by the highest average
        reward (a node not yet visited: its own score), then depth, then the earlier (MCTS's
        ``answer: score``)."""
        scored = [n for n in self.nodes if n.score is not None] or self.nodes
        return max(scored, key=lambda n: (n.score or 0.0, round(_mean_or_score(n), 9), n.depth, -n.id))

    def best_by_mean(self) -> Node:
        """The highest average reward among every evaluated node (a node not yet visited: its own
        score), ties by v(x), then depth, then the earlier (MCTS's default ``answer: mean``, §3.3)."""
        scored = [n for n in self.nodes if n.score is not None] or self.nodes
        return max(scored, key=lambda n: (round(_mean_or_score(n), 9), n.score or 0.0, n.depth, -n.id))

    def to_json(self) -> list[dict[str, Any]]:
        return [n.as_dict() for n in self.nodes]


def _mean_or_score(node: Node) -> float:
    mean = node.mean_value
    return mean if mean is not None else (node.score or 0.0)


def render_tree(nodes: list[dict[str, Any]], chosen: int | None, width: int | None = None) -> str:
    """An indented text picture of a dumped tree (``Tree.to_json()``): each candidate whole, its lines
    joined with " | " (``width``: cut longer ones to that many characters, ending "...")."""
    by_id = {n["id"]: n for n in nodes}
    lines: list[str] = []

    def one(node_id: int, indent: int) -> None:
        n = by_id[node_id]
        score = "  -  " if n["score"] is None else f"{n['score']:.2f}"
        mean = "" if n["mean_value"] is None else f" mean={n['mean_value']:.2f}"
        flat = " | ".join(line.strip() for line in str(n["candidate"]).splitlines() if line.strip())
        if width is not None and len(flat) > width:
            flat = flat[: width - 3] + "..."
        mark = "*" if node_id == chosen else " "
        sim = " sim" if n.get("simulated") else ""
        lines.append(f"{mark}{'  ' * indent}#{n['id']} [{n['kind']}{sim}] v={score} n={n['visits']}{mean}: {flat}")
        for c in n["children"]:
            one(c, indent + 1)

    if nodes:
        one(nodes[0]["id"], 0)
    return "\n".join(lines)
