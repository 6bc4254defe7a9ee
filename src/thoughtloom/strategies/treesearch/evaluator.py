"""Thought evaluators: a score in [0, 1] and feedback for each node.

:class:`ModelEvaluator` asks the model about every pending node in ONE
batch (holistic, or itemized where the task has items), reads the replies
with :func:`~thoughtloom.lm.structured.parse_json` (see :mod:`.reading`),
salvages the complete items of a reply that ended but is malformed, and
re-asks each unreadable one once, quoting it, as one more batch; a node
whose reply still cannot be read gets ``malformed_score`` and the run goes
on. A reply cut off at ``max_tokens`` is unreadable: a verdict that did not
finish is not read, not even in part. Each reply that cannot be read is a
``malformed`` trace event (``what: tree_evaluation``, ``reason``
truncated, unparseable or no_score); a salvaged one is
``tree_eval_salvaged``; a node left without a reading is scored with
``evaluator: malformed`` (its ``tree_eval`` event says so). With
``score_limits`` on, each reading is held to the task's own rubric limits
(:func:`~.reading.limit_reading`; crosswords: a clue with blanks scores at
most 5/10), and a reading so lowered is a ``tree_eval_limited`` event.
:class:`SymbolicEvaluator` is the same, except that the task's exact
checker (the 24 checker, concept coverage) sets the score wherever it has
one. Both are registered (:data:`~.parts.EVALUATORS`); the ``evaluator`` option picks one by name,
and an evaluator of one's own can take their place (:class:`~.parts.Evaluator`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar, Sequence

from ...core.errors import ParseError
from ...core.events import malformed
from ...core.protocols import ScoreLimited
from ...core.types import Completion, Request, assistant, user
from ...lm.structured import parse_json
from ..prompting import finished
from .budget import affordable
from .parts import EVALUATORS, RunView
from .reading import (Reading, evaluation_schema, limit_reading, read_evaluation, salvage_holistic,
                      salvage_items)
from .tree import Node
from .world import World

#: How an evaluation is asked (``SearchConfig.eval_style``; ``auto``: the task's
#: ``evaluation_style``): the prompt a holistic evaluation sends. ``score``: a 0-10 score
#: and feedback (itemized where the task has items, ``tree_evaluate_items``); ``verdict``:
#: ThoughtSculpt App. A.3's CommonGen evaluator, "[No need to improve/still need to improve]
#: [reason]" (v(x) 1 or 0); ``check``: App. H.1's Game-of-24 REVISE_SOLUTIONS, a calculation,
#: its result, feedback and "correct": true/false (v(x) 1 or 0); ``spans``: App. A.1's outline
#: EVALUATE_CURRENT_ITEMIZED, the least interesting spans of consecutive items, each with a reason
#: and an interesting level 1-10 (itemized tasks only; ``tree_evaluate_spans``; a holistic
#: evaluation of such a task asks for a score).
STYLES = {"score": "tree_evaluate", "verdict": "tree_evaluate_verdict", "check": "tree_evaluate_check",
          "spans": "tree_evaluate"}
EVAL_STYLES = ("auto", *STYLES)

SPAN = 2  # App. A.1's num_consecutive_lines (its example and Fig. 2 name two items: "[9]-[10]", "[2]-[3]")

REASK = ("That reply could not be read as the JSON object asked for. "
         "Reply again with only the JSON object, nothing else.")


@EVALUATORS.register("model")
@dataclass(frozen=True)
class ModelEvaluator:
    """The model's verdict on each node (``evaluator: model``); its settings only, so one object
    serves every run (the run's world, context and tree come with each call)."""

    evaluation: str = "auto"  # 'holistic', 'itemized', or 'auto' (itemized where the task has items)
    max_tokens: int = 384
    temperature: float = 0.0
    malformed_score: float = 0.0
    samples: int = 1  # evaluations per node; the node's score is their mean (ToT's value samples)
    score_limits: bool = True  # hold readings to the task's rubric limits (a symbolic check)
    schema: bool = True  # send the reply's JSON schema (evaluation_schema) with each request
    style: str = "auto"  # the prompt of a holistic evaluation (STYLES); 'auto': the task's evaluation_style
    proposals: int = 3  # spans: App. A.1's num_candidates, one span per child (the run's k)
    name: ClassVar[str] = "model"  # details["evaluator"] (the registry sets it)

    @classmethod
    def from_config(cls, cfg: Any) -> "ModelEvaluator":
        """This evaluator as a tree strategy's config (a ``SearchConfig``) sets it."""
        return cls(evaluation=cfg.evaluation, max_tokens=cfg.eval_max_tokens, temperature=cfg.eval_temperature,
                   malformed_score=cfg.malformed_score, samples=cfg.value_samples, score_limits=cfg.score_limits,
                   schema=cfg.eval_schema, style=cfg.eval_style, proposals=cfg.k)

    def _style(self, world: World) -> str:
        style = world.view.evaluation_style if self.style == "auto" else self.style
        return style if style in STYLES else "score"

    def _mode(self, items: Sequence[str]) -> str:
        if self.evaluation == "auto":
            return "itemized" if items else "holistic"
        return self.evaluation

    async def evaluate(self, run: RunView, nodes: Sequence[Node]) -> None:
        """Score and give feedback on every node in ``nodes`` not scored yet, in one batch."""
        todo = [n for n in nodes if n.score is None]
        if not todo:
            return
        w, ctx, style = run.world, run.ctx, self._style(run.world)
        requests, labels = [], []
        for n in todo:
            items = list(w.view.evaluation_items(w.problem, n.candidate))
            mode = self._mode(items)
            spans = style == "spans" and mode == "itemized" and bool(items)
            name = ("tree_evaluate_spans" if spans else "tree_evaluate_items" if mode == "itemized" and items
                    else STYLES[style])
            prompt = ctx.prompt(name, description=w.description,
                                     solution=w.view.render(w.problem, n.candidate),
                                     guide=w.view.evaluation_guide(w.problem),
                                     items="\n".join(items), span=SPAN, count=self.proposals)
            label = item_labels(items) if mode == "itemized" and items else []
            shape = "spans" if spans else "score" if label or style == "spans" else style
            schema = evaluation_schema(len(label), shape, proposals=self.proposals) if self.schema else None
            for j in range(self.samples):  # sample 0 is the request a single evaluation sends
                labels.append(label)
                requests.append(Request.of(prompt, max_tokens=self.max_tokens, temperature=self.temperature,
                                           seed=ctx.seed, sample_index=j, json_schema=schema))
        requests = affordable(ctx, requests)
        owners = [n for n in todo for _ in range(self.samples)][: len(requests)]
        completions = await ctx.lm_for("evaluator").generate(requests)
        readings = [self._read(run, n, c, lab, 1) for n, c, lab in zip(owners, completions, labels)]
        retry = [i for i, r in enumerate(readings) if r is None]
        if retry:  # while the re-ask is out, the nodes hold their first readings (what a budget
            # stop there leaves them, and what an anytime look at the tree sees)
            for i in range(0, len(owners), self.samples):
                self.settle(run, owners[i], mean_reading(readings[i:i + self.samples]))
        try:
            if retry:  # re-ask each unreadable reply once, quoting it, as one batch
                again = [replace(requests[i], messages=requests[i].messages + (
                    assistant(completions[i].text), user(REASK))) for i in retry]
                for i, c in zip(retry, await ctx.lm_for("evaluator").generate(affordable(ctx, again))):
                    readings[i] = self._read(run, owners[i], c, labels[i], 2)
        finally:  # a budget stop during the re-ask still keeps the first readings
            for i in range(0, len(owners), self.samples):  # a node's samples are consecutive
                self.settle(run, owners[i], mean_reading(readings[i:i + self.samples]))
                run.tree.scored(owners[i])

    def _read(self, run: RunView, node: Node, reply: Completion, labels: list[str], attempt: int) -> Reading | None:
        """Parse (parse_json), else salvage the complete items of a malformed reply; None if
        the reply was cut off at max_tokens or cannot be read."""
        if not finished(run.ctx, reply, "tree_evaluation", node=node.id, attempt=attempt):
            return None
        text = reply.text
        reason, error = "no_score", "no usable score"
        try:
            reading = read_evaluation(parse_json(text), labels)
        except ParseError as exc:
            reason, error, reading = "unparseable", str(exc), None
        if reading is None:
            if labels:
                salvaged = salvage_items(text)
                reading = read_evaluation(salvaged, labels) if salvaged else None
            else:
                reading = salvage_holistic(text)
            if reading is not None:
                reading.salvaged = True
                run.ctx.trace.emit("tree_eval_salvaged", node=node.id, items=len(reading.items))
            else:
                malformed(run.ctx.trace, "tree_evaluation", reason, text, error=error, node=node.id,
                          attempt=attempt)
        if reading is not None and self.score_limits:
            self._limit(run, node, reading, labels)
        return reading

    def _limit(self, run: RunView, node: Node, reading: Reading, labels: list[str]) -> None:
        w = run.world
        limits = w.view.score_limits(w.problem, node.candidate) if isinstance(w.view, ScoreLimited) else None
        if limits:
            labels = labels or item_labels(w.view.evaluation_items(w.problem, node.candidate))
            lowered = limit_reading(reading, labels, limits)
            if lowered:
                run.ctx.trace.emit("tree_eval_limited", node=node.id, items=lowered, score=reading.score)

    def settle(self, run: RunView, node: Node, reading: Reading | None) -> None:
        """Put the verdict on ``node`` (``malformed_score`` when there is no reading)."""
        if reading is None:  # its replies were traced as malformed where they were read
            node.score, node.evaluator = self.malformed_score, "malformed"
        else:
            node.score, node.feedback, node.items = reading.score, reading.feedback, reading.items
            node.evaluator, node.salvaged = "model", reading.salvaged


def item_labels(items: Sequence[str]) -> list[str]:
    """Each evaluation item's label, as the prompt shows it: the text before its first '.' or ':'
    ("h2. One who wires: _____" -> "h2")."""
    return [i.split(".", 1)[0].split(":", 1)[0].strip() for i in items]


def mean_reading(readings: Sequence[Reading | None]) -> Reading | None:
    """One verdict from a node's value samples: the mean score of the readable
    ones, the first readable one's feedback and items; None if none is readable.

    Yao et al. sum their value samples (``sure`` 20, ``likely`` 1,
    ``impossible`` 0.001); the mean of the same samples ranks nodes alike and
    stays on the [0, 1] scale that ``goal_score`` reads."""
    read = [r for r in readings if r is not None]
    if not read:
        return None
    if len(read) == 1:
        return read[0]
    return Reading(sum(r.score for r in read) / len(read), read[0].feedback, read[0].items,
                   any(r.salvaged for r in read))


@EVALUATORS.register("symbolic")
@dataclass(frozen=True)
class SymbolicEvaluator(ModelEvaluator):
    """The model's feedback, but the task's exact score where it has one (``evaluator: symbolic``)."""

    name: ClassVar[str] = "symbolic"

    def settle(self, run: RunView, node: Node, reading: Reading | None) -> None:
        super().settle(run, node, reading)
        exact = run.world.view.symbolic_score(run.world.problem, node.candidate)
        if exact is not None:  # the score is exact, whatever was salvaged of the feedback
            node.score, node.evaluator, node.salvaged = exact, "symbolic", False
