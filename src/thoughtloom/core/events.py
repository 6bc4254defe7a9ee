"""Every trace event the package emits: its type, fields and meaning, in one place.

A trace (:mod:`.trace`) is one JSON object per event. Each has ``type``
and ``t`` (seconds since the trace started), the fields the trace was
opened with (the eval runner adds ``example``, the question's id) and the
fields of its type below: ``fields`` are always there, ``optional`` ones
only where the meaning says. A run inspector can rely on this table;
``tests/core/test_events.py`` fails when code emits a type or a field that
is not in it, and the fuzz harness checks every event it sees against it.

Unreadable model output is one event type, ``malformed``, whoever reads
it: ``what`` names the step whose reply it was (:data:`MALFORMED_WHAT`),
``reason`` says why it could not be read, ``raw`` is the reply, clipped
(:func:`malformed`). The strategy then degrades around it (asks again,
falls back, drops the candidate) and the run goes on.

Where a run is, is one event type too, ``phase`` (:func:`phase`): a
strategy emits it as it enters a rollout, a plan level, a program step, a
round of samples, so a live display (:mod:`.progress`) can say so while
the calls are out.

What went wrong in a run is counted from its trace in one place,
:func:`count_step_problems` (categories: :data:`STEP_PROBLEMS`): ``thoughtloom
run`` prints it, and the eval runner keeps it in each record and sums it in
``summary.json``.

Structure ids, for the run inspector (``thoughtloom view``) to rebuild what
a strategy built:

- tree searches: ``node`` is the node's index in its tree (the root is 0),
  ``parent`` its parent's; ``tree_answer.path`` is the chosen path, root
  first. Visits and values are the sum of the ``tree_backprop`` events.
- HGOT: ``node`` is a question's place in the hierarchy, ``"1"`` the
  question itself and ``"1.2"`` the question that step 2 of its plan became
  (so a node's parent is its id without the last part).
- DecomP: ``run`` is a program run's place in the nesting, ``"1"`` the top
  program and ``"1.3.2"`` the nested run answering input 2 (a foreach item)
  of step 3 of run ``"1"``; ``decomp_step.kind`` is the handler's kind
  (symbolic, prompt, retrieval, program, strategy or function). The events
  of a strategy or function handler's step carry ``within`` (:data:`COMMON`)
  naming that run id and handler.

Traces written before a field was added lack it; the inspector shows what
the older events allow. Traces written before an event was renamed read
with today's names through :func:`current_names` (:data:`RENAMED`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from .trace import Trace


@dataclass(frozen=True)
class EventType:
    meaning: str
    fields: tuple[str, ...]  # in every event of the type
    optional: tuple[str, ...] = ()  # in some (the meaning says when)
    source: str = ""  # the module that emits it


#: In every event: its type and time; ``example`` where the runner opened the trace; ``within`` on
#: the events of a step that one strategy runs inside another (:meth:`.trace.Trace.within`): the
#: scopes it runs in, outermost first, e.g. ``[{"step": "decomp_handler", "run": "1.2.1",
#: "handler": "solve", "strategy": "sculpt-mcts"}]`` or ``[{"step": "hgot_infer", "node": "1.2",
#: "strategy": "cot-sc"}]`` -- the step's own events and its ``llm_call`` events alike.
COMMON = ("type", "t", "example", "within")

_TREE = "strategies.treesearch"
EVENTS: dict[str, EventType] = {
    # -- the model, the budget, the runner ----------------------------------------------------
    "llm_call": EventType(
        "one model call: request hash, decoding, usage, finish reason; messages and reply unless "
        "the runner was told not to keep text",
        ("request_hash", "model", "sample_index", "temperature", "prompt_tokens", "completion_tokens",
         "cached", "latency_s", "finish_reason"), ("messages", "text"), "lm.meter"),
    "budget_exceeded": EventType(
        "a call was refused: the question's budget (limit calls or tokens) or the strategy's "
        "max_calls (strategy_calls) is spent; the run then stops with its best result so far",
        ("limit", "cap", "used"), source="lm.meter"),
    "malformed": EventType(
        "a model reply that could not be read as what was asked; what: the step (MALFORMED_WHAT), "
        "reason: why (truncated, unparseable, no_answer...), raw: the reply, clipped; the other "
        "fields place it (error: the parser's message, attempt: 1st/2nd ask...)",
        ("what", "reason", "raw"),
        ("error", "attempt", "node", "parent", "depth", "question", "index", "step", "run", "program",
         "hypothesis"),
        "core.events.malformed"),
    "error": EventType("the question failed (the record's error); the eval goes on", ("error",), source="eval.runner"),
    "phase": EventType(
        "the strategy enters a phase (before its calls): phase names it, step counts it from 1 and of "
        "says how many are planned (None where unknown); depth: how deep in a recursion (HGOT's "
        "hierarchy, DecomP's nested programs); progress displays show it (core.progress.phase_label)",
        ("phase", "step", "of"), ("depth",), "core.events.phase"),
    "retrieval": EventType(
        "one search: queries, k, and per query the passages found (id, title, score, rank); "
        "note: no retriever (closed book, no results)",
        ("queries", "k", "results"), ("seconds", "note"), "strategies.context.Context.search"),
    # -- sampling and voting (cot-sc, retrieve-then-read, dsp) --------------------------------
    "sample": EventType("one sampled answer (None: no answer, or the reply was cut off)",
                        ("index", "answer", "truncated"), source="strategies.vote.vote_samples"),
    "vote": EventType("the vote over the samples: weight per normalized answer, winner, its share",
                      ("tally", "winner", "confidence"), source="strategies.vote.vote_samples"),
    # -- entailment judges ---------------------------------------------------------------------
    "entail": EventType("one batch of the LLM judge: probability and how it was read, per pair",
                        ("judge", "n", "probs", "sources"), source="entail.llm"),
    "entailment": EventType("HGOT's entailment checks of one Infer: pairs judged, entailed",
                            ("pairs", "entailed"), source="strategies.hgot.quality"),
    "no_entailment_judge": EventType("HGOT has no judge: every thought weighs 1 (plain self-consistency)",
                                     ("note",), source="strategies.hgot.infer"),
    # -- HGOT ----------------------------------------------------------------------------------
    "hgot_infer": EventType(
        "one Infer: the thoughts (answer, citations, recall, precision, quality), the weighted "
        "tally, the answer and its confidence",
        ("node", "depth", "question", "thoughts", "tally", "answer", "confidence"),
        source="strategies.hgot.infer"),
    "passage_scores": EventType("passage quality after an Infer: old score, citation frequency, new score "
                                "of the passages shown ([1] first) and of the pool's passages not shown",
                                ("node", "depth", "question", "passages", "unshown"), source="strategies.hgot.infer"),
    "plan": EventType("a question's plan: steps, dependency edges, the levels searched in turn; dropped: "
                      "edges dropped to break a cycle, unknown: edges naming no step; reflection, "
                      "formalization: the stage replies (plan_stages=3)",
                      ("node", "depth", "question", "steps", "edges", "levels"),
                      ("dropped", "unknown", "reflection", "formalization"), "strategies.hgot.levels"),
    "plan_fallback": EventType("no usable plan after the re-asks: the question itself as its one step",
                               ("node", "depth", "question", "note"), source="strategies.hgot.levels"),
    "rewrite": EventType("a dependent step rewritten from its parents' answers (facts) into a question",
                         ("node", "depth", "step", "original", "facts", "question"), source="strategies.hgot.levels"),
    "rewrite_skipped": EventType("a dependent step kept as written: its parents found no answer",
                                 ("node", "depth", "step", "reason"), source="strategies.hgot.levels"),
    "hgot_stop": EventType("a question's search ended early: depth limit, a plan that resembles it, "
                           "or a spent budget", ("node", "depth", "question", "reason"),
                           source="strategies.hgot.levels"),
    # -- retrieval baselines -------------------------------------------------------------------
    "self_ask_step": EventType("one self-ask hop: the follow-up question and its intermediate answer",
                               ("hop", "follow_up", "answer"), source="strategies.baselines.retrieval"),
    "dsp_hop": EventType("one DSP hop: its first query, the queries fused (the samples' and the "
                         "question) and the passage ids fusion kept",
                         ("hop", "query", "passages"), ("queries",), "strategies.baselines.dsp"),
    "dsp_demo": EventType("DSP's Demonstrate on one training demo: whether its passages held the gold "
                          "answer, the prediction, whether it was kept as an annotated demo",
                          ("question", "passage_match", "prediction", "kept"), source="strategies.baselines.dsp"),
    "react_step": EventType("one ReAct turn: thought, action (search, finish or None), argument, observation",
                            ("step", "thought", "action", "argument", "observation"),
                            source="strategies.baselines.react"),
    # -- DecomP --------------------------------------------------------------------------------
    "decomp_step": EventType(
        "one executed program step: handler and its kind, operator, question, expanded inputs, answer, "
        "its tokens and calls, a handler error",
        ("run", "program", "depth", "step", "handler", "kind", "operator", "question", "inputs", "answer",
         "tokens", "calls", "error"),
        source="strategies.decomp.controller"),
    "program_end": EventType("a program ended: status ok, malformed, step_limit or depth_limit (a program "
                             "whose nested run ended so ends with that run's status); reason: why it stopped "
                             "(a malformed one's step, error and last reply; the nested run that did not finish)",
                             ("run", "program", "depth", "status", "steps"), ("reason",),
                             "strategies.decomp.controller"),
    "decomp_evidence": EventType(
        "a prompt handler's passages (every hop's) did not fit its evidence_tokens whole: of `passages`, "
        "`shortened` kept a shorter text and `dropped` (the last ones) were left out",
        ("run", "program", "depth", "step", "handler", "passages", "shortened", "dropped"),
        source="strategies.decomp.controller"),
    # -- the tree-search kernel (sculpt-mcts, sculpt-dfs, sculpt-dfs-backtrack, tot-bfs, tot-dfs, self-refine)
    "tree_node": EventType("a node joined the tree: parent, depth, how it changed its parent (kind), candidate",
                           ("node", "parent", "depth", "kind", "simulated", "candidate"), source=_TREE),
    "tree_eval": EventType("a node's verdict: score in [0, 1], feedback, items; evaluator model, "
                           "symbolic, malformed (no readable reply: malformed_score) or empty",
                           ("node", "score", "feedback", "evaluator", "items"), source=_TREE),
    "tree_eval_salvaged": EventType("a malformed evaluation read in part: its complete items or leading score",
                                    ("node", "items"), source=_TREE),
    "tree_eval_limited": EventType("an evaluation held to the task's rubric limits (score_limits): `items` "
                                   "scores lowered, the node's `score` after", ("node", "items", "score"),
                                   source=_TREE),
    "tree_rejected": EventType("a readable child dropped: a duplicate, or it revised its parent where "
                               "only extension is allowed", ("parent", "reason", "candidate"), source=_TREE),
    "tree_budget_trim": EventType("a batch cut to the calls the budget has left", ("wanted", "sent"),
                                  source=_TREE),
    "tree_select": EventType("MCTS selected a leaf to grow (parallel: leaves this iteration)",
                             ("node", "depth", "parallel"), source="strategies.sculpt.mcts"),
    "tree_backprop": EventType("MCTS added one visit with this reward to each node of path: a rollout's "
                               "reward backed up to the root, or (evaluation: true) a node's own evaluation, "
                               "its first visit", ("node", "reward", "path"), ("evaluation",), source=_TREE),
    "tree_exhausted": EventType("MCTS stopped before its rollouts were spent: no leaf it may grow is left "
                                "(every one at max_depth)", ("rollouts", "planned"),
                                source="strategies.sculpt.mcts"),
    "tree_empty": EventType("an expansion of `node` gave no readable child; it spent one step, and the "
                            "method tries the node again if `retry` (retry_empty)", ("node", "depth", "retry"),
                            source=_TREE),
    "tree_complete": EventType("a node not expanded because its state is complete: the generator cannot add to "
                               "it (a full crossword board, where a child may only fill a blank); no step is "
                               "spent on it and a depth-first search goes back up", ("node", "depth"),
                               source=_TREE),
    "tree_prune": EventType("DFS pruned a child: its score, or (`item`) one of its judged items, scored below "
                            "prune_below (Yao et al.: a state with a clue judged impossible)", ("node", "score"),
                            ("item",), source=_TREE),
    "tree_answer": EventType("the node chosen as the answer and its path from the root",
                             ("node", "answer", "path"), source=_TREE),
}

#: The steps whose replies a ``malformed`` event may be about (``generate_json``'s
#: callers name their own).
MALFORMED_WHAT: dict[str, str] = {
    "tree_root": "a tree search's first answer (kept as the root anyway)",
    "tree_child": "a generated child (dropped)",
    "tree_evaluation": "a node's evaluation (re-asked once, then malformed_score)",
    "hgot_plan": "a plan (re-asked with the reason, then the single-step fallback)",
    "hgot_thought": "a sampled thought (no answer: it does not vote)",
    "hgot_rewrite": "a dependent step's rewrite (the step with its parents' answers instead)",
    "decomp_step": "a decomposer step (re-asked, then the program ends malformed)",
    "decomp_handler": "a prompt handler's reply cut off before its answer (the step answers empty, with an error)",
    "self_ask_answer": "self-ask's chain without 'So the final answer is' (read for any answer)",
    "dsp_query": "a DSP query reply with no query (that sample adds none; the question is searched too)",
    "react_action": "a ReAct turn with no search[...] or finish[...] (the observation says so)",
    "entailment": "an LLM judge reply that is neither yes nor no (votes no)",
    "json": "a structured reply generate_json could not parse (re-asked once)",
}

#: Names changed since traces were first written, old -> new: event types, and the
#: ``what`` of ``malformed`` events. The tree-search kernel's were ``sculpt_*``
#: while ``tot-*`` and ``self-refine`` ran on it too. A reader of a trace file
#: applies :func:`current_names`, so an old trace reads as a new one.
RENAMED: dict[str, str] = {
    "sculpt_node": "tree_node", "sculpt_eval": "tree_eval", "sculpt_eval_salvaged": "tree_eval_salvaged",
    "sculpt_rejected": "tree_rejected", "sculpt_budget_trim": "tree_budget_trim",
    "sculpt_select": "tree_select", "sculpt_backprop": "tree_backprop", "sculpt_exhausted": "tree_exhausted",
    "sculpt_prune": "tree_prune", "sculpt_answer": "tree_answer",
    "sculpt_root": "tree_root", "sculpt_child": "tree_child", "sculpt_evaluation": "tree_evaluation",  # what
}


def current_names(event: dict[str, Any]) -> dict[str, Any]:
    """``event`` with today's names (:data:`RENAMED`): itself when none of its names
    changed, else a renamed copy."""
    kind, what = event.get("type"), event.get("what")
    renamed = {}
    if isinstance(kind, str) and kind in RENAMED:
        renamed["type"] = RENAMED[kind]
    if kind == "malformed" and isinstance(what, str) and what in RENAMED:
        renamed["what"] = RENAMED[what]
    return {**event, **renamed} if renamed else event


#: Longest ``raw`` kept in a ``malformed`` event.
RAW_CHARS = 500


def malformed(trace: Trace, what: str, reason: str, raw: str, **fields: Any) -> None:
    """Trace one unreadable model reply (a ``malformed`` event); ``raw`` is clipped."""
    trace.emit("malformed", what=what, reason=reason, raw=raw[:RAW_CHARS], **fields)


def phase(trace: Trace, name: str, step: int | None = None, of: int | None = None, *,
          depth: int | None = None) -> None:
    """Trace that the run enters phase ``name`` (step ``step`` of ``of``, at recursion ``depth``)
    before its model calls: a ``phase`` event, which live progress shows (:mod:`.progress`)."""
    if depth is None:
        trace.emit("phase", phase=name, step=step, of=of)
    else:
        trace.emit("phase", phase=name, step=step, of=of, depth=depth)


def problems(event: Mapping[str, Any]) -> list[str]:
    """What in ``event`` does not fit :data:`EVENTS` (empty when it fits)."""
    kind = event.get("type")
    spec = EVENTS.get(kind) if isinstance(kind, str) else None
    if spec is None:
        return [f"unknown event type {kind!r}"]
    missing = [f for f in ("t", *spec.fields) if f not in event]
    extra = [f for f in event if f not in COMMON and f not in spec.fields and f not in spec.optional]
    return ([f"{kind}: no field {f!r}" for f in missing]
            + [f"{kind}: field {f!r} is not in the schema" for f in extra])


#: What went wrong in a run, by category (:func:`count_step_problems`): key -> what it counts.
STEP_PROBLEMS: dict[str, str] = {
    "cut_off": "replies cut off at max_tokens (malformed events, reason truncated), by step",
    "unparsed": "replies that ended but could not be read as asked (malformed events, any other reason), by step",
    "salvaged": "evaluations read only in part from a malformed reply (tree_eval_salvaged), by step",
    "limited": "evaluations that scored above the task's rubric and were held to it (tree_eval_limited, "
               "score_limits: a symbolic check), by step",
    "budget_stopped": "calls refused because a budget was spent (budget_exceeded), by limit",
}


def count_step_problems(events: Iterable[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """How many of each :data:`STEP_PROBLEMS` category a trace holds, by step (``what``)
    or, for budget stops, by limit; only the categories that occurred."""
    counts: dict[str, dict[str, int]] = {}
    for event in map(current_names, events):
        kind = event.get("type")
        if kind == "malformed":
            key, by = ("cut_off" if event.get("reason") == "truncated" else "unparsed"), event.get("what")
        elif kind == "tree_eval_salvaged":
            key, by = "salvaged", "tree_evaluation"
        elif kind == "tree_eval_limited":
            key, by = "limited", "tree_evaluation"
        elif kind == "budget_exceeded":
            key, by = "budget_stopped", event.get("limit")
        else:
            continue
        per = counts.setdefault(key, {})
        per[str(by)] = per.get(str(by), 0) + 1
    return counts
