"""One example's page: the question, gold and prediction, its scores and
cost, the reasoning structure its trace holds (a search tree, an HGOT
hierarchy, DecomP programs, samples and their vote), and the whole trace in
order, every model call expandable in place (messages, reply, tokens,
latency, cached or not)."""

from __future__ import annotations

import json
from typing import Any

from ..eval.record import EvalRecord
from ..eval.summary import step_problem_lines, tally_step_problems
from .figures import status
from .hgot_view import hgot_section
from .hierarchy import hierarchy
from .markup import Raw, answer_text, bar, clip, fold, h, number, table, text_block
from .program_view import programs_section
from .programs import programs
from .tree_view import tree_section
from .trees import search_tree

#: Events shown as one line each in the trace (their structure is drawn above).
_LINE_FIELDS = {"retrieval": ("queries",), "sample": ("index", "answer"), "vote": ("winner", "confidence"),
                "malformed": ("what", "reason"), "budget_exceeded": ("limit", "cap", "used"), "error": ("error",),
                "tree_node": ("node", "parent", "kind"), "tree_eval": ("node", "score", "evaluator"),
                "hgot_infer": ("node", "answer", "confidence"), "plan": ("node", "steps"),
                "decomp_step": ("run", "step", "handler", "answer"), "program_end": ("run", "program", "status")}


#: What a report shows for the gold of a task that checks answers by its rules.
BY_RULE = "(none: the task checks answers by its rules)"


def example_page(record: EvalRecord, events: list[dict[str, Any]], primary: str, *,
                 ruled: bool = False) -> Raw:
    """``ruled``: the task checks answers by its rules (Game of 24), so the record's gold is not shown."""
    sections: list[Any] = [_header(record, primary, ruled)]
    # the run's own structure; a step another strategy ran inside it (``within``: an MCTS DecomP handler,
    # a cot-sc Infer) shows in the timeline, not as the run's tree or vote
    own = [e for e in events if not e.get("within")]
    tree = search_tree(own)
    if tree is not None:
        sections.append(tree_section(tree))
    hier = hierarchy(own)
    if hier is not None:
        sections.append(hgot_section(hier))
    runs = programs(own)
    if runs:
        sections.append(programs_section(runs))
    samples = _samples(own)
    if samples:
        sections.append(samples)
    steps = _steps(own)
    if steps:
        sections.append(steps)
    if tree is None and hier is None and not runs and not samples and not steps:
        sections.append(h("p", {"class": "note"}, "The trace holds no reasoning structure for this example "
                                                   "(a single call, or no trace was kept)."))
    sections.append(_timeline(events))
    details = record.details
    if details:
        sections.append(fold("the record's details (results.jsonl)",
                             text_block(json.dumps(details, indent=1, ensure_ascii=False, default=str))))
    return h("article", None, sections)


def _header(record: EvalRecord, primary: str, ruled: bool = False) -> Raw:
    state = status(record, primary)
    used = record.usage
    rows = [["question", text_block(record.input)],
            ["gold", BY_RULE if ruled else answer_text(record.gold)],
            ["prediction", text_block(record.prediction) if record.prediction else
             "(none)" if record.prediction is None else "(an empty answer)"],
            ["metrics", ", ".join(f"{k} {number(v, 3)}" for k, v in record.metrics.items()) or "–"],
            ["confidence", number(record.confidence, 3)],
            ["cost", f"{number(used.get('calls'))} calls ({number(used.get('cached_calls'))} cached), "
                     f"{number(used.get('prompt_tokens'))} prompt + {number(used.get('completion_tokens'))} "
                     f"completion tokens, model {number(used.get('latency_s'), 2)} s, "
                     f"wall {number(record.latency_s, 2)} s"]]
    if record.truncated:
        rows.append(["truncated", "the reply was cut off at max_tokens (scored as no answer)"])
    if record.stopped:
        rows.append(["stopped", f"{record.stopped}: the strategy's best answer when it stopped"])
    if record.error:
        rows.append(["error", text_block(record.error)])
    problems = step_problem_lines(tally_step_problems([record.step_problems]))
    if problems:
        rows.append(["inside", h("ul", {"class": "problems"}, [h("li", None, line) for line in problems])])
    if record.meta:
        rows.append(["meta", json.dumps(record.meta, ensure_ascii=False, default=str)])
    return h("header", None,
             h("nav", {"class": "top"}, h("a", {"href": "#"}, "← run overview")),
             h("h1", None, record.id, " ", h("span", {"class": f"badge {state}"}, state),
               h("span", {"class": "sub"}, f"  {primary} {number(record.score(primary), 3)}")),
             h("table", {"class": "grid kv"}, [h("tr", None, h("td", None, k), h("td", None, v)) for k, v in rows]))


def _samples(events: list[dict[str, Any]]) -> Raw | str:
    samples = [e for e in events if e.get("type") == "sample"]
    votes = [e for e in events if e.get("type") == "vote"]
    if not samples and not votes:
        return ""
    replies = _sample_replies(events, len(samples))
    rows = [[number(e.get("index")), str(e.get("answer")) if e.get("answer") is not None else "(no answer)",
             "cut off" if e.get("truncated") else "",
             fold(clip(reply, 100), text_block(reply)) if reply is not None else ""]
            for e, reply in zip(samples, replies)]
    parts: list[Any] = [h("h2", None, "Samples and vote"), table(["#", "answer", "", "reply"], rows)]
    for vote in votes:
        tally = vote.get("tally") if isinstance(vote.get("tally"), dict) else {}
        total = sum(v for v in tally.values() if isinstance(v, (int, float))) or 1.0
        parts += [h("p", None, "Vote → ", h("b", None, str(vote.get("winner"))),
                    f" (share {number(vote.get('confidence'), 2)})"),
                  table(["answer", "votes", ""], [
                      [str(k), number(v, 2), bar(v / total)]
                      for k, v in tally.items() if isinstance(v, (int, float))])]
    return h("section", {"class": "samples"}, parts)


def _sample_replies(events: list[dict[str, Any]], n: int) -> list[str | None]:
    """The replies the samples were read from: the ``n`` model calls just before the first ``sample``."""
    first = next((i for i, e in enumerate(events) if e.get("type") == "sample"), len(events))
    calls = [e for e in events[:first] if e.get("type") == "llm_call"][-n:] if n else []
    texts = [e.get("text") if isinstance(e.get("text"), str) else None for e in calls]
    return texts if len(texts) == n else [None] * n


def _steps(events: list[dict[str, Any]]) -> Raw | str:
    """The hops of the retrieval baselines (self-ask, DSP, ReAct), in order."""
    hops = [e for e in events if e.get("type") in ("self_ask_step", "dsp_hop", "react_step")]
    if not hops:
        return ""
    rows = [[str(e.get("type")), [h("div", None, h("span", {"class": "muted"}, f"{k}: "), clip(e[k], 400))
                                  for k in e if k not in ("type", "t", "example")]] for e in hops]
    return h("section", None, h("h2", None, "Steps"), table(["step", ""], rows))


def _timeline(events: list[dict[str, Any]]) -> Raw:
    calls = sum(1 for e in events if e.get("type") == "llm_call")
    items, n = [], 0
    for e in events:
        if e.get("type") == "llm_call":
            n += 1
            items.append(_call(e, n))
        else:
            items.append(_event(e))
    return h("section", {"class": "trace"}, h("h2", None, f"Trace: {len(events)} events, {calls} model calls"),
             h("p", {"class": "legend"}, "In the order they happened; open a call for its messages and reply."),
             items)


def _call(e: dict[str, Any], n: int) -> Raw:
    cached = " · cached" if e.get("cached") else ""
    cut = " · cut off" if e.get("finish_reason") == "length" else ""
    summary = (f"call {n} · {e.get('model', '')} · sample {e.get('sample_index')} · T={e.get('temperature')} · "
               f"{number(e.get('prompt_tokens'))}+{number(e.get('completion_tokens'))} tokens · "
               f"{number(e.get('latency_s'), 2)} s{cached}{cut}")
    body: list[Any] = []
    messages = e.get("messages")
    if isinstance(messages, list):
        for message in messages:
            role, content = (message + ["", ""])[:2] if isinstance(message, list) else ("?", message)
            body += [h("div", {"class": "muted"}, str(role)), text_block(content)]
        body += [h("div", {"class": "muted"}, "reply"), text_block(e.get("text", ""))]
    else:
        body.append(h("p", {"class": "note"}, "The run kept no message text (trace_text off)."))
    body.append(h("p", {"class": "muted"}, f"request {e.get('request_hash', '')} · finish {e.get('finish_reason')}"))
    return h("details", {"class": "call"}, h("summary", None, summary), body)


def _event(e: dict[str, Any]) -> Raw:
    kind = str(e.get("type"))
    if kind == "phase":  # 'sampling 5', 'rollout 3/20': as the live status line says it
        step, of = e.get("step"), e.get("of")
        brief = " ".join(str(x) for x in (e.get("phase"), f"{step}/{of}" if step is not None and of is not None
                                          else step if step is not None else of) if x is not None)
    else:
        fields = _LINE_FIELDS.get(kind) or tuple(k for k in e if k not in ("type", "t", "example"))[:3]
        brief = ", ".join(f"{k}={clip(json.dumps(e.get(k), ensure_ascii=False, default=str), 60)}" for k in fields)
    full = {k: v for k, v in e.items() if k != "example"}
    # one line, no indent: json's C encoder only serves the compact form, and traces are long
    return fold([h("code", None, kind), " ", h("span", {"class": "muted"}, brief)],
                text_block(json.dumps(full, ensure_ascii=False, default=str)), class_="event")
