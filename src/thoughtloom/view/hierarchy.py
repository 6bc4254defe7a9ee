"""An HGOT hierarchy rebuilt from its trace.

Each question of the hierarchy has an id (``node``): ``"1"`` is the
question asked, ``"1.2"`` the question that step 2 of its plan became, and
so on. Its events: the passages its probe found (the ``retrieval`` event
whose query is the question), one or two Infers (``hgot_infer``: the
sampled thoughts with their citations and quality weights, the weighted
tally, the answer; ``passage_scores``: how the Infer re-scored the passages
it showed, in the order the thoughts cite them as [1], [2], ...), its plan
(``plan``: steps and dependency edges; ``plan_fallback``), the rewrite that
turned a dependent step into its question (``rewrite``), and why its search
ended (``hgot_stop``). A trace from before events carried ``node`` is
grouped by (depth, question) instead, without parent links.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

HGOT_EVENTS = ("hgot_infer", "plan", "plan_fallback", "hgot_stop")


@dataclass
class Infer:
    thoughts: list[dict[str, Any]]
    tally: dict[str, Any]
    answer: Any
    confidence: Any
    passages: list[dict[str, Any]] = field(default_factory=list)  # id, old, cite_freq, new; [1] first
    unshown: list[dict[str, Any]] = field(default_factory=list)  # the pool's passages beyond the top K


@dataclass
class Question:
    id: str
    depth: int
    question: str
    original: str | None = None  # the plan step it was rewritten from
    facts: list[Any] = field(default_factory=list)  # the parents' answers the rewrite used
    retrieved: list[dict[str, Any]] = field(default_factory=list)  # id, title, score, rank
    infers: list[Infer] = field(default_factory=list)
    plan: dict[str, Any] | None = None  # steps, edges, levels
    fallback: bool = False
    stop: str = ""
    malformed: list[dict[str, Any]] = field(default_factory=list)

    @property
    def answer(self) -> Any:
        return self.infers[-1].answer if self.infers else None


@dataclass
class Hierarchy:
    questions: dict[str, Question] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)  # passage id -> title, from every retrieval

    @property
    def linked(self) -> bool:
        """Whether the ids say who is whose step (traces with ``node``)."""
        return "1" in self.questions

    def children(self, qid: str) -> list[Question]:
        """The questions ``qid``'s plan steps became, by step number."""
        found = [q for k, q in self.questions.items()
                 if k.startswith(qid + ".") and "." not in k[len(qid) + 1:]]
        return sorted(found, key=lambda q: _step_number(q.id))

    def roots(self) -> list[Question]:
        if self.linked:
            return [self.questions["1"]]
        return sorted(self.questions.values(), key=lambda q: q.depth)


def _step_number(qid: str) -> int:
    tail = qid.rsplit(".", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def hierarchy(events: Iterable[dict[str, Any]]) -> Hierarchy | None:
    """The hierarchy the events describe, or None when they hold no HGOT search."""
    h = Hierarchy()
    probed: dict[str, list[dict[str, Any]]] = {}  # query -> the passages its latest search found
    rewrites: dict[str, dict[str, Any]] = {}
    unreadable: dict[str, list[dict[str, Any]]] = {}  # node -> its malformed replies
    seen_hgot = False
    for e in events:
        kind = e.get("type")
        if kind == "retrieval":
            for query, hits in zip(e.get("queries") or [], e.get("results") or []):
                hits = [hit for hit in hits or [] if isinstance(hit, dict)]
                probed[str(query)] = hits
                h.titles.update({str(hit.get("id")): str(hit.get("title") or "") for hit in hits})
            continue
        if kind == "rewrite" or kind == "rewrite_skipped":
            rewrites[_key(e)] = e
            continue
        if kind == "malformed" and str(e.get("what", "")).startswith("hgot_"):
            unreadable.setdefault(_key(e), []).append(e)
            continue
        if kind not in ("hgot_infer", "passage_scores", "plan", "plan_fallback", "hgot_stop"):
            continue
        seen_hgot = True
        q = _question(h, e, probed, rewrites)
        if q is None:
            continue
        if kind == "hgot_infer":
            q.infers.append(Infer(list(e.get("thoughts") or []), dict(e.get("tally") or {}),
                                  e.get("answer"), e.get("confidence")))
        elif kind == "passage_scores" and q.infers:
            q.infers[-1].passages = [p for p in e.get("passages") or [] if isinstance(p, dict)]
            q.infers[-1].unshown = [p for p in e.get("unshown") or [] if isinstance(p, dict)]
        elif kind == "plan":
            q.plan = {"steps": list(e.get("steps") or []), "edges": list(e.get("edges") or []),
                      "levels": list(e.get("levels") or [])}
        elif kind == "plan_fallback":
            q.fallback = True
        elif kind == "hgot_stop":
            q.stop = str(e.get("reason") or "")
    for key, found in unreadable.items():
        if key in h.questions:
            h.questions[key].malformed.extend(found)
    return h if seen_hgot and h.questions else None


def _key(e: dict[str, Any]) -> str:
    node = e.get("node")
    if isinstance(node, str) and node:
        return node
    return f"?{e.get('depth')}:{e.get('question', '')}"


def _question(h: Hierarchy, e: dict[str, Any], probed: dict[str, list[dict[str, Any]]],
              rewrites: dict[str, dict[str, Any]]) -> Question | None:
    """The question an event is about, made on its first event (which carries the question text)."""
    key = _key(e)
    if key in h.questions:
        return h.questions[key]
    if "question" not in e:
        return None
    depth = e.get("depth") if isinstance(e.get("depth"), int) else 0
    q = Question(key, depth, str(e["question"]), retrieved=probed.get(str(e["question"]), []))
    rewrite = rewrites.get(key)
    if rewrite is not None and rewrite.get("type") == "rewrite":
        q.original, q.facts = rewrite.get("original"), list(rewrite.get("facts") or [])
    h.questions[key] = q
    return q
