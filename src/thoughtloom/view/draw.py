"""Trees and DAGs as inline SVG, laid out by networkx.

Nodes go in rows by layer (a tree's depth, a plan's topological
generation), in the order given within a row, with networkx's
``multipartite_layout``; here its coordinates only become pixels and the
nodes and edges become SVG elements. Given in depth-first order, a tree's
rows keep every subtree together, so no two edges cross. Each node is a
``<g class="gnode" data-node=ID>`` that the page script links to the
node's details; all text goes through :func:`.markup.h`, so it is escaped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Sequence

import networkx as nx

from .markup import Raw, h

X_GAP, Y_GAP, MARGIN = 14, 46, 8


@dataclass(frozen=True)
class DrawNode:
    id: Hashable
    layer: int
    label: str  # a few characters inside the box
    tooltip: str = ""  # shown on hover (the node's question, candidate...)
    classes: str = ""  # chosen, path, rejected, pruned, ... (styled by the page)


def layered_positions(nodes: Sequence[DrawNode], edges: Sequence[tuple[Hashable, Hashable]]
                      ) -> dict[Hashable, tuple[float, float]]:
    """Row and column of each node in layout units (one unit between rows and between neighbours)."""
    graph = nx.DiGraph()
    for node in nodes:
        graph.add_node(node.id, layer=node.layer)
    graph.add_edges_from((a, b) for a, b in edges if a in graph and b in graph)
    if len(graph) == 1:
        return {nodes[0].id: (0.0, 0.0)}
    pos = nx.multipartite_layout(graph, subset_key="layer", align="horizontal")
    # the layout puts rows and neighbours one unit apart, then scales everything by one factor
    rows = sorted({round(float(y), 9) for _, y in pos.values()})
    if len(rows) > 1:
        unit = rows[1] - rows[0]
    else:
        xs = sorted(float(x) for x, _ in pos.values())
        unit = xs[1] - xs[0]
    return {n: (float(x) / unit, float(y) / unit) for n, (x, y) in pos.items()}


def svg_graph(nodes: Sequence[DrawNode], edges: Sequence[tuple[Hashable, Hashable, str]], *,
              width: int = 64, height: int = 24, arrows: bool = False, label: str = "graph",
              prefix: str = "") -> Raw:
    """The nodes and edges (parent, child, classes) as one ``<svg>``; empty markup when there are no nodes.

    A click on a node shows the page element whose id is ``prefix`` + the node's id."""
    if not nodes:
        return Raw("")
    units = layered_positions(nodes, [(a, b) for a, b, _ in edges])
    min_x = min(x for x, _ in units.values())
    min_y = min(y for _, y in units.values())
    step_x, step_y = width + X_GAP, height + Y_GAP
    px = {n: (MARGIN + (x - min_x) * step_x, MARGIN + (y - min_y) * step_y) for n, (x, y) in units.items()}
    total_w = int(max(x for x, _ in px.values()) + width + MARGIN)
    total_h = int(max(y for _, y in px.values()) + height + MARGIN)
    lines = []
    for a, b, classes in edges:
        if a not in px or b not in px:
            continue
        (ax, ay), (bx, by) = px[a], px[b]
        x1, y1, x2, y2 = ax + width / 2, ay + height, bx + width / 2, by
        mid = (y1 + y2) / 2
        lines.append(h("path", {"class": f"gedge {classes}".strip(),
                                "d": f"M{x1:.1f},{y1:.1f} C{x1:.1f},{mid:.1f} {x2:.1f},{mid:.1f} {x2:.1f},{y2:.1f}",
                                "marker-end": "url(#arrow)" if arrows else None}))
    boxes = []
    for node in nodes:
        x, y = px[node.id]
        boxes.append(h("g", {"class": f"gnode {node.classes}".strip(), "data-node": str(node.id), "tabindex": "0",
                             "transform": f"translate({x:.1f},{y:.1f})"},
                       h("title", None, node.tooltip or node.label),
                       h("rect", {"width": width, "height": height, "rx": 5}),
                       h("text", {"x": width / 2, "y": height / 2 + 4, "text-anchor": "middle"}, node.label)))
    defs = h("defs", None, h("marker", {"id": "arrow", "viewBox": "0 0 10 10", "refX": 9, "refY": 5,
                                        "markerWidth": 7, "markerHeight": 7, "orient": "auto"},
                             h("path", {"d": "M0,0 L10,5 L0,10 z"}))) if arrows else ""
    return h("div", {"class": "graph", "data-prefix": prefix or None},
             h("svg", {"xmlns": "http://www.w3.org/2000/svg", "width": total_w, "height": total_h,
                       "viewBox": f"0 0 {total_w} {total_h}", "role": "img", "aria-label": label},
               defs, lines, boxes))
