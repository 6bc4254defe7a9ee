"""An HGOT hierarchy, drawn and listed: the questions as a graph, each
question's plan as a DAG (steps in rows by level, dependencies as edges),
its retrieved passages with scores, the sampled thoughts with their
citations and quality weights, the weighted vote, and how the Infer
re-scored the passages."""

from __future__ import annotations

from typing import Any

from .draw import DrawNode, svg_graph
from .hierarchy import Hierarchy, Infer, Question
from .markup import Raw, bar, clip, h, number, table, text_block


def hgot_section(hier: Hierarchy) -> Raw:
    parts: list[Any] = [h("h2", None, "Question hierarchy")]
    if hier.linked:
        qs = list(hier.questions.values())
        drawn = [DrawNode(q.id, q.depth, f"{q.id}: {clip(q.answer or '–', 10)}", f"{q.question} → {q.answer}",
                          "chosen" if q.id == "1" else "") for q in qs]
        edges = [(q.id.rsplit(".", 1)[0], q.id, "") for q in qs if "." in q.id]
        parts += [h("p", {"class": "legend"}, f"{len(qs)} questions. A box is a question (its id: 1.2 is step 2 "
                                              "of question 1's plan) and its answer; click one for its details."),
                  svg_graph(drawn, edges, width=118, label="question hierarchy", prefix="hq-")]
    else:
        parts.append(h("p", {"class": "note"}, "This trace predates question ids: questions are listed by depth, "
                                               "without their links."))
    parts += [_question(q, hier, open_=True) for q in hier.roots()]
    return h("section", {"class": "hgot"}, parts)


def _question(q: Question, hier: Hierarchy, open_: bool = False) -> Raw:
    summary = [h("b", None, q.id if hier.linked else f"depth {q.depth}"), " ", clip(q.question, 110), " → ",
               h("b", None, str(q.answer) if q.answer else "(no answer)")]
    conf = q.infers[-1].confidence if q.infers else None
    info = [["question", text_block(q.question)]]
    if q.original:
        info.append(["rewritten from", q.original])
        info.append(["with", "; ".join(f"{f[0]} → {f[1]}" if isinstance(f, list) and len(f) == 2 else str(f)
                                       for f in q.facts)])
    info += [["answer", f"{q.answer} (confidence {number(conf, 2)})"],
             ["search ended", q.stop or ("plan fallback" if q.fallback else "searched")]]
    body: list[Any] = [h("table", {"class": "grid kv"}, [h("tr", None, h("td", None, k), h("td", None, v))
                                                         for k, v in info])]
    if q.retrieved:
        body += [h("h3", None, "Retrieved passages"),
                 table(["rank", "title", "id", "score"],
                       [[number(p.get("rank")), str(p.get("title") or ""), str(p.get("id")), number(p.get("score"), 3)]
                        for p in q.retrieved])]
    # in the order the search ran: Infer, plan, the steps' own searches, Infer again
    if q.infers:
        body += [h("h3", None, "Infer over its passages"), _infer(q.infers[0], hier)]
    if q.plan is not None:
        body += [h("h3", None, "Plan"), _plan(q, hier)]
    elif q.fallback:
        body.append(h("p", {"class": "note"}, "No usable plan: the question itself was its one step."))
    children = hier.children(q.id) if hier.linked else []
    if children:
        body += [h("h3", None, "Its steps' searches"), h("div", {"class": "indent"}, [_question(c, hier)
                                                                                      for c in children])]
    for infer in q.infers[1:]:
        body += [h("h3", None, "Infer again, with the steps' answers"), _infer(infer, hier)]
    if q.malformed:
        body += [h("h3", None, "Unreadable replies"),
                 table(["what", "reason", "reply"], [[str(m.get("what")), str(m.get("reason")),
                                                      text_block(m.get("raw", ""))] for m in q.malformed])]
    return h("details", {"class": "question", "id": f"hq-{q.id}", "open": open_}, h("summary", None, summary), body)


def _infer(infer: Infer, hier: Hierarchy) -> Raw:
    shown = infer.passages  # [1] is the first: the order the thoughts cite them in
    rows = []
    for t in infer.thoughts:
        cites = []
        for statement in t.get("citations") or []:
            text, refs = (statement + [[]])[:2] if isinstance(statement, list) else (str(statement), [])
            names = [_passage_name(shown, r, hier) for r in refs or []]
            cites.append(h("div", None, str(text), h("span", {"class": "muted"},
                                                       f" [{', '.join(names)}]" if names else " (no citation)")))
        rows.append([number(t.get("index")), str(t.get("answer")) if t.get("answer") else "(none)",
                     number(t.get("quality"), 3), number(t.get("recall"), 2), number(t.get("precision"), 2),
                     cites or h("span", {"class": "muted"}, clip(t.get("rationale", ""), 200))])
    thoughts = table(["#", "answer", "weight", "citation recall", "precision", "statements and citations"], rows)
    total = sum(v for v in infer.tally.values() if isinstance(v, (int, float))) or 1.0
    vote = table(["answer", "weight", ""], [
        [str(k), number(float(v), 3), bar(float(v) / total)]
        for k, v in sorted(infer.tally.items(), key=lambda kv: -_num(kv[1]))])
    rescored = table(["cited as", "passage", "score before", "cited (weighted)", "score after"], [
        [f"[{i}]", _passage_name(shown, i, hier), number(p.get("old"), 3), number(p.get("cite_freq"), 3),
         number(p.get("new"), 3)] for i, p in enumerate(shown, 1)]
        + [["not shown", hier.titles.get(str(p.get("id"))) or str(p.get("id")), number(p.get("old"), 3),
            number(p.get("cite_freq"), 3), number(p.get("new"), 3)] for p in infer.unshown]) if shown else ""
    return h("div", None, thoughts,
             h("p", None, "Weighted vote → ", h("b", None, str(infer.answer) if infer.answer else "(none)"),
               f" (confidence {number(infer.confidence, 2)})"), vote, rescored)


def _num(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _passage_name(shown: list[dict[str, Any]], ref: Any, hier: Hierarchy) -> str:
    if isinstance(ref, int) and 1 <= ref <= len(shown):
        pid = str(shown[ref - 1].get("id"))
        return f"{ref}: {hier.titles.get(pid) or pid}"
    return str(ref)


def _plan(q: Question, hier: Hierarchy) -> Raw:
    plan = q.plan or {}
    steps = [str(s) for s in plan.get("steps") or []]
    edges = [tuple(e) for e in plan.get("edges") or [] if isinstance(e, list) and len(e) == 2]
    level_of = {s: i for i, level in enumerate(plan.get("levels") or []) for s in level}
    known = {c.id for c in hier.children(q.id)} if hier.linked else set()
    drawn = [DrawNode(i, level_of.get(i, 0), f"Step {i}", step, "" if f"{q.id}.{i}" in known else "pruned")
             for i, step in enumerate(steps, 1)]
    graph = svg_graph(drawn, [(a, b, "") for a, b in edges], width=70, arrows=True, label="plan",
                      prefix=f"hq-{q.id}.")
    listing = h("ol", None, [h("li", None, step) for step in steps])
    deps = ", ".join(f"Step {a} → Step {b}" for a, b in edges) or "none (all steps independent)"
    return h("div", None, graph, listing, h("p", {"class": "muted"}, f"Dependencies: {deps}"))
