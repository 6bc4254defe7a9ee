"""Dependencies between plan steps: read from any notation the planner writes, written back in one.

:func:`read_edges` turns dependency text into edges ``(u, v)`` ("step v
needs step u's answer"). It reads, in any mix:

- arrows and chains: ``Step 1 -> Step 2 -> Step 3`` (also ``→``, ``=>``);
- groups, parenthesised or not, joined by "and" or commas:
  ``(Step 1 and Step 2) -> Step 3``, ``Step 1 -> (Step 2 and Step 3)``
  (the notation of HGOT's formalization prompt), ``Steps 1 and 2 -> Step 3``,
  ``Step 3 depends on Steps 1, 2``;
- phrases: ``Step 3 depends on the answers from Steps 1 and 2``, "relies
  on", "requires", "needs", "uses"; and the forward "Step 1 feeds into Step 2";
- lists of clauses split by commas, "and", ";", "." or new lines:
  ``Step 1 -> Step 2, Step 3 -> Step 4``.

A group between two relations is split where the next relation starts
(``A -> B, C -> D`` is ``A -> B`` and ``C -> D``; ``A -> B -> C`` is a chain).
A negated relation ("does not depend on") gives no edge, nor does the step
right after a "not" that follows a group ("Step 3 depends on Step 1 but not
Step 2": 1 -> 3 only; in "but not Steps 1 and 2" only Step 1 is left out). Words around the
notation are ignored, so "the answer from" or "both" change nothing.

:func:`render` writes edges back as ``Step 1 -> Step 2, (Step 1 and Step 2) ->
Step 3`` (one clause per dependent step), which :func:`read_edges` reads back
as the same edges; :func:`describe` writes them as sentences ("Step 3 depends
on Steps 1 and 2."). :func:`break_cycles` drops the fewest edges that leave
no cycle.
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

Edge = tuple[int, int]

_TOKEN = re.compile(
    r"(?P<step>\bsteps?\s*#?\s*(?P<n>\d{1,6})\b)"
    r"|(?P<num>\b\d{1,6}\b)"
    r"|(?P<arrow>-+>|→|⟶|⇒|=+>)"
    r"|(?P<neg>\bnot\b|n't\b|\bnever\b)"
    r"|(?P<dep>\bdependenc(?:y|ies)\s*:|\bdepend(?:s|ent|ing)?\b|\brel(?:y|ies|ying)\b|\brequir(?:es?|ing)\b"
    r"|\bneed(?:s|ing)?\b(?!\s+(?:for|by)\b)|\bus(?:es?|ing)\b|\bbased\s+on\b|\bbuilds?\s+on\b)"
    r"|(?P<fwd>\bfeeds?\b|\bleads?\s+to\b|\bis\s+(?:needed|required|used)\s+(?:for|by|in)\b)"
    r"|(?P<lp>[(\[{])|(?P<rp>[)\]}])"
    r"|(?P<and>\band\b|&|\+|,|\bas\s+well\s+as\b)"
    r"|(?P<sep>;|\.(?!\d)|\n|\bthen\b)",
    re.IGNORECASE)


def _tokens(text: str) -> list[tuple[str, int]]:
    """(kind, step number or 0) per token; a bare number is a step only inside a list of steps."""
    out: list[tuple[str, int]] = []
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup if m.lastgroup != "n" else "step"
        if m.group("step"):
            out.append(("step", int(m.group("n"))))
        elif kind == "num":
            prev = [k for k, _ in out[-2:]]
            if prev[-1:] == ["and"] and prev[:1] == ["step"]:
                out.append(("step", int(m.group("num"))))
        else:
            out.append((kind, 0))
    return out


def _clauses(tokens: list[tuple[str, int]]) -> Iterable[list[tuple[str, int]]]:
    clause: list[tuple[str, int]] = []
    for tok in tokens:
        if tok[0] == "sep":
            if clause:
                yield clause
            clause = []
        else:
            clause.append(tok)
    if clause:
        yield clause


_MAX_NESTING = 2  # group parentheses kept this deep at most; deeper ones are read as flat


def _strip_operator_parens(clause: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Parentheses that hold a relation ("Step 2 (depends on Step 1)"), do not match, or nest
    deeper than ``_MAX_NESTING`` are dropped; those that hold only steps stay as groups."""
    keep = [True] * len(clause)
    stack: list[int] = []
    relation = {"arrow", "dep", "fwd", "neg"}
    seen = [0] * (len(clause) + 1)  # relation tokens before each position, to test a span at once
    for i, (kind, _) in enumerate(clause):
        seen[i + 1] = seen[i] + (kind in relation)
    for i, (kind, _) in enumerate(clause):
        if kind == "lp":
            stack.append(i)
        elif kind == "rp":
            if not stack:
                keep[i] = False
                continue
            j = stack.pop()
            if seen[i] - seen[j + 1] or len(stack) >= _MAX_NESTING:
                keep[i] = keep[j] = False
    for j in stack:
        keep[j] = False
    return [t for t, k in zip(clause, keep) if k]


def _group(clause: list[tuple[str, int]], i: int) -> tuple[list, int]:
    """Items (step numbers or nested groups) from position i, and the position after them."""
    items: list = []
    while i < len(clause):
        kind, n = clause[i]
        if kind == "step":
            items.append(n)
        elif kind == "lp":
            inner, i = _group(clause, i + 1)
            if inner:
                items.append(tuple(inner))
        elif kind == "rp":
            return items, i
        elif kind != "and":
            break
        i += 1
    return items, i


def _steps(items: Sequence) -> list[int]:
    out: list[int] = []
    for item in items:
        out.extend(_steps(item) if isinstance(item, tuple) else [item])
    return out


def _clause_edges(clause: list[tuple[str, int]]) -> list[Edge]:
    clause = _strip_operator_parens(clause)
    groups: list[list] = []
    ops: list[tuple[str, bool]] = []  # (fwd | dep, negated) between groups[i] and groups[i+1]
    negated, pending = False, None
    i = 0
    while i < len(clause):
        kind = clause[i][0]
        if kind in ("step", "lp"):
            items, i = _group(clause, i)
            if pending is not None and groups:
                ops.append(pending)
                groups.append(items)
            elif groups and pending is None:
                if negated:  # "Step 3 uses Step 1 but not Step 2, and Step 4 ...": the step after "not" is left out
                    items, negated = items[1:], False
                groups[-1].extend(items)  # "Step 1 Step 2": one group
            else:
                groups = [items]  # a relation with nothing on its left restarts here
            pending = None
            continue
        if kind == "neg":
            negated = True
        elif kind in ("arrow", "fwd", "dep"):
            pending = ("dep" if kind == "dep" else "fwd", negated)
            negated = False
        i += 1
    edges: list[Edge] = []
    for k, (op, neg) in enumerate(ops):
        left, right = groups[k], groups[k + 1]
        if k > 0 and len(left) > 1:
            left = left[-1:]  # a middle group: its last item starts this relation
        if k + 1 < len(ops) and len(right) > 1:
            right = right[:-1]  # ...and the items before it end the previous one
        if neg:
            continue
        for a in _steps(left):
            for b in _steps(right):
                edges.append((a, b) if op == "fwd" else (b, a))
    return edges


def read_edges(text: str) -> list[Edge]:
    """Every dependency edge written in ``text``, in order of appearance, without repeats."""
    edges: list[Edge] = []
    for clause in _clauses(_tokens(text)):
        for e in _clause_edges(clause):
            if e not in edges:
                edges.append(e)
    return edges


def mentions(text: str) -> list[int]:
    """The step numbers ``text`` names ("the director from Step 1", "Steps 1 and 2")."""
    out: list[int] = []
    for kind, n in _tokens(text):
        if kind == "step" and n not in out:
            out.append(n)
    return out


def _group_text(steps: Sequence[int]) -> str:
    names = [f"Step {u}" for u in steps]
    if len(names) == 1:
        return names[0]
    return "(" + ", ".join(names[:-1]) + " and " + names[-1] + ")"


def _parents_of(edges: Iterable[Edge]) -> dict[int, list[int]]:
    """Each dependent step's parents, in the order the edges name them, once each."""
    parents: dict[int, list[int]] = {}
    for u, v in edges:
        parents.setdefault(v, [])
        if u not in parents[v]:
            parents[v].append(u)
    return parents


def render(edges: Iterable[Edge]) -> str:
    """``Step 1 -> Step 2, (Step 1 and Step 2) -> Step 3``: one clause per dependent step, in
    step order, its parents grouped (HGOT's formalization notation); ``None`` without edges."""
    parents = _parents_of(edges)
    if not parents:
        return "None"
    return ", ".join(f"{_group_text(sorted(parents[v]))} -> Step {v}" for v in sorted(parents))


def describe(edges: Iterable[Edge]) -> str:
    """The same edges as sentences, the way HGOT's plan and self-reflection describe them:
    ``Step 2 depends on Step 1. Step 3 depends on Steps 1 and 2.``; ``None`` without edges."""
    parents = _parents_of(edges)
    if not parents:
        return "None"
    out = []
    for v in sorted(parents):
        us = sorted(parents[v])
        names = f"Step {us[0]}" if len(us) == 1 else \
            "Steps " + ", ".join(str(u) for u in us[:-1]) + f" and {us[-1]}"
        out.append(f"Step {v} depends on {names}.")
    return " ".join(out)


_EXACT_LIMIT = 10  # steps up to which the fewest edges are found exactly (2^n subsets)


def break_cycles(nodes: Sequence[int], edges: Sequence[Edge]) -> tuple[list[Edge], list[Edge]]:
    """(kept, dropped): the edges with the fewest dropped so that no cycle is left.

    The fewest edges whose removal leaves a DAG (a minimum feedback arc set)
    are those against the best ordering of the steps; the ordering is found
    exactly by dynamic programming over subsets. Among equally few, edges from
    a higher to a lower step (the order the plan prompt forbids) go first; a
    tie left keeps the plan's numbering from the end (the last step is the
    highest-numbered one such an order allows, then the one before it, and so
    on). A self-loop is always dropped. Above ``_EXACT_LIMIT`` steps, each cycle
    found loses its last edge (the authors' loop), which may drop more.
    """
    loops = [e for e in edges if e[0] == e[1]]
    rest = [e for e in edges if e[0] != e[1]]
    order = _best_order(list(nodes), rest) if len(nodes) <= _EXACT_LIMIT else None
    if order is None:
        return _greedy(nodes, rest, loops)
    pos = {v: i for i, v in enumerate(order)}
    kept = [e for e in rest if pos[e[0]] < pos[e[1]]]
    dropped = [e for e in rest if pos[e[0]] > pos[e[1]]]
    return kept, loops + dropped


def _best_order(nodes: list[int], edges: list[Edge]) -> list[int]:
    index = {v: i for i, v in enumerate(nodes)}
    n = len(nodes)
    out_to = [0] * n  # bit mask of the nodes each node has an edge to
    backward = [[0] * n for _ in range(n)]  # 1 when an edge a -> b goes from a higher to a lower step
    for a, b in edges:
        out_to[index[a]] |= 1 << index[b]
        backward[index[a]][index[b]] = int(a > b)
    best: dict[int, tuple[tuple[int, int], int]] = {0: ((0, 0), -1)}
    for mask in range(1 << n):
        if mask not in best:
            continue
        (cost, proper), _ = best[mask]
        for v in range(n):
            if mask >> v & 1:
                continue
            placed = out_to[v] & mask  # v's edges to steps already placed before it are dropped
            drops = bin(placed).count("1")
            proper_drops = sum(1 for u in range(n) if placed >> u & 1 and not backward[v][u])
            cand = ((cost + drops, proper + proper_drops), v)
            nxt = mask | 1 << v
            if nxt not in best or cand[0] < best[nxt][0]:
                best[nxt] = cand
    order, mask = [], (1 << n) - 1
    while mask:
        v = best[mask][1]
        order.append(nodes[v])
        mask &= ~(1 << v)
    return order[::-1]


def _greedy(nodes: Sequence[int], edges: list[Edge], loops: list[Edge]) -> tuple[list[Edge], list[Edge]]:
    import networkx as nx

    g = nx.DiGraph()
    g.add_nodes_from(nodes)
    g.add_edges_from(edges)
    dropped = list(loops)
    while True:
        try:
            cycle = nx.find_cycle(g)
        except nx.NetworkXNoCycle:
            break
        u, v = cycle[-1][:2]
        g.remove_edge(u, v)
        dropped.append((u, v))
    return [e for e in edges if g.has_edge(*e)], dropped
