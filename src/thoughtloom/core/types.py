"""Plain value types shared by every layer.

Everything here is a frozen dataclass that serialises to JSON with
:func:`to_json`. Nothing in this module performs I/O.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, Sequence

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    content: str


def user(content: str) -> Message:
    return Message("user", content)


def system(content: str) -> Message:
    return Message("system", content)


def assistant(content: str) -> Message:
    return Message("assistant", content)


@dataclass(frozen=True, slots=True)
class Request:
    """One completion request: a single sample from a chat conversation.

    ``sample_index`` tells apart N samples of the same prompt at temperature
    > 0: each index is a distinct, replayable cache entry, and backends derive
    their sampling seed from ``(seed, sample_index)``.
    """

    messages: tuple[Message, ...]
    max_tokens: int = 256
    temperature: float = 0.0
    top_p: float = 1.0
    stop: tuple[str, ...] = ()
    seed: int = 0
    sample_index: int = 0
    json_schema: Mapping[str, Any] | None = None
    logprobs: int | None = None  # top-k logprobs per token, if wanted

    def __post_init__(self) -> None:
        if not self.messages:
            raise ValueError("Request needs at least one message")
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {self.max_tokens}")
        # Accept lists from callers but store tuples so requests stay hashable.
        if not isinstance(self.messages, tuple):
            object.__setattr__(self, "messages", tuple(self.messages))
        if not isinstance(self.stop, tuple):
            object.__setattr__(self, "stop", tuple(self.stop))

    @classmethod
    def of(cls, prompt: str | Sequence[Message], **kw: Any) -> "Request":
        """Build a request from a bare user prompt or a message list."""
        if isinstance(prompt, str):
            return cls(messages=(user(prompt),), **kw)
        return cls(messages=tuple(prompt), **kw)

    def derived_seed(self) -> int:
        """Seed for this sample: stable for (seed, sample_index), distinct per index."""
        return (self.seed * 1_000_003 + self.sample_index) % (2**31 - 1)

    def normalized(self) -> dict[str, Any]:
        """The request as a canonical JSON-able dict (the cache key's content).

        Temperature 0 is deterministic, so top_p and the sampling seed do not
        change the output there and are left out of the key.
        """
        greedy = self.temperature == 0
        return {
            "messages": [[m.role, m.content] for m in self.messages],
            "max_tokens": self.max_tokens,
            "temperature": round(self.temperature, 6),
            "top_p": None if greedy else round(self.top_p, 6),
            "stop": list(self.stop),
            "seed": None if greedy else self.seed,
            "sample_index": None if greedy else self.sample_index,
            "json_schema": self.json_schema,
            "logprobs": self.logprobs,
        }

    def prompt_text(self) -> str:
        """A flat rendering used for prefix ordering and traces."""
        return "\n".join(f"{m.role}: {m.content}" for m in self.messages)


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    latency_s: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True, slots=True)
class TokenLogprob:
    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True, slots=True)
class Completion:
    text: str
    finish_reason: str = "stop"
    usage: Usage = field(default_factory=Usage)
    logprobs: tuple[TokenLogprob, ...] | None = None
    model: str = ""

    @property
    def truncated(self) -> bool:
        """The reply was cut off at ``max_tokens``: it is not a finished answer."""
        return self.finish_reason == "length"


@dataclass(frozen=True, slots=True)
class Passage:
    """A retrievable unit of text with an id that is stable across runs."""

    id: str
    text: str
    title: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ScoredPassage:
    passage: Passage
    score: float
    rank: int


@dataclass(frozen=True, slots=True)
class Citation:
    """A statement of a rationale and the passage ids it cites."""

    statement: str
    passage_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Problem:
    """One input to a strategy. The gold answer is never part of it."""

    id: str
    question: str
    context: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Demo:
    """A worked example for few-shot prompts."""

    question: str
    answer: str
    rationale: str = ""


def request_hash(model_id: str, request: Request) -> str:
    """sha256 over the model identity and the normalized request.

    Credentials never enter here: backends expose only a model identity
    (model name and endpoint or file), not keys. A lone surrogate in a
    message (a prompt built from a data file) hashes as its own code point
    (``surrogatepass``); text without one hashes exactly as plain UTF-8.
    """
    payload = json.dumps(
        {"model": model_id, "request": request.normalized()},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8", errors="surrogatepass")).hexdigest()


def to_json(value: Any) -> Any:
    """Convert dataclasses (recursively), tuples and mappings to JSON-able values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    return value
