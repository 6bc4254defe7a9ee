"""``thoughtloom demo`` and ``thoughtloom run``: one question, its answer, and whether it is right.

Exit status of ``run`` (see :data:`EXIT_CODES`): 0 an answer (right,
or with nothing to check it against), 1 the question failed (an error), 2
bad usage or configuration (before any model call), 3 no finished answer
(the strategy stopped early: its budget, a malformed program step, a reply
cut off at max_tokens, or nothing could be read), 4 an answer that was checked and is wrong (``run --gold``,
or a task's own rule such as Game of 24's), 130 interrupted. ``demo``
exits 0 whether or not the embedded model gets its question right: it
shows that the install works, and says how to get a better answer.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Annotated, Any, Callable, Optional

import typer
from rich.markup import escape

from .. import strategies, tasks
from ..core.errors import ConfigError
from ..core.events import count_step_problems
from ..core.protocols import LM
from ..core.text import printable
from ..core.types import Problem
from ..eval.results import dump_line
from ..eval.assembly import RunSpec
from ..eval.runner import ProblemRun, run_problem
from ..eval.summary import tally_step_problems
from ..strategies.result import Result
from ..tasks.checks import Check, against_gold, check_answer, gold_applies
from . import options as o
from . import usercode
from .render import RichStatus, err, notes, out, print_step_problems, rule, shown, usage_line

EXIT_CODES = {0: "an answer (right, or nothing to check it against)", 1: "the question failed (an error)",
              2: "bad usage or configuration",
              3: "no finished answer: the strategy stopped early, a reply was cut off, or none could be read",
              4: "an answer that was checked and is wrong (--gold, or the task's own rule)", 130: "interrupted"}
EXIT_HELP = "Exit status: " + "; ".join(f"{code} {what}" for code, what in EXIT_CODES.items()) + "."
#: ``demo`` says whether its answer is right but exits 0 either way (it checks the install, not the model).
DEMO_EXIT_HELP = ("Exit status: 0 an answer, right or wrong (it says which); "
                  + "; ".join(f"{code} {EXIT_CODES[code]}" for code in (1, 2, 130)) + ".")

DEMO_QUESTION = ("A baker makes 3 trays of 12 muffins and sells 20 of them. "
                 "How many muffins are left?")
DEMO_GOLD = "16"  # 3 * 12 - 20
STRONGER = ("the embedded 135M model is fast and weak; for answers you can trust point --model at a stronger "
            "one: a .gguf file, openai:MODEL@URL or litellm:PROVIDER/MODEL (see `thoughtloom models`)")


async def _answer(strategy: strategies.Strategy, task: tasks.Task, problem: Problem, spec: RunSpec, *,
                  status: RichStatus | None = None, opened: Callable[[LM], None] | None = None) -> ProblemRun:
    """One question through the eval runner's per-example path on ``spec``'s services, shown live on
    ``status``; ``opened`` hears of the model once it is open. The model is closed after."""
    async with spec.open() as resources:
        if opened is not None:
            opened(resources.lm)
        return await run_problem(strategy, task, problem, resources, spec.settings(), progress=status)


def demo(
    model: o.Model = "embedded",
    n: Annotated[int, typer.Option(min=1, help="Self-consistency samples.")] = 5,
    cache: o.CachePath = o.DEFAULT_CACHE,
    no_cache: o.NoCache = False,
    threads: o.Threads = None,
    parallel: o.Parallel = None,
) -> None:
    """Self-consistency (cot-sc) on a short word problem, on the embedded model by default; says if it is right."""
    # the demo's services are the model alone: no retriever, no judge
    spec = o.run_spec(model, cache, o.cache_mode(no_cache, False, False), entail="none", threads=threads,
                      parallel=parallel)
    strategy = spec.strategy("cot-sc", o.parse_sets([f"n={n}"]))
    task = tasks.get("gsm8k")
    out.print(f"[bold]question:[/] {DEMO_QUESTION}")

    def opened(lm: LM) -> None:
        notes.print(f"[dim]sampling {n} chains of thought on {lm.model_id} ...[/]")

    with RichStatus(notes) as status:
        answered = asyncio.run(_answer(strategy, task, Problem("demo", DEMO_QUESTION), spec, status=status,
                                       opened=opened))
    result = _result_or_exit(answered)
    samples = ", ".join(str(a) for a in result.details.get("samples", []))
    out.print(f"[bold]samples:[/] {shown(samples)}")
    out.print(f"[bold]answer:[/] {shown(result.answer or '(none)')}{vote_note(result)}")
    right, _ = against_gold(task, result.answer or None, DEMO_GOLD)
    out.print(f"[bold]expected:[/] {DEMO_GOLD} · " + ("[green]right[/]" if right else "[red]wrong[/]"))
    if not right and model == "embedded":
        notes.print(f"[dim]{STRONGER}[/]")
    out.print(usage_line(answered.usage, answered.seconds))


def vote_note(result: Result) -> str:
    """' (vote share 40%)', saying how a tie was broken when there was one."""
    if result.confidence is None:
        return ""
    tally = result.details.get("tally") or {}
    top = max(tally.values(), default=None)
    tied = [k for k, v in tally.items() if v == top]
    tie = f"; a tie of {len(tied)} answers, won by the one sampled first" if len(tied) > 1 else ""
    return f" (vote share {result.confidence:.0%}{tie})"


def run(
    strategy: Annotated[str, typer.Argument(help="Strategy name (see `thoughtloom strategies`), or MODULE:CLASS for your own.",
                                            autocompletion=o.complete_strategy)],
    question: Annotated[str, typer.Argument(help="The question or task input ('-' reads it from stdin).")],
    opts: o.RunOptions,
    task: Annotated[str, typer.Option(
        "--task", "-t", help="Task whose prompts and answer format to use (MODULE:CLASS for your own).",
        autocompletion=o.complete_task)] = "freeform",
    gold: Annotated[Optional[str], typer.Option(
        "--gold", help="The right answer: score this question with the task's metric (exit 4 when wrong).")] = None,
    show_program: Annotated[bool, typer.Option(
        "--show-program", help="Print the strategy's report (e.g. decomp's executed program), also with --json.")] = False,
    trace_out: Annotated[Optional[Path], typer.Option("--trace", help="Append the trace (JSON lines) here.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Answer one question with a strategy: its answer, whether that is right (where it can be checked), its cost."""
    task_obj = usercode.task(task)
    spec = opts.spec()
    strat = spec.strategy(usercode.strategy(strategy), o.parse_sets(opts.sets), task_obj)
    question = _question(question)
    if gold is not None and not gold_applies(task_obj):
        raise ConfigError(f"--gold does not apply to --task {task_obj.name}: its answers are checked by its "
                          "own rule", hint="drop --gold")
    problem = Problem("cli", question)
    for line in spec.setup_notes(strat, task_obj):
        notes.print(f"[dim]note: {escape(line)}[/]", soft_wrap=True)
    try:
        with RichStatus(notes) as status:
            answered = asyncio.run(_answer(strat, task_obj, problem, spec, status=status))
    except KeyboardInterrupt:
        cached = spec.cache is not None and spec.cache_mode != "off"
        err.print("[yellow]interrupted[/]: no answer" + ("; the same command again replays the model calls made "
                                                       "so far from the cache" if cached else ""), soft_wrap=True)
        raise typer.Exit(130) from None
    if trace_out is not None:
        with trace_out.open("a", encoding="utf-8") as fh:
            fh.writelines(dump_line(e) for e in answered.trace.events)
    result = _result_or_exit(answered)
    problems = count_step_problems(answered.trace.events)  # as an eval record keeps them
    answer = result.answer or None
    verdict = _verdict(task_obj, problem, answer, gold)
    stop = stop_reason(result)
    if as_json:
        out.print_json(dump_line({"answer": result.answer, "confidence": result.confidence,
                                  "truncated": result.truncated, "stopped": result.stopped,
                                  "step_problems": problems, "check": _check_json(verdict),
                                  "text": result.text, "details": result.details,
                                  "usage": answered.usage.as_dict(), "seconds": answered.seconds,
                                  **({"report": strat.report(result)} if show_program else {})}))
    else:
        _print_answer(strat, result, verdict, stop)
        print_step_problems(tally_step_problems([problems]))
        out.print(usage_line(answered.usage, answered.seconds))
    code = 3 if stop is not None else 4 if isinstance(verdict, Check) and verdict.ok is False else 0
    if code:
        raise typer.Exit(code)


def _question(question: str) -> str:
    """The question, read from stdin for '-'; an empty one is refused before any model call."""
    from_stdin = question == "-"
    if from_stdin:
        question = sys.stdin.read()
    if not question.strip():
        raise ConfigError("the question is empty" + (" (stdin gave no text)" if from_stdin else ""),
                          hint="pass the question as an argument, or '-' to read it from stdin")
    return question.strip()


def _verdict(task: tasks.Task, problem: Problem, answer: str | None, gold: str | None) -> Check | None:
    if gold is not None:
        right, scores = against_gold(task, answer, gold)
        said = " · ".join(f"{k} {v:.3f}" for k, v in scores.items())
        return Check(right, f"expected {gold}: {'right' if right else 'wrong'} ({said})")
    return check_answer(task, problem, answer)


def _check_json(verdict: Check | None) -> dict[str, Any] | None:
    return None if verdict is None else {"ok": verdict.ok, "message": verdict.message}


def stop_reason(result: Result) -> str | None:
    """Why a run ended without a finished answer (its budget, a malformed step), or None."""
    status = result.details.get("status") if isinstance(result.details, dict) else None
    if result.stopped:
        return f"stopped by the {result.stopped}" if result.stopped == "budget" else f"stopped: {result.stopped}"
    if isinstance(status, str) and status not in ("ok", ""):
        return f"stopped: {status}"
    if result.truncated:
        return "a reply was cut off at max_tokens"
    if not result.answer:
        return "no answer could be read from the model's replies"
    return None


def _print_answer(strat: strategies.Strategy, result: Result, verdict: Check | None, stop: str | None) -> None:
    report = strat.report(result)
    if report:
        out.print(printable(report), highlight=False, markup=False)
        rule(out)
    elif result.text and result.text.strip() != result.answer:
        out.print(printable(result.text.strip()), highlight=False, markup=False)
        rule(out)
    cut = (" [yellow](a reply was cut off at max_tokens: not a finished answer; raise the cap: the strategy's "
           "max_tokens with --set, or for decomp the handler prompt's #: max_tokens line, see --prompts)[/]"
           if result.truncated else "")
    stopped = (" [yellow](the budget ran out first: the best answer so far; raise it with --max-calls N)[/]" if result.stopped == "budget" else "")
    out.print(f"[bold]answer:[/] {shown(result.answer or '(none)')}{cut}{stopped}")
    if verdict is not None:
        colour = {True: "green", False: "red", None: "yellow"}[verdict.ok]
        out.print(f"[bold]check:[/] [{colour}]{shown(verdict.message)}[/]")
    if stop is not None and result.stopped != "budget" and not result.truncated:  # those say it on their line
        out.print(f"[yellow]{shown(stop)}[/]")


def _result_or_exit(answered: ProblemRun) -> Result:
    """The strategy's result; a question that failed is one line on stderr and exit status 1."""
    if answered.result is None:
        err.print(f"[red]error:[/] {shown(' '.join(str(answered.error or '').split()))}", highlight=False,
                  soft_wrap=True)
        err.print(usage_line(answered.usage, answered.seconds), highlight=False)
        raise typer.Exit(1)
    return answered.result
