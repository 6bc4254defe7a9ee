"""The protocols strategies program against. Concrete classes live elsewhere."""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

from .types import Completion, Demo, Request, ScoredPassage


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
class Retriever(Protocol):
    """Batched passage search: one ranked list per query."""

    async def search(self, queries: Sequence[str], k: int) -> list[list[ScoredPassage]]: ...


@runtime_checkable
class Entailment(Protocol):
    """Probability that each premise entails its hypothesis."""

    async def judge(self, pairs: Sequence[tuple[str, str]]) -> list[float]: ...


@runtime_checkable
class TaskView(Protocol):
    """What a strategy may know about the task: how to ask and how to read answers.

    Tasks implement it; strategies use it and never see gold answers.
    """

    name: str
    instruction: str

    def demos(self) -> Sequence[Demo]: ...

    def extract_answer(self, text: str) -> str | None: ...

    def normalize(self, answer: str) -> str: ...
