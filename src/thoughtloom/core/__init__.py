"""Plain types, protocols, traces and typed errors. Imports nothing else of ours."""

from .errors import (
    BudgetExceeded,
    CacheMiss,
    ConfigError,
    DataError,
    LMError,
    ModelCrashed,
    ParseError,
    PromptTooLong,
    RateLimitError,
    ThoughtloomError,
    TransientError,
)
from .protocols import LM, Entailment, Retriever, TaskView
from .trace import Trace
from .types import (
    Citation,
    Completion,
    Demo,
    Message,
    Passage,
    Problem,
    Request,
    ScoredPassage,
    TokenLogprob,
    Usage,
    assistant,
    request_hash,
    system,
    to_json,
    user,
)

__all__ = [
    "BudgetExceeded", "CacheMiss", "Citation", "Completion", "Demo", "ConfigError", "DataError",
    "Entailment", "LM", "LMError", "Message", "ModelCrashed", "ParseError", "Passage", "Problem", "PromptTooLong",
    "RateLimitError", "Request", "Retriever", "ScoredPassage", "TaskView", "ThoughtloomError",
    "TokenLogprob", "Trace", "TransientError", "Usage", "assistant", "request_hash",
    "system", "to_json", "user",
]
