"""Test doubles shipped with the library, for our tests and for users' own.

``ScriptedLM`` answers from a script instead of a model::

    lm = ScriptedLM(["first reply", "second reply"])          # a queue
    lm = ScriptedLM({"capital of France": "Paris"})           # prompt -> reply
    lm = ScriptedLM(lambda req: req.messages[-1].content.upper())  # a function

A reply may be a string, a :class:`Completion`, or an exception instance to
raise (to test retries and error paths). Every request is recorded in
``lm.requests`` and batches in ``lm.batches``. Usage is deterministic: about
one token per four characters, never zero. Reply text passes through
:func:`thoughtloom.core.text.encodable` as it does in the real backends, so
a scripted lone surrogate arrives as U+FFFD.
"""

from __future__ import annotations

import re
from collections import deque
from typing import Callable, Iterable, Mapping, Sequence, Union

from dataclasses import replace

from ..core.text import encodable
from ..core.types import Completion, Passage, Request, ScoredPassage, Usage

Reply = Union[str, Completion, BaseException]
Script = Union[Sequence[Reply], Mapping[str, Reply], Callable[[Request], Reply]]


class ScriptExhausted(AssertionError):
    """The script has no reply for a request."""


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


class ScriptedLM:
    def __init__(self, script: Script, *, model_id: str = "scripted", default: Reply | None = None):
        self.model_id = model_id
        self.requests: list[Request] = []
        self.batches: list[list[Request]] = []
        self._default = default
        self._queue: deque[Reply] | None = None
        self._map: Mapping[str, Reply] | None = None
        self._fn: Callable[[Request], Reply] | None = None
        if callable(script):
            self._fn = script
        elif isinstance(script, Mapping):
            self._map = script
        else:
            self._queue = deque(script)

    def _reply_for(self, request: Request) -> Reply:
        if self._fn is not None:
            return self._fn(request)
        if self._queue is not None:
            if self._queue:
                return self._queue.popleft()
        elif self._map is not None:
            last = request.messages[-1].content
            if last in self._map:
                return self._map[last]
            text = request.prompt_text()
            keys = [k for k in self._map if k in text]
            if keys:
                return self._map[max(keys, key=len)]
        if self._default is not None:
            return self._default
        raise ScriptExhausted(f"no scripted reply for prompt: {request.messages[-1].content[:200]!r}")

    def _complete(self, request: Request) -> Completion:
        reply = self._reply_for(request)
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, Completion):
            return replace(reply, text=encodable(reply.text))
        reply = encodable(reply)
        return Completion(
            text=reply,
            usage=Usage(prompt_tokens=_tokens(request.prompt_text()), completion_tokens=_tokens(reply)),
            model=self.model_id,
        )

    async def generate(self, requests: Sequence[Request]) -> list[Completion]:
        requests = list(requests)
        self.requests.extend(requests)
        self.batches.append(requests)
        return [self._complete(r) for r in requests]

    async def aclose(self) -> None:
        return None

    @property
    def calls(self) -> int:
        return len(self.requests)


_WORD = re.compile(r"\w+")


class StaticRetriever:
    """Ranks a fixed list of passages by word overlap with the query.

    Deterministic and dependency-free: for unit tests, not for real retrieval.
    """

    def __init__(self, passages: Iterable[Passage]) -> None:
        self.passages = list(passages)
        self.queries: list[str] = []
        self._words = [set(_WORD.findall(f"{p.title} {p.text}".lower())) for p in self.passages]

    async def search(self, queries: Sequence[str], k: int) -> list[list[ScoredPassage]]:
        out = []
        for q in queries:
            self.queries.append(q)
            qw = set(_WORD.findall(q.lower()))
            scored = sorted(
                ((len(qw & w), -i) for i, w in enumerate(self._words)), reverse=True
            )[:k]
            out.append([
                ScoredPassage(self.passages[-neg_i], float(score), rank)
                for rank, (score, neg_i) in enumerate(scored)
            ])
        return out


__all__ = ["ScriptExhausted", "ScriptedLM", "StaticRetriever"]
