"""The tree of a tree search, drawn and listed: each node's candidate, score,
feedback, visits and value, how it changed its parent (a word diff),
rejected and pruned children marked, the chosen path highlighted."""

from __future__ import annotations

import difflib
import re
from typing import Any

from .draw import DrawNode, svg_graph
from .markup import Raw, clip, fold, h, number, text_block
from .trees import Rejected, SearchTree, TreeNode

#: Longer texts are shown whole instead of diffed (the matcher is quadratic).
MAX_DIFF_WORDS = 4000


def word_diff(old: str, new: str) -> Raw:
    """``new`` against ``old``, word by word: removed words struck out, added ones marked."""
    a, b = re.split(r"(\s+)", old), re.split(r"(\s+)", new)
    if len(a) + len(b) > 2 * MAX_DIFF_WORDS:
        return text_block(new)
    parts: list[Any] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            parts.append("".join(a[i1:i2]))
            continue
        if i2 > i1:
            parts.append(h("del", None, "".join(a[i1:i2])))
        if j2 > j1:
            parts.append(h("ins", None, "".join(b[j1:j2])))
    return h("pre", {"class": "text diff"}, parts)


def _classes(node: TreeNode, tree: SearchTree) -> str:
    marks = ["chosen" if node.id == tree.chosen else "path" if node.id in tree.path else ""]
    marks += ["pruned" if node.pruned else "", "simulated" if node.simulated else "",
              "failed" if node.evaluator == "malformed" else ""]
    return " ".join(m for m in marks if m)


def _score(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def tree_section(tree: SearchTree) -> Raw:
    order = tree.preorder()
    on_path = set(tree.path)
    rejected_of: dict[int | None, list[tuple[int, Rejected]]] = {}  # parent -> (index, child that never joined)
    for i, r in enumerate(tree.rejected):
        rejected_of.setdefault(r.parent, []).append((i, r))
    drawn, edges = [], []
    for n in order:  # depth-first, so each row keeps every subtree together
        drawn.append(DrawNode(n.id, n.depth, f"#{n.id} {_score(n.score)}", clip(n.candidate, 200), _classes(n, tree)))
        if n.parent is not None:
            edges.append((n.parent, n.id, "path" if n.id in on_path and n.parent in on_path else ""))
        for i, r in rejected_of.get(n.id, []):
            drawn.append(DrawNode(f"r{i}", n.depth + 1, f"✗ {clip(r.reason.split()[0], 10)}",
                                  f"rejected ({r.reason}): {clip(r.candidate, 200)}", "rejected"))
            edges.append((n.id, f"r{i}", "rejected"))
    kinds = {k: sum(n.kind == k for n in order) for k in ("revised", "extended")}
    chosen = tree.nodes.get(tree.chosen) if tree.chosen is not None else None
    head = h("p", None, f"{len(order)} nodes ({kinds['revised']} revised, {kinds['extended']} extended), "
                        f"{len(tree.rejected)} rejected children; ",
             f"chosen #{chosen.id} (score {_score(chosen.score)}), path "
             + " → ".join(f"#{i}" for i in tree.path) if chosen else "no node chosen")
    legend = h("p", {"class": "legend"}, "Boxes: node id and evaluator score. Green: the chosen path. "
               "Dashed: pruned or simulated. Red ✗: a child that was rejected (a duplicate, a forbidden "
               "revision) or could not be read. Click a node for its candidate and feedback.")
    listing = [_node(n, tree, rejected_of.get(n.id, [])) for n in order]
    orphans = [(i, r) for parent, rs in rejected_of.items() if parent not in tree.nodes for i, r in rs]
    return h("section", {"class": "tree"}, h("h2", None, "Search tree"), head,
             svg_graph(drawn, edges, width=84, label="search tree", prefix="tn-"), legend,
             h("h3", None, "Nodes"), listing, [_rejected(r, i) for i, r in orphans])


def _node(node: TreeNode, tree: SearchTree, rejected: list[tuple[int, Rejected]]) -> Raw:
    flags = [h("span", {"class": "badge correct"}, "chosen") if node.id == tree.chosen else "",
             h("span", {"class": "badge warn"}, "pruned") if node.pruned else "",
             h("span", {"class": "badge"}, "simulated") if node.simulated else "",
             h("span", {"class": "badge error"}, "evaluation unreadable") if node.evaluator == "malformed" else ""]
    stats = f"score {_score(node.score)}"
    if node.visits:
        stats += f" · visits {node.visits} · value {number(node.mean_value, 2)}"
    if node.selected:
        stats += f" · selected {node.selected}×"
    summary = [h("b", None, f"#{node.id}"), f" {node.kind} · {stats} ", flags, " ",
               h("span", {"class": "muted"}, clip(node.candidate, 80))]
    parent = tree.nodes.get(node.parent) if node.parent is not None else None
    body = [h("h3", None, "Candidate"), text_block(node.candidate)]
    if node.feedback:
        body += [h("h3", None, f"Feedback ({node.evaluator or 'evaluator'})"), text_block(node.feedback)]
    if node.items:
        body.append(_items(node.items))
    if parent is not None and node.kind in ("revised", "extended"):
        body.append(fold(f"changes from #{parent.id}", word_diff(parent.candidate, node.candidate)))
    body += [_rejected(r, i) for i, r in rejected]
    return h("details", {"class": f"node depth-{min(node.depth, 12)} {_classes(node, tree)}", "id": f"tn-{node.id}"},
             h("summary", None, summary), body)


def _items(items: list[Any]) -> Raw:
    rows = []
    for item in items:
        if isinstance(item, dict):
            rows.append([str(item.get("item", item.get("name", ""))), number(item.get("score"), 2),
                         str(item.get("feedback", ""))])
        else:
            rows.append([str(item), "", ""])
    return h("table", {"class": "grid"}, h("tr", None, h("th", None, "item"), h("th", None, "score"),
                                              h("th", None, "feedback")),
             [h("tr", None, [h("td", None, c) for c in row]) for row in rows])


def _rejected(r: Rejected, index: int) -> Raw:
    return h("div", {"class": "rejected", "id": f"tn-r{index}"},
             fold([h("span", {"class": "badge wrong"}, "rejected"), f" child of #{r.parent}: {r.reason} ",
                   h("span", {"class": "muted"}, clip(r.candidate, 70))], text_block(r.candidate)))
