"""The protocols strategies program against. Concrete classes live elsewhere."""

from __future__ import annotations

from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

from .types import Completion, Demo, Problem, Request, ScoredPassage


@runtime_checkable
class LM(Protocol):
    """An async, batched language model.

    ``generate`` returns one completion per request, in order. Independent
    requests should be passed together so backends can schedule them.
    ``model_id`` identifies the model (never a credential); it is part of
    every cache key.
    """

    model_id: str

    async def generate(self, requests: Sequence[Request]) -> list[Completion]: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class Budgeted(Protocol):
    """Optional beside :class:`LM`: an LM that knows how many calls its budget has left.

    ``remaining_calls()`` is ``None`` where no call cap applies. The per-question
    wrappers implement it (``lm.meter.Metered``, the runner's budget;
    ``lm.meter.CallCap``, a strategy's own ``max_calls``); an LM without it has no
    known bound. Read it with ``lm.meter.remaining_calls(lm)``, which a strategy
    reaches as ``Context.remaining_calls()`` to size a batch to the budget left.
    """

    def remaining_calls(self) -> int | None: ...


@runtime_checkable
class Probed(Protocol):
    """Optional beside :class:`LM`: a backend that can ask its server whether it is there at all,
    with no model call (``lm.openai_compat.OpenAICompatLM``: ``GET /models``).

    ``probe()`` is None when the server answered (any HTTP status), else why not: it refused the
    connection (down) or accepted it and said nothing (frozen). The eval's circuit breaker
    (``eval.breaker.CircuitBreaker.watch``) probes while every call fails or none returns.
    """

    async def probe(self) -> str | None: ...


@runtime_checkable
class Retriever(Protocol):
    """Batched passage search: one ranked list per query."""

    async def search(self, queries: Sequence[str], k: int) -> list[list[ScoredPassage]]: ...


@runtime_checkable
class Entailment(Protocol):
    """Probability that each premise entails its hypothesis."""

    async def judge(self, pairs: Sequence[tuple[str, str]]) -> list[float]: ...


@runtime_checkable
class Bindable(Protocol):
    """Optional beside :class:`Entailment`: a judge that asks a model (``entail.LLMJudge``, and the cache
    around one) and can be bound to one question's metered LM and trace, so its calls count against
    that question's budget and show in its trace. The eval runner binds every judge that declares it."""

    def bind(self, lm: LM, trace: Any) -> Entailment: ...


@runtime_checkable
class TaskView(Protocol):
    """What a strategy may know about the task: how to ask and how to read answers.

    Tasks implement it; strategies use it and never see gold answers.
    """

    name: str
    instruction: str
    # Declared, with defaults on ``tasks.Task`` (every task is one), so a strategy reads them as
    # attributes, never by ``getattr`` (issue 42): ``cot_answer_format``, how a chain of thought must
    # end for extract_answer to read it (default DEFAULT_COT_ANSWER_FORMAT); ``open_domain``, True
    # where questions are answered from retrieved passages; ``search_settings``, the tree strategies'
    # options the task sets (``{option: core.options.TaskSetting}``; see ``strategies.build``);
    # ``question_shape``, what its questions are like ("qa": a short answer, "math": a numeric one,
    # "": neither), which picks a DecomP program for a task with none of its own.
    cot_answer_format: str
    open_domain: bool
    search_settings: Mapping[str, Any]
    question_shape: str

    def demos(self) -> Sequence[Demo]: ...

    def extract_answer(self, text: str) -> str | None: ...

    def normalize(self, answer: str) -> str: ...


DEFAULT_COT_ANSWER_FORMAT = 'end with a final line of the form "The answer is: <answer>".'


@runtime_checkable
class SearchTask(Protocol):
    """What a tree search over candidate solutions (ThoughtSculpt, ToT,
    Self-Refine) needs from a task. Optional: a task that does not implement
    it is searched with generic prompts built from its ``instruction``.

    A *candidate* is a plain string in the task's own canonical form (an
    arithmetic expression, a 25-character crossword board with ``_`` for
    blanks, a sentence, an outline with one item per line). Nothing here sees
    gold answers.

    Declared attributes, with defaults on ``tasks.Task`` (every task is one; the generic view of
    any other task declares them too), so a search reads them as attributes, never by ``getattr``
    (issue 42): ``whole_thoughts`` (a Tree-of-Thoughts thought is a whole new candidate, not a
    step extending its parent), ``child_per_feedback_item`` (the children of an itemized
    evaluation are tied one-to-one to its items of feedback), ``candidate_list`` (one generation
    reply lists the candidates, a line each with an optional confidence, instead of one reply per
    child), ``evaluation_style`` (the holistic evaluation prompt the task asks for by default:
    ``strategies.treesearch.evaluator.STYLES``) and ``judged_metrics`` (the metrics a model judge
    gives after the run, ``eval.judge``; a search then records each step's best answer). Optional
    methods are protocols of their own, read with ``isinstance``: :class:`ScoreLimited`,
    :class:`PruneMasked` and :class:`Completable`.
    """

    whole_thoughts: bool
    child_per_feedback_item: bool
    candidate_list: bool
    evaluation_style: str
    judged_metrics: Sequence[str]

    def describe(self, problem: Problem) -> str:
        """Task description plus this problem's input (numbers, clues, concepts...)."""
        ...

    def root_candidate(self, problem: Problem) -> str | None:
        """A given starting candidate (an empty board, the user's outline), or
        None to ask the model for its first answer."""
        ...

    def render(self, problem: Problem, candidate: str) -> str:
        """How a candidate is shown to the model."""
        ...

    def output_format(self, problem: Problem) -> str:
        """How the model must write a candidate so :meth:`parse_candidate` reads it."""
        ...

    def parse_candidate(self, problem: Problem, text: str, parent: str | None) -> str | None:
        """The candidate written in model output (applied onto ``parent`` where
        the task edits in place, e.g. a crossword word), or None if unreadable."""
        ...

    def evaluation_items(self, problem: Problem, candidate: str) -> Sequence[str]:
        """The parts judged one by one in itemized evaluation (clues with their
        current letters, outline items); empty for holistic-only tasks."""
        ...

    def evaluation_guide(self, problem: Problem) -> str:
        """What the evaluator should check and how to score (0 worst, 10 solved)."""
        ...

    def change_kind(self, parent: str, child: str) -> str:
        """'extended' if ``child`` only adds to ``parent``, else 'revised'."""
        ...

    def symbolic_score(self, problem: Problem, candidate: str) -> float | None:
        """An exact, non-model score in [0, 1] (e.g. the 24 checker, concept
        coverage), used only when a strategy is told to use a symbolic
        evaluator; None if the task has none."""
        ...

    def candidate_answer(self, problem: Problem, candidate: str) -> str:
        """The answer string scored by ``Task.score``."""
        ...


@runtime_checkable
class ScoreLimited(Protocol):
    """Optional beside :class:`SearchTask`: the task's own rubric limits on the model's scores, to
    which a search holds them (its ``score_limits`` option; crosswords: a clue with blanks scores at
    most 0.5). A task without it has no limits."""

    def score_limits(self, problem: Problem, candidate: str) -> Sequence[float]:
        """The most each of ``evaluation_items(problem, candidate)`` may score (0-1, same order)."""
        ...


@runtime_checkable
class PruneMasked(Protocol):
    """Optional beside :class:`SearchTask`: which evaluation items may prune a node in a depth-first
    search (crosswords: a clue with two letters in place). Without it, every item may."""

    def judged_items(self, problem: Problem, candidate: str) -> Sequence[bool]:
        """For each of ``evaluation_items(problem, candidate)`` (same order), whether it may prune."""
        ...


@runtime_checkable
class Completable(Protocol):
    """Optional beside :class:`SearchTask`: a candidate with nothing left to add (crosswords: a full
    board), which a search whose children may only extend their parent (Tree of Thoughts) does not
    expand. Without it, no candidate is complete."""

    def complete(self, problem: Problem, candidate: str) -> bool: ...
