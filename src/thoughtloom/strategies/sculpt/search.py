"""The search core shared by sculpt-mcts, sculpt-dfs, tot-bfs, tot-dfs and
self-refine: one run's tree plus the thought generator and evaluator.

A :class:`Search` is created inside ``Strategy.run`` and dropped with it; it
holds the only mutable state of a run. Every batch of children and every
batch of evaluations is ONE ``lm.generate`` call.

Trace events (besides ``llm_call``): ``sculpt_node`` (a node was added),
``sculpt_eval`` (its score and feedback), ``sculpt_eval_malformed`` (the
evaluator's reply could not be read; the node gets ``malformed_score``),
``sculpt_eval_salvaged`` (a reply cut off by the token limit, read from
its complete items or its leading score), ``sculpt_unparsed`` (a generated child could not be read and was dropped),
``sculpt_rejected`` (a child that revised its parent where only extension
is allowed, or a duplicate), ``sculpt_select`` / ``sculpt_backprop``
(MCTS), ``sculpt_prune`` (DFS), ``sculpt_budget_trim`` (a batch cut to
the calls the budget has left).
"""

from __future__ import annotations

import contextlib
import hashlib
import random
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterator, Sequence

from ...core.errors import BudgetExceeded, ParseError
from ...core.types import Problem, Request, assistant, user
from ...lm.structured import parse_json
from ..base import DEFAULT_MAX_CALLS, Context, Result
from ..treesearch.reading import Reading, read_evaluation, salvage_holistic, salvage_items
from ..treesearch.tree import Node, Tree, render_tree
from ..treesearch.world import search_view

REVISE = ("Write an improved solution that fixes the problems named in the feedback. "
          "You may change ANY part of the current solution, or add to it.")
EXTEND = ("Continue the current solution: keep every part of it exactly as it is and only add "
          "the next piece (fill a blank, add a step). Do not change what is already there.")


@dataclass(frozen=True)
class SearchConfig:
    """Knobs shared by every tree strategy (paper defaults: k=3, depth 3, T=0.7)."""

    k: int = 3                     # children per expansion
    max_depth: int = 3             # deepest node level (root = 0)
    temperature: float = 0.7       # generator sampling temperature
    eval_temperature: float = 0.0  # evaluator: greedy, so scores are reproducible
    evaluation: str = "auto"       # 'holistic', 'itemized', or 'auto' (itemized where the task has items)
    evaluator: str = "model"       # 'model', or 'symbolic' (task's exact checker sets the score)
    gen_max_tokens: int = 256
    eval_max_tokens: int = 384
    malformed_score: float = 0.0   # score of a node whose evaluation could not be read
    goal_score: float = 1.0        # a node scoring this high ends the search early
    keep_tree: bool = True         # put the tree JSON in Result.details
    max_calls: int = DEFAULT_MAX_CALLS  # finite bound on model calls per question


class Search:
    """One run's state: the tree, the task view, sampling counters and rng."""

    def __init__(self, problem: Problem, ctx: Context, cfg: SearchConfig, *, extend_only: bool = False) -> None:
        self.problem, self.ctx, self.cfg = problem, ctx, cfg
        self.view = search_view(ctx.task)
        self.tree = Tree(ctx.trace)
        self.extend_only = extend_only
        self.budget_exhausted = False
        self._samples = 0  # distinct sample index per generated request
        digest = hashlib.sha256(f"{ctx.seed}:{problem.id}".encode()).digest()
        self.rng = random.Random(int.from_bytes(digest[:8], "big"))
        self.description = self.view.describe(problem)

    # -- generator ---------------------------------------------------------

    def _gen_request(self, prompt: str, temperature: float) -> Request:
        self._samples += 1
        return Request.of(prompt, max_tokens=self.cfg.gen_max_tokens, temperature=temperature,
                          seed=self.ctx.seed, sample_index=self._samples)

    async def make_root(self) -> Node:
        """The given starting candidate; else, for extension-only search (ToT),
        an empty solution that thoughts build up step by step; else the
        model's first (greedy) answer (ThoughtSculpt, Self-Refine)."""
        given = self.view.root_candidate(self.problem)
        if given is not None:
            return self.tree.add(given)
        if self.extend_only:
            root = self.tree.add("")
            root.score, root.evaluator = 0.0, "empty"  # nothing to judge yet
            self.tree.scored(root)
            return root
        prompt = self.ctx.prompt("sculpt_root", description=self.description,
                                 output_format=self.view.output_format(self.problem))
        text = (await self.ctx.lm.generate([self._gen_request(prompt, 0.0)]))[0].text
        candidate = self.view.parse_candidate(self.problem, text, None)
        if candidate is None:
            self.ctx.trace.emit("sculpt_unparsed", parent=None, raw=text[:500])
            candidate = text.strip()
        return self.tree.add(candidate)

    async def expand(self, node: Node, k: int, *, simulated: bool = False) -> list[Node]:
        """``k`` children of ``node`` from one batch (see :meth:`expand_many`)."""
        return (await self.expand_many([node], k, simulated=simulated))[0]

    async def expand_many(self, nodes: Sequence[Node], k: int, *, simulated: bool = False) -> list[list[Node]]:
        """``k`` children for each of ``nodes``, all requested in ONE batch.

        Unreadable, duplicate and (when only extension is allowed) revising
        children are dropped, each with a trace event."""
        if k < 1 or not nodes:
            return [[] for _ in nodes]
        requests = []
        for node in nodes:
            prompt = self.ctx.prompt(
                "sculpt_generate", description=self.description,
                solution=self.view.render(self.problem, node.candidate),
                feedback=node.feedback or "(no feedback)",
                mode=EXTEND if self.extend_only else REVISE,
                output_format=self.view.output_format(self.problem))
            requests += [self._gen_request(prompt, self.cfg.temperature) for _ in range(k)]
        completions = await self.ctx.lm.generate(self._affordable(requests))
        out = []
        for j, node in enumerate(nodes):
            if not simulated:
                node.expanded = True
            out.append(self._children(node, [c.text for c in completions[j * k:(j + 1) * k]], simulated))
        return out

    def _affordable(self, requests: list[Request]) -> list[Request]:
        """As many of ``requests`` as the call budget has room for (at least
        one, so an empty budget raises BudgetExceeded): a last, partial batch
        still adds to the tree instead of being refused whole."""
        remaining = self.ctx.remaining_calls()
        if remaining is not None and 0 < remaining < len(requests):
            self.ctx.trace.emit("sculpt_budget_trim", wanted=len(requests), sent=remaining)
            return requests[:remaining]
        return requests

    def _children(self, node: Node, texts: list[str], simulated: bool) -> list[Node]:
        seen = {self.tree.nodes[c].candidate for c in node.children} | {node.candidate}
        children = []
        for text in texts:
            candidate = self.view.parse_candidate(self.problem, text, node.candidate)
            if candidate is None:
                self.ctx.trace.emit("sculpt_unparsed", parent=node.id, raw=text[:500])
                continue
            kind = self.view.change_kind(node.candidate, candidate)
            if candidate in seen:
                self.ctx.trace.emit("sculpt_rejected", parent=node.id, reason="duplicate", candidate=candidate)
                continue
            if self.extend_only and kind != "extended":
                self.ctx.trace.emit("sculpt_rejected", parent=node.id, reason="revises its parent",
                                    candidate=candidate)
                continue
            seen.add(candidate)
            children.append(self.tree.add(candidate, node, kind, simulated=simulated))
        return children

    # -- evaluator ---------------------------------------------------------

    def _mode(self, items: Sequence[str]) -> str:
        if self.cfg.evaluation == "auto":
            return "itemized" if items else "holistic"
        return self.cfg.evaluation

    async def evaluate(self, nodes: Sequence[Node]) -> None:
        """Score and give feedback on every node in ``nodes`` in one batch."""
        todo = [n for n in nodes if n.score is None]
        if not todo:
            return
        requests, labels = [], []
        for n in todo:
            items = list(self.view.evaluation_items(self.problem, n.candidate))
            mode = self._mode(items)
            name = "sculpt_evaluate_items" if mode == "itemized" and items else "sculpt_evaluate"
            prompt = self.ctx.prompt(name, description=self.description,
                                     solution=self.view.render(self.problem, n.candidate),
                                     guide=self.view.evaluation_guide(self.problem),
                                     items="\n".join(items))
            labels.append([i.split(".", 1)[0].split(":", 1)[0].strip() for i in items] if name.endswith("items") else [])
            requests.append(Request.of(prompt, max_tokens=self.cfg.eval_max_tokens,
                                       temperature=self.cfg.eval_temperature, seed=self.ctx.seed))
        requests = self._affordable(requests)
        todo = todo[: len(requests)]
        completions = await self.ctx.lm.generate(requests)
        readings = [self._read(n, c.text, lab, 1) for n, c, lab in zip(todo, completions, labels)]
        retry = [i for i, r in enumerate(readings) if r is None]
        try:
            if retry:  # re-ask each unreadable reply once, quoting it, as one batch
                again = [replace(requests[i], messages=requests[i].messages + (
                    assistant(completions[i].text),
                    user("That reply could not be read as the JSON object asked for. "
                         "Reply again with only the JSON object, nothing else."))) for i in retry]
                for i, c in zip(retry, await self.ctx.lm.generate(self._affordable(again))):
                    readings[i] = self._read(todo[i], c.text, labels[i], 2)
        finally:  # a budget stop during the re-ask still keeps the first readings
            for i, (n, reading) in enumerate(zip(todo, readings)):
                self._apply(n, reading, completions[i].text)
                self.tree.scored(n)

    def _read(self, node: Node, text: str, item_labels: list[str], attempt: int) -> Reading | None:
        """Parse (parse_json), else salvage the complete items of a reply cut off mid-list."""
        try:
            reading = read_evaluation(parse_json(text), item_labels)
        except ParseError as exc:
            self.ctx.trace.emit("parse_error", what="sculpt_evaluation", error=str(exc), raw=text[:500],
                                attempt=attempt)
            reading = None
        if reading is None:
            if item_labels:
                salvaged = salvage_items(text)
                reading = read_evaluation(salvaged, item_labels) if salvaged else None
            else:
                reading = salvage_holistic(text)
            if reading is not None:
                self.ctx.trace.emit("sculpt_eval_salvaged", node=node.id, items=len(reading.items))
        return reading

    def _apply(self, node: Node, reading: Reading | None, raw: str) -> None:
        if reading is None:
            node.score, node.evaluator = self.cfg.malformed_score, "malformed"
            self.ctx.trace.emit("sculpt_eval_malformed", node=node.id, raw=raw[:500])
        else:
            node.score, node.feedback, node.items = reading.score, reading.feedback, reading.items
            node.evaluator = "model"
        if self.cfg.evaluator == "symbolic":
            exact = self.view.symbolic_score(self.problem, node.candidate)
            if exact is not None:
                node.score, node.evaluator = exact, "symbolic"

    def solved(self, node: Node) -> bool:
        return node.score is not None and node.score >= self.cfg.goal_score

    # -- result ------------------------------------------------------------

    @contextlib.contextmanager
    def budgeted(self) -> Iterator[None]:
        """Run a search loop until it ends or the per-problem budget runs out (then flag it)."""
        try:
            yield
        except BudgetExceeded:
            self.budget_exhausted = True

    def finish(self, algorithm: str, pick: Callable[[], Node]) -> Result:
        """The result for the node ``pick`` chooses; an empty answer if the budget left no node."""
        if not self.tree.nodes:
            return Result(answer="", details={"budget_exhausted": True, "nodes": 0})
        return self.result(pick(), algorithm)

    def result(self, best: Node, algorithm: str) -> Result:
        answer = self.view.candidate_answer(self.problem, best.candidate)
        details: dict[str, Any] = {
            "algorithm": algorithm, "chosen": best.id, "nodes": len(self.tree.nodes),
            "chosen_score": best.score, "chosen_mean": best.mean_value,
            "budget_exhausted": self.budget_exhausted,
            "revised": sum(n.kind == "revised" for n in self.tree.nodes),
            "extended": sum(n.kind == "extended" for n in self.tree.nodes),
            "evaluator": self.cfg.evaluator,
            "chosen_rendered": self.view.render(self.problem, best.candidate),
        }
        if self.cfg.keep_tree:
            details["tree"] = self.tree.to_json()
        self.ctx.trace.emit("sculpt_answer", node=best.id, answer=answer)
        return Result(answer=answer, text=best.candidate, confidence=best.score, details=details)


def report(result: Result) -> str:
    """The tree summary ``thoughtloom run`` prints."""
    d = result.details
    head = (f"{d.get('algorithm', 'search')}: {d.get('nodes', 0)} nodes "
            f"({d.get('revised', 0)} revised, {d.get('extended', 0)} extended); "
            f"chosen #{d.get('chosen')} score={d.get('chosen_score')} evaluator={d.get('evaluator')}"
            + ("; budget exhausted" if d.get("budget_exhausted") else ""))
    tree = d.get("tree")
    body = render_tree(tree, d.get("chosen")) if tree else ""
    chosen = d.get("chosen_rendered") or result.text
    return f"{head}\n{body}\nchosen candidate:\n{chosen}"
