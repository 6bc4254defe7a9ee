"""The controller: runs decomposed programs step by step, many side by side.

``Controller.run(program, calls, depth)`` executes one program for a batch of
questions in lockstep. Each round it

1. asks the decomposer for every unfinished run's next step in ONE batch
   (or takes the next line of the reference program), re-asking only the
   malformed ones, at most ``max_retries`` times;
2. expands each step with its operator (``#k`` references, foreach items);
3. groups all inputs by handler and calls each handler once with its batch
   (different handlers run concurrently);
4. appends ``A: <answer>`` to each run's history.

A run ends at ``[EOQ]``; its last answer is its result. Nested programs
(hierarchical and recursive handlers) go through the same ``run`` one level
deeper, so a foreach over a nested program is still one batch per round.

Handlers see a :class:`~.handlers.HandlerEnv` built here (the model, seed,
answer extraction, :meth:`Controller.search` with the run's ``k``, handler
lookup and the run's context), not the controller; a :class:`ProgramHandler`
holds :meth:`Controller.run` itself. A handler name resolves to a ``bind`` of
this run, a program, a registered function, a prompt, symbolic or built-in
handler, or a registered strategy (:mod:`.step_handlers`); a prompt is the file
the running program names for it (``Program.prompt_files``), else its own.

With ``structured`` the decomposer answers each turn with a JSON object
(handler, operator, question) under a JSON schema, i.e. grammar-constrained
decoding on backends that support it; the first JSON object in the reply
(``lm.structured.parse_json``) is turned back into a QS line and checked
like any other.

A step that asks again what the step before it asked (the same line and
inputs) and gets what it got (the same answer, or the same error: a handler
reply cut off at ``max_tokens``, say) ends the run ``malformed``: asked a
third time it would get it again, to the step limit.

A step's answer longer than :data:`MAX_ANSWER_CHARS` (rendered) is that
step's error with an empty answer: each nesting level renders its children's
answers again (a list as JSON, escaping the quotes inside), so hostile
replies that keep recursing could otherwise grow an answer exponentially.

Trace events (``decomp_step``, ``program_end``, ``malformed`` with ``what:
decomp_step``, ``retrieval``) and their fields: :mod:`thoughtloom.core.events`.
Each round starts with a ``phase`` event ("program step 4", with the
program's depth) for live progress.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any, Awaitable, Callable, Sequence

from ...core.errors import ConfigError, ParseError
from ...core.events import malformed, phase
from ...core.types import Passage, Request
from ...lm.structured import parse_json
from ..context import Context
from ..registry import available
from .catalogue import PROGRAMS, Program, get_program
from .config import DecompConfig
from .handlers import Call, Handler, HandlerEnv, Outcome, known_names, read_prompt, split_header
from .language import (PROJECT, PROJECT_FLAT, QUESTION, SELECT, End, Step, StepError, combine, expand, parse_step,
                       render_value)
from .record import Run, StepRecord
from .step_handlers import parse_bindings, resolve_handler, step_names


NEXT_STEP = ("Now continue the program below. Reply with only its next line, a QS: line in the "
             "same format as the examples above (or QS: [EOQ] if it is finished).")
NEXT_STEP_JSON = ("Now continue the program below. Reply with its next step as a JSON object "
                  '{"handler": ..., "operator": ..., "question": ...}. "operator" is the tag the examples '
                  'write in brackets (project_values or project_values_flat_unique), or "select" for a step '
                  'written without one. Use the handler name "EOQ" when the program is finished.')


def step_schema(handlers: set[str], can_end: bool) -> dict[str, Any]:
    """JSON schema for one decomposer step (grammar-constrained decoding).

    A program needs at least one step, so the first turn cannot choose EOQ.
    """
    names = sorted(handlers) + (["EOQ"] if can_end else [])
    return {"type": "object", "required": ["handler", "operator", "question"],
            "properties": {"handler": {"type": "string", "enum": names},
                           "operator": {"type": "string", "enum": [SELECT, PROJECT, PROJECT_FLAT]},
                           "question": {"type": "string"}}}


def json_step_line(text: str) -> str:
    """A structured step as a QS line (so parsing and checks are shared).

    The step is the first JSON value in the reply (:func:`parse_json`), so a
    backend that ignores the schema and wraps the object in prose or a code
    fence still yields it.
    """
    try:
        obj = parse_json(text)
    except ParseError as exc:
        raise StepError("unparseable", f"step is not JSON: {exc}") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("handler"), str):
        raise StepError("unparseable", "step JSON needs a handler")
    if obj["handler"] == "EOQ":
        return "[EOQ]"
    op = obj.get("operator") or "select"
    return f'({obj["handler"]}) [{op}] "{obj.get("question", "")}"'


RunPrograms = Callable[[Program, Sequence[Call], int], Awaitable[list[Run]]]

#: Characters a step's rendered answer may have; past it the step errs with an empty answer.
MAX_ANSWER_CHARS = 100_000


class ProgramHandler(Handler):
    """A nested decomposed program as a handler (hierarchy and recursion)."""

    kind = "program"

    def __init__(self, name: str, program: str, run_programs: RunPrograms) -> None:
        self.name, self.program, self.run_programs = name, program, run_programs

    async def answer(self, calls: Sequence[Call], env: HandlerEnv) -> list[Outcome]:
        depth = calls[0].depth + 1 if calls else 1
        runs = await self.run_programs(get_program(self.program), calls, depth)
        return [Outcome(r.final(), evidence=tuple(r.evidence), tokens=r.tokens, calls=r.calls,
                        error=None if r.status == "ok" else r.status, children=(r,))
                for r in runs]


def _nested_reason(run: Run) -> str:
    """Why a nested run stopped, naming the deepest run that did (not every level between)."""
    reason = run.stop_reason or ""
    head, _, tail = reason.partition(": ")
    if head.startswith("step ") and tail.startswith("nested run "):
        return tail  # it stopped because its own nested run did: name that one
    return f"nested run {run.id} ended {run.status}" + (f" ({reason})" if reason else "")


class Controller:
    """Runs decomposed programs for one question (``k``: passages per retrieval)."""

    def __init__(self, ctx: Context, cfg: DecompConfig, k: int) -> None:
        self.ctx, self.cfg = ctx, cfg
        self.k = k
        self.bindings = parse_bindings(cfg.bind)
        self._known = known_names(ctx.prompt_dir) | step_names(self.bindings)
        self._cache: dict[str, Handler] = {}
        self.started: list[Run] = []  # the top-level runs, as far as they got (a budget stop reports them)
        self.env = HandlerEnv(lm=ctx.lm_for("handler"), seed=ctx.seed, extract_answer=ctx.task.extract_answer,
                              search=lambda queries: self.search(queries, self.k), resolve=self.handler, ctx=ctx)

    # -- handlers -------------------------------------------------------------

    def handler(self, name: str, program: Program | None = None) -> Handler:
        bound = name in self.bindings  # this run's bind wins over every other meaning of the name
        if not bound and program is not None and program.self_name and name == program.self_name:
            return ProgramHandler(name, program.name, self.run)
        if not bound and name in PROGRAMS:
            return ProgramHandler(name, name, self.run)
        # the prompt file the name reads in this program (commaqa_fine_short: simp_qa -> simp_qa_short)
        file = program.prompt_file(name) if program is not None and not bound else name
        if file not in self._cache:
            self._cache[file] = resolve_handler(file, self.bindings, prefer_symbolic=self.cfg.handlers == "symbolic",
                                                prompt_dir=self.ctx.prompt_dir, task=self.ctx.task.name)
        return self._cache[file]

    def allowed(self, program: Program) -> set[str]:
        names = set(program.handlers) if program.handlers else self._known | set(PROGRAMS)
        return names | ({program.self_name} if program.self_name else set())

    async def search(self, queries: list[str], k: int) -> list[list[Passage]]:
        hits = await self.ctx.search(queries, k, required=True)
        return [[h.passage for h in hs] for hs in hits]

    # -- programs -------------------------------------------------------------

    async def run(self, program: Program, calls: Sequence[Call], depth: int) -> list[Run]:
        s = self.cfg
        runs = [Run(program.name, c.question, c.context, depth, id=c.run_id) for c in calls]
        if depth == 0:
            self.started.extend(runs)
        if depth > s.max_depth:
            for r in runs:
                self._end(r, "depth_limit")
            return runs
        if program.fixed or s.decomposer == "reference":
            if program.reference is None:
                raise ConfigError(f"program {program.name!r} has no reference program",
                                  hint="use --set decomposer=lm")
            for r in runs:
                try:
                    r.script = program.reference(r.question)
                except ValueError as exc:
                    self._malformed(r, "unparseable", str(exc), r.question, 0)
                    self._end(r, "malformed", r.unread)
        while active := [r for r in runs if not r.done]:
            for r in active:
                if len(r.steps) >= s.max_steps:
                    self._end(r, "step_limit")
            active = [r for r in active if not r.done]
            if not active:
                break
            phase(self.ctx.trace, "program step", max(len(r.steps) for r in active) + 1, depth=depth)
            steps = await self._next_steps(program, active)
            todo = []
            for r, step in zip(active, steps):
                if step is None:
                    self._end(r, "malformed", r.unread)
                elif isinstance(step, End):
                    self._end(r, "ok")
                elif r.script is not None and step.question == QUESTION:
                    # a fixed program's $question: the question as the problem has it (quotes, #k and all)
                    todo.append((r, replace(step, question=r.question), [r.question]))
                else:
                    todo.append((r, step, expand(step, r.answers)))
            await self._execute(program, todo)
        return runs

    def _end(self, run: Run, status: str, reason: str | None = None) -> None:
        run.done, run.status, run.stop_reason = True, status, reason
        self.ctx.trace.emit("program_end", run=run.id, program=run.program, depth=run.depth, status=status,
                            steps=len(run.steps), **({"reason": reason} if reason else {}))

    def _malformed(self, run: Run, kind: str, error: str, raw: str, attempt: int) -> None:
        run.format_errors += 1
        # the parser's message quotes the reply where the reply's form is the problem; the trace has it whole
        tries = "1 try" if attempt == 0 else f"{attempt + 1} tries"
        run.unread = f"step {len(run.steps) + 1} ({tries}): {kind}: {' '.join(error.split())}"
        malformed(self.ctx.trace, "decomp_step", kind, raw, error=error, run=run.id, program=run.program,
                  depth=run.depth, attempt=attempt)

    async def _next_steps(self, program: Program, runs: list[Run]) -> list[Step | End | None]:
        allowed = self.allowed(program)
        scripted = allowed | set(available())  # a script's step (code, not a reply) may name any strategy too
        out: list[Step | End | None] = [None] * len(runs)
        pending = []
        for i, r in enumerate(runs):
            if r.script is None:
                pending.append(i)
                continue
            line = r.script[len(r.steps)] if len(r.steps) < len(r.script) else "[EOQ]"
            try:
                out[i] = parse_step(line, scripted, len(r.answers), r.question)
            except StepError as exc:
                self._malformed(r, exc.kind, str(exc), line, 0)
        if not pending:
            return out
        demos = self._decomposer_prompt(program)
        structured = self.cfg.structured
        for attempt in range(self.cfg.max_retries + 1):
            greedy = attempt == 0
            requests = [Request.of(self._history(demos, runs[i], structured),
                                   stop=() if structured else ("\nA:",),
                                   json_schema=step_schema(allowed, bool(runs[i].answers)) if structured else None,
                                   max_tokens=self.cfg.decomposer_max_tokens,
                                   temperature=0.0 if greedy else self.cfg.retry_temperature,
                                   sample_index=attempt, seed=self.ctx.seed)
                        for i in pending]
            completions = await self.ctx.lm_for("decomposer").generate(requests)
            failed = []
            for i, c in zip(pending, completions):
                r = runs[i]
                r.tokens += c.usage.total_tokens
                r.calls += 1
                r.resampled += not greedy
                if c.truncated:  # a step cut off at max_tokens is not a step: ask again
                    self._malformed(r, "truncated", "the step was cut off at max_tokens", c.text, attempt)
                    failed.append(i)
                    continue
                try:
                    line = json_step_line(c.text) if structured else c.text
                    out[i] = parse_step(line, allowed, len(r.answers), r.question)
                except StepError as exc:
                    self._malformed(r, exc.kind, str(exc), c.text, attempt)
                    failed.append(i)
            pending = failed
            if not pending:
                break
        return out

    def _decomposer_prompt(self, program: Program) -> str:
        assert program.decomposer is not None
        text = read_prompt("decomposers", program.decomposer, self.ctx.task.name, self.ctx.prompt_dir)
        if text is None:
            raise ConfigError(f"no decomposer prompt decomp/decomposers/{program.decomposer}.txt")
        return split_header(text)[1]

    @staticmethod
    def _history(demos: str, run: Run, structured: bool = False) -> str:
        lines = [demos, "", NEXT_STEP_JSON if structured else NEXT_STEP, "", f"QC: {run.question}"]
        for step in run.steps:
            lines.append(f"QS: {step.line}")
            lines.append(f"A: {render_value(step.answer)}")
        return "\n".join(lines) + "\nQS:"

    async def _execute(self, program: Program, todo: list[tuple[Run, Step, list[str]]]) -> None:
        """Answer this round's steps: their inputs grouped by handler, each handler called once
        (concurrently), then each step recorded on its run, in order."""
        groups = _grouped(todo)
        outcomes, kinds = await self._dispatch(program, todo, groups)
        for (r, step, inputs), got in zip(todo, outcomes):
            self._record(r, step, inputs, got, kinds.get(step.handler, ""))

    async def _dispatch(self, program: Program, todo: list[tuple[Run, Step, list[str]]],
                        groups: dict[str, list[tuple[int, int]]]) -> tuple[list[list[Outcome]], dict[str, str]]:
        """Each handler called once with its batch, the handlers concurrently: per step the
        outcomes of its inputs in order, and each handler's kind (symbolic, prompt, retrieval,
        program)."""
        names = list(groups)
        kinds: dict[str, str] = {}

        async def call(name: str) -> list[Outcome]:
            # a nested run's id: its caller's run, step number (the step is appended after) and item
            calls = [Call(todo[ti][2][ii], todo[ti][0].context, tuple(todo[ti][0].evidence), todo[ti][0].depth,
                          run_id=f"{todo[ti][0].id}.{len(todo[ti][0].steps) + 1}.{ii + 1}", qc=todo[ti][0].question)
                     for ti, ii in groups[name]]
            handler = self.handler(name, program)
            kinds[name] = handler.kind
            return await handler.answer(calls, self.env)

        results = await asyncio.gather(*(call(n) for n in names))
        per_step: list[list[Outcome | None]] = [[None] * len(inputs) for _, _, inputs in todo]
        for name, outcomes in zip(names, results):
            for (ti, ii), o in zip(groups[name], outcomes):
                per_step[ti][ii] = o
        return [[o if o is not None else Outcome("", error="no outcome") for o in outcomes]
                for outcomes in per_step], kinds

    def _record(self, r: Run, step: Step, inputs: list[str], got: list[Outcome], kind: str) -> None:
        """One answered step on its run: the combined answer, new evidence, what it cost, what
        was cut off or shortened; traced (``decomp_step``), and the run ended if a nested one
        did not finish.

        A step's calls and tokens are its handler outcomes' own counts: one handler batch
        answers the inputs of several runs' steps, and the handlers of a round run at once,
        so the LM's meter (``Metered.totals``) cannot say which step spent what."""
        answer = combine(step, [o.value for o in got])
        errors = [o.error for o in got if o.error]
        size = len(render_value(answer))
        if size > MAX_ANSWER_CHARS:
            answer = ""
            errors.insert(0, f"answer too long: {size:,} characters (the limit is {MAX_ANSWER_CHARS:,})")
        seen = {p.id for p in r.evidence}
        for p in (p for o in got for p in o.evidence):
            if p.id not in seen:
                seen.add(p.id)
                r.evidence.append(p)
        tokens, calls = sum(o.tokens for o in got), sum(o.calls for o in got)
        r.tokens += tokens
        r.calls += calls
        children = [c for o in got for c in o.children]
        r.format_errors += sum(c.format_errors for c in children)
        r.resampled += sum(c.resampled for c in children)
        r.cut_off += sum(c.cut_off for c in children)
        r.evidence_shortened += sum(c.evidence_shortened for c in children)
        r.evidence_dropped += sum(c.evidence_dropped for c in children)
        for o in got:
            if o.cut_off is not None:
                r.cut_off += 1
                malformed(self.ctx.trace, "decomp_handler", "truncated", o.cut_off, run=r.id,
                          program=r.program, depth=r.depth, step=len(r.steps) + 1, question=step.question)
            if o.fit is not None:  # the prompt's passages did not all fit whole: say what was cut
                r.evidence_shortened += o.fit.shortened
                r.evidence_dropped += o.fit.dropped
                self.ctx.trace.emit("decomp_evidence", run=r.id, program=r.program, depth=r.depth,
                                    step=len(r.steps) + 1, handler=step.handler, passages=o.fit.passages,
                                    shortened=o.fit.shortened, dropped=o.fit.dropped)
        record = StepRecord(step.render(), step.handler, step.operator, inputs, answer, tokens, calls,
                            error=errors[0] if errors else None, children=children)
        r.steps.append(record)
        r.answers.append(answer)
        self.ctx.trace.emit("decomp_step", run=r.id, program=r.program, depth=r.depth, step=len(r.steps),
                            handler=step.handler, kind=kind, operator=step.operator, question=step.question,
                            inputs=inputs, answer=answer, tokens=tokens, calls=calls, error=record.error)
        stopped = next((c for c in children if c.status != "ok"), None)
        if stopped is not None:  # a nested program that did not finish leaves this one without an answer
            self._end(r, stopped.status, f"step {len(r.steps)}: {_nested_reason(stopped)}")
        elif _repeats_itself(r.steps):
            # the decomposer asks again what the step before asked and gets what it got (a reply cut off at
            # max_tokens is cut off again): it would go on so to the step limit, so the program stops here
            got = f"failed the same way ({record.error})" if record.error else "got the same answer"
            self._end(r, "malformed", f"step {len(r.steps)}: asked again what step {len(r.steps) - 1} asked, "
                                      f"and {got}")


def _repeats_itself(steps: Sequence[StepRecord]) -> bool:
    """Whether the last step repeats the one before it: the same line and inputs, and the same answer
    or the same failure."""
    if len(steps) < 2:
        return False
    last, before = steps[-1], steps[-2]
    return (last.line, last.inputs, last.answer, last.error) == (before.line, before.inputs, before.answer,
                                                                 before.error)


def _grouped(todo: list[tuple[Run, Step, list[str]]]) -> dict[str, list[tuple[int, int]]]:
    """Handler name -> the (step, input) places it answers this round: every input of every
    step, in order, so one call per handler answers all of them."""
    groups: dict[str, list[tuple[int, int]]] = {}
    for ti, (_, step, inputs) in enumerate(todo):
        for ii in range(len(inputs)):
            groups.setdefault(step.handler, []).append((ti, ii))
    return groups
