"""Per-question accounting: budget caps, usage totals and the call trace.

The eval runner wraps the shared LM in a fresh :class:`Metered` for every
question, so budgets and totals never leak between questions (and two
questions can run concurrently in one process). ``Strategy.run`` puts
``ctx.lm`` behind a :class:`CallCap`, the strategy's own ``max_calls`` on
top of that budget. Both say how many calls are left
(:class:`~thoughtloom.core.protocols.Budgeted`), read with
:func:`remaining_calls`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Sequence

from ..core.errors import BudgetExceeded
from ..core.protocols import Budgeted, LM
from ..core.trace import Trace
from ..core.types import Completion, Request, request_hash


@dataclass(frozen=True)
class Budget:
    """Caps per question. ``None`` means unlimited.

    Cached calls count like fresh ones so a replayed run takes exactly the
    path the original run took.
    """

    max_calls: int | None = None
    max_tokens: int | None = None


@dataclass
class UsageTotals:
    calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    truncated_calls: int = 0  # replies cut off at max_tokens (finish_reason "length")

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, completion: Completion) -> None:
        u = completion.usage
        self.calls += 1
        self.cached_calls += int(u.cached)
        self.prompt_tokens += u.prompt_tokens
        self.completion_tokens += u.completion_tokens
        self.latency_s += u.latency_s
        self.truncated_calls += int(completion.truncated)

    def merge(self, other: "UsageTotals") -> None:
        self.calls += other.calls
        self.cached_calls += other.cached_calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.latency_s += other.latency_s
        self.truncated_calls += other.truncated_calls

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "UsageTotals":
        """Inverse of :meth:`as_dict` (``total_tokens`` is derived, so ignored)."""
        return cls(calls=d.get("calls", 0), cached_calls=d.get("cached_calls", 0),
                   prompt_tokens=d.get("prompt_tokens", 0), completion_tokens=d.get("completion_tokens", 0),
                   latency_s=d.get("latency_s", 0.0), truncated_calls=d.get("truncated_calls", 0))

    def as_dict(self) -> dict[str, float | int]:
        return {
            "calls": self.calls,
            "cached_calls": self.cached_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "latency_s": round(self.latency_s, 6),
            "truncated_calls": self.truncated_calls,
        }


@dataclass
class Metered:
    """Wraps an LM: enforces a :class:`Budget`, sums usage, traces each call.

    ``in_flight`` (for live progress) is told ``+n`` as a batch of ``n``
    calls goes out and ``-n`` when it is back (or failed), before its
    calls are traced.

    The call budget counts the calls still in flight: concurrent batches (a
    strategy's ``asyncio.gather``) together never pass ``max_calls``, and a
    batch is refused whole when it does not fit. ``before_batch`` is told
    ``(calls sent so far, tokens back so far)`` as each batch arrives, before
    the budget is checked: the anytime recorder's cue
    (:class:`thoughtloom.strategies.anytime.Anytime`) to note what the run
    would answer were its budget spent here.
    """

    inner: LM
    budget: Budget = field(default_factory=Budget)
    trace: Trace | None = None
    totals: UsageTotals = field(default_factory=UsageTotals)
    trace_text: bool = True
    in_flight: Callable[[int], None] | None = None
    before_batch: Callable[[int, int], None] | None = None
    pending: int = 0  # calls sent and not back yet (counted by the call budget)
    #: per role (:meth:`for_role`): the usage of the calls sent through that role's model
    by_role: dict[str, UsageTotals] = field(default_factory=dict)

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def remaining_calls(self) -> int | None:
        if self.budget.max_calls is None:
            return None
        return max(0, self.budget.max_calls - self.sent)

    @property
    def sent(self) -> int:
        """Calls sent so far: back (``totals.calls``) or still in flight."""
        return self.totals.calls + self.pending

    def _check(self, n: int) -> None:
        b, t = self.budget, self.totals
        if b.max_calls is not None and self.sent + n > b.max_calls:
            self._exceeded("calls", b.max_calls, self.sent)
        if b.max_tokens is not None and t.total_tokens >= b.max_tokens:
            self._exceeded("tokens", b.max_tokens, t.total_tokens)

    def _exceeded(self, what: str, limit: int, used: int) -> None:
        if self.trace is not None:
            self.trace.emit("budget_exceeded", limit=what, cap=limit, used=used)
        raise BudgetExceeded(f"budget of {limit} {what} per question is spent ({used} used)")

    def usage_by_role(self) -> dict[str, dict[str, float | int]]:
        """Each role's usage (:meth:`UsageTotals.as_dict`), the calls through no role's own model
        under ``default``; empty when no role had a model of its own."""
        if not self.by_role:
            return {}
        rest = UsageTotals(**{k: getattr(self.totals, k) - sum(getattr(u, k) for u in self.by_role.values())
                              for k in UsageTotals.__dataclass_fields__})
        return {"default": rest.as_dict(), **{r: u.as_dict() for r, u in sorted(self.by_role.items())}}

    def for_role(self, role: str, inner: LM) -> "RoleView":
        """``inner`` (a role's own model stack) behind this meter: its calls count against the same
        budget, go into the same trace (each ``llm_call`` saying ``role``) and are summed in
        :attr:`by_role` as well as in :attr:`totals`."""
        return RoleView(inner, lambda requests: self._generate(inner, requests, role), self.remaining_calls)

    async def generate(self, requests: Sequence[Request]) -> list[Completion]:
        return await self._generate(self.inner, requests, None)

    async def _generate(self, inner: LM, requests: Sequence[Request], role: str | None) -> list[Completion]:
        requests = list(requests)
        if not requests:
            return []
        if self.before_batch is not None:
            self.before_batch(self.sent, self.totals.total_tokens)
        self._check(len(requests))
        if self.in_flight is not None:
            self.in_flight(len(requests))
        self.pending += len(requests)
        try:
            completions = await inner.generate(requests)
        finally:
            self.pending -= len(requests)
            if self.in_flight is not None:
                self.in_flight(-len(requests))
        for request, completion in zip(requests, completions):
            self.totals.add(completion)
            if role is not None:
                self.by_role.setdefault(role, UsageTotals()).add(completion)
            if self.trace is not None:
                self._trace_call(request, completion, inner.model_id, role)
        return completions

    def _trace_call(self, request: Request, completion: Completion, model_id: str, role: str | None) -> None:
        u = completion.usage
        extra: dict[str, Any] = {} if role is None else {"role": role}
        if self.trace_text:
            extra.update(messages=[[m.role, m.content] for m in request.messages], text=completion.text)
        assert self.trace is not None
        self.trace.emit(
            "llm_call",
            request_hash=request_hash(model_id, request),
            model=model_id,
            sample_index=request.sample_index,
            temperature=request.temperature,
            prompt_tokens=u.prompt_tokens,
            completion_tokens=u.completion_tokens,
            cached=u.cached,
            latency_s=round(u.latency_s, 6),
            finish_reason=completion.finish_reason,
            **extra,
        )

    async def aclose(self) -> None:  # the shared inner LM is closed by its owner
        return None


def remaining_calls(lm: LM) -> int | None:
    """Calls left in ``lm``'s budget: its :meth:`~thoughtloom.core.protocols.Budgeted.remaining_calls`
    where it is :class:`~thoughtloom.core.protocols.Budgeted`, else ``None`` (no known bound)."""
    return lm.remaining_calls() if isinstance(lm, Budgeted) else None


@dataclass
class RoleView:
    """A role's model (``inner``, whose ``model_id`` it shows) reached through a meter or a cap
    shared with the question's other models: ``send`` checks, counts and traces, then asks ``inner``."""

    inner: LM
    send: Callable[[Sequence[Request]], Awaitable[list[Completion]]] = field(repr=False)
    left: Callable[[], int | None] = field(repr=False)

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def remaining_calls(self) -> int | None:
        return self.left()

    async def generate(self, requests: Sequence[Request]) -> list[Completion]:
        return await self.send(requests)

    async def aclose(self) -> None:  # the role's model is closed by its owner
        return None


@dataclass
class CallCap:
    """``lm`` limited to a strategy's own ``max_calls`` per question (on top of any runner
    budget, which ``inner`` may carry as a :class:`Metered`); made by ``Strategy.run``."""

    inner: LM
    max_calls: int
    trace: Trace
    used: int = 0

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def remaining_calls(self) -> int:
        own = max(0, self.max_calls - self.used)
        other = remaining_calls(self.inner)
        return own if other is None else min(own, other)

    def for_role(self, inner: LM) -> RoleView:
        """``inner`` (a role's model, already behind the question's meter) under this same cap."""
        return RoleView(inner, lambda requests: self._generate(inner, requests), self.remaining_calls)

    async def generate(self, requests: Sequence[Request]) -> list[Completion]:
        return await self._generate(self.inner, requests)

    async def _generate(self, inner: LM, requests: Sequence[Request]) -> list[Completion]:
        requests = list(requests)
        other = remaining_calls(self.inner)
        # a runner budget as tight as this cap refuses the batch itself (its "calls" limit is the one
        # the user set with --max-calls, which is this cap too unless --set gave another)
        if self.used + len(requests) > self.max_calls and (other is None or other > self.max_calls - self.used):
            self.trace.emit("budget_exceeded", limit="strategy_calls", cap=self.max_calls, used=self.used)
            raise BudgetExceeded(f"the strategy's bound of {self.max_calls} calls per question is spent "
                                 f"({self.used} used)", hint="raise it with --max-calls N (or --set max_calls=N)")
        self.used += len(requests)
        return await inner.generate(requests)

    async def aclose(self) -> None:  # the inner LM is closed by its owner
        return None
