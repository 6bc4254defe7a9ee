"""Typed errors. Backends map provider failures onto these exactly once."""

from __future__ import annotations


class ThoughtloomError(Exception):
    """Base class. ``hint`` tells the user how to fix the problem."""

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint

    def __str__(self) -> str:
        base = super().__str__()
        return f"{base} ({self.hint})" if self.hint else base


class ConfigError(ThoughtloomError):
    """Bad flag, model spec, missing model file or other user configuration."""


class DataError(ThoughtloomError):
    """A malformed dataset record; the message names ``file:line``."""


class LMError(ThoughtloomError):
    """A model call failed and retrying will not help (bad request, auth, ...)."""


class TransientError(LMError):
    """A model call failed in a way that may succeed if retried; ``retry_after``: the seconds
    the server asked us to wait (a ``Retry-After`` header on a 429 or a 503), if it said."""

    def __init__(self, message: str, *, retry_after: float | None = None, hint: str = "") -> None:
        super().__init__(message, hint=hint)
        self.retry_after = retry_after


class RateLimitError(TransientError):
    """The server asked us to slow down (HTTP 429)."""


class ModelCrashed(LMError):
    """The model's worker process died during a call (a native crash in
    llama.cpp, or the process was killed).

    Recorded against the example whose call was in flight; the backend starts
    a fresh worker for the next call. Repeated crashes in a row are a plain,
    fatal :class:`LMError` instead.
    """


class PromptTooLong(ThoughtloomError):
    """One request does not fit the model's context window.

    Not an :class:`LMError`: the service works, this example's prompt is the
    problem, so the eval runner records it for the example and goes on.
    """


class CacheMiss(ThoughtloomError):
    """A request was not in the cache while in ``replay`` mode."""


class BudgetExceeded(ThoughtloomError):
    """The per-question budget of calls or tokens is spent.

    Strategies catch this to return their best answer so far.
    """


class ParseError(ThoughtloomError):
    """Model output could not be parsed into the expected structure."""

    def __init__(self, message: str, *, raw: str = "", hint: str = "") -> None:
        super().__init__(message, hint=hint)
        self.raw = raw


class MalformedReply(TransientError):
    """A server answered 200 but the body is not a usable completion (bad
    JSON, no choices, a null choice, non-numeric usage...).

    Retried a few times (a proxy or a loaded server may garble one reply),
    then recorded against the example whose call it was: the service may be
    fine for other requests, so it does not stop the eval.
    """


class CallTimeout(TransientError):
    """One model call took longer than its timeout (``--timeout``).

    Retried like any transient error, then recorded against the example: a
    long prompt or generation is this example's problem, not the service's.
    """


class ExampleTimeout(ThoughtloomError):
    """One example ran past its total deadline (``--example-timeout``)."""
