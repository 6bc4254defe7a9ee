"""Asking for a plan: one call, or the paper's three (``plan_stages``).

``plan_stages=1`` (the default): the ``hgot_plan`` prompt; its reply holds
the steps and their dependencies.

``plan_stages=3`` follows HGOT's appendix C (and the authors' code):

1. **Plan** (C.1, prompt ``hgot_plan``): the steps. The dependencies it
   writes are not used.
2. **Self-reflection** (C.2, prompt ``hgot_reflect``): given the steps, the
   model describes which depend on which ("Step 2 depends on Step 1.").
3. **Formalization** (C.3, prompt ``hgot_formalize``): the descriptions
   rewritten in the arrow notation (``(Step 1 and Step 2) -> Step 3``).

The plan's edges are read from the formalization; when it names no step
and does not say "None", from the self-reflection. Stages 2 and 3 run only
after a plan whose steps can be read, so an unusable plan costs one call and
a usable one three. Their demos come from the plan demos (each demo's steps
with its dependencies described, then formalized: :func:`stage_demos`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

from ...core.events import RAW_CHARS
from ...core.types import Completion, Request
from ..context import Context
from ..prompting import finished
from . import deps
from .config import HGOTConfig
from .plan import Plan, PlanError, parse_plan, plan_request

_NONE = re.compile(r"\bnone\b|\bno\s+dependenc", re.IGNORECASE)


@dataclass(frozen=True)
class PlanReplies:
    """The replies of one planning attempt: the plan, and with three stages the
    self-reflection and the formalization (None when not asked)."""

    plan: Completion
    reflection: Completion | None = None
    formalization: Completion | None = None

    @property
    def truncated(self) -> bool:
        """The plan itself was cut off (a stage cut off falls back to the plan's own dependencies)."""
        return self.plan.truncated

    def dependencies(self) -> str | None:
        """The dependency text that replaces the plan's own, or None to keep the plan's."""
        for reply in (self.formalization, self.reflection):
            if reply is not None and (deps.mentions(reply.text) or _NONE.search(reply.text)):
                return reply.text
        return None

    def parse(self, max_steps: int) -> Plan:
        return parse_plan(self.plan.text, max_steps=max_steps, dependencies=self.dependencies())

    def record(self) -> dict[str, Any]:
        """The stage replies as the ``plan`` event carries them (clipped); empty for one stage."""
        out = {}
        for name, reply in (("reflection", self.reflection), ("formalization", self.formalization)):
            if reply is not None:
                out[name] = reply.text[:RAW_CHARS]
        return out


def _block_plans(plan_demos: str) -> list[tuple[Plan, str]]:
    """The (plan, steps text) of each rendered plan demo block that parses."""
    out = []
    for block in plan_demos.strip().split("\n\n"):
        steps = "\n".join(ln for ln in block.splitlines() if ln.lower().startswith("step"))
        try:
            out.append((parse_plan(block), steps))
        except PlanError:
            continue
    return out


def stage_demos(plan_demos: str) -> tuple[str, str]:
    """The self-reflection and formalization demos made from the plan demos' blocks."""
    reflect, formalize = [], []
    for plan, steps in _block_plans(plan_demos):
        described = deps.describe(plan.edges)
        reflect.append(f"Steps:\n{steps}\nDependencies: {described}")
        formalize.append(f"Descriptions: {described}\nDependencies: {deps.render(plan.edges)}")
    return "".join(f"\n{b}\n" for b in reflect), "".join(f"\n{b}\n" for b in formalize)


def _steps_text(plan: Plan) -> str:
    return "\n".join(f"Step {i}: {q}" for i, q in enumerate(plan.steps, 1))


async def ask_plan(ctx: Context, cfg: "HGOTConfig", question: str, passages: Sequence[str], demos: str,
                   feedback: str = "") -> PlanReplies:
    """One planning attempt: ``cfg.plan_stages`` calls (1, or 3 once the plan's steps read)."""
    req = plan_request(ctx, question, passages, demos, max_tokens=cfg.plan_max_tokens,
                       max_steps=cfg.max_steps, feedback=feedback)
    reply = (await ctx.lm.generate([req]))[0]
    if cfg.plan_stages == 1 or reply.truncated:
        return PlanReplies(reply)
    try:
        steps = _steps_text(parse_plan(reply.text, max_steps=cfg.max_steps))
    except PlanError:
        return PlanReplies(reply)
    reflect_demos, formalize_demos = stage_demos(demos)
    prompt = ctx.prompt("hgot_reflect", demos=reflect_demos, steps=steps)
    reflection = (await ctx.lm.generate([Request.of(prompt, max_tokens=cfg.plan_max_tokens, seed=ctx.seed,
                                                    stop=("\n\n", "\nSteps:"))]))[0]
    if not finished(ctx, reflection, "hgot_reflect", question=question):
        return PlanReplies(reply)  # a cut-off description is no plan's dependencies: the plan's own
    described = " ".join(reflection.text.split()) or "None"
    prompt = ctx.prompt("hgot_formalize", demos=formalize_demos, descriptions=described)
    formal = (await ctx.lm.generate([Request.of(prompt, max_tokens=cfg.plan_max_tokens, seed=ctx.seed,
                                                stop=("\n\n", "\nDescriptions:"))]))[0]
    if not finished(ctx, formal, "hgot_formalize", question=question):
        return PlanReplies(reply)
    return PlanReplies(reply, reflection, formal)


def plan_notes(plan: Plan, replies: PlanReplies) -> dict[str, Any]:
    """The ``plan`` event's optional fields: edges dropped (to break a cycle) or naming no
    step, and the stage replies; none for a plain one-stage plan without either."""
    notes: dict[str, Any] = {}
    if plan.dropped:
        notes["dropped"] = [list(e) for e in plan.dropped]
    if plan.unknown:
        notes["unknown"] = [list(e) for e in plan.unknown]
    return {**notes, **replies.record()}
