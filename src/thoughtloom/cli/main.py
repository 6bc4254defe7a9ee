"""The ``thoughtloom`` command line. The only layer that reads env vars, config files and flags.

Every command takes -v/-q before or after its name and finds its option
defaults in the config files (:mod:`.conventions`, :mod:`.config`); the
listing commands live in :mod:`.info`.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.markup import escape

from .. import strategies, tasks
from ..core.errors import ConfigError, ThoughtloomError
from ..core.events import count_step_problems
from ..core.protocols import LM
from ..core.text import encodable
from ..core.types import Problem
from ..eval.identity import ConfigMismatch, DataSource
from ..eval.estimate import folder_estimate
from ..eval.lock import OutputLock
from ..eval.results import disk_errors, dump_line
from ..eval.runner import EvalResources, EvalSettings, ProblemRun, evaluate, run_notes, run_problem
from ..eval.summary import tally_step_problems
from ..lm import CompletionStore
from ..strategies.base import Result
from ..tasks.datasets import load_examples
from . import cache_merge, config, info, scaleout, server_health
from . import estimate as est
from . import options as o
from .conventions import ABORTS, CLICK_ERRORS, Commands, Version
from .render import RichProgress, RichStatus, err, notes, out, print_step_problems, print_summary, shown, usage_line
from .data import data_app
from .index import index_app
from .reproduce import reproduce
from . import view as view_commands

app = typer.Typer(
    name="thoughtloom",
    cls=Commands,
    help="Structured LLM reasoning: decomposed prompting, graphs of thoughts, tree search.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
cache_app = typer.Typer(help="Inspect, clear or merge completion caches.", no_args_is_help=True)
app.add_typer(cache_app, name="cache")
app.add_typer(index_app, name="index")
app.add_typer(data_app, name="data")
app.command("reproduce")(reproduce)

DEMO_QUESTION = ("A baker makes 3 trays of 12 muffins and sells 20 of them. "
                 "How many muffins are left?")


@app.callback()
def _root(ctx: typer.Context, version: Version = False) -> None:
    """Option defaults come from the config files, for the command about to parse its options."""
    ctx.default_map = config.default_map(ctx.command, ctx)


async def _answer(strategy: strategies.Strategy, task: tasks.Task, problem: Problem, lm: LM,
                  settings: EvalSettings, opts: o.RunOptions | None = None, *,
                  status: RichStatus | None = None) -> ProblemRun:
    """One question through the eval runner's per-example path, shown live on ``status``;
    the model is closed after."""
    try:
        resources = EvalResources(lm) if opts is None else opts.resources(lm)
        return await run_problem(strategy, task, problem, resources, settings, progress=status)
    finally:
        await lm.aclose()


@app.command()
def demo(
    model: o.Model = "embedded",
    n: Annotated[int, typer.Option(min=1, help="Self-consistency samples.")] = 5,
    cache: o.CachePath = o.DEFAULT_CACHE,
    no_cache: o.NoCache = False,
    threads: o.Threads = None,
    parallel: o.Parallel = None,
) -> None:
    """Self-consistency (cot-sc) on a short word problem, on the embedded model by default."""
    strategy = o.build_strategy("cot-sc", [f"n={n}"])
    task = tasks.get("gsm8k")
    lm = o.build_lm(model, cache, o.cache_mode(no_cache, False, False), 1,
                    threads=threads, parallel=parallel)
    out.print(f"[bold]question:[/] {DEMO_QUESTION}")
    notes.print(f"[dim]sampling {n} chains of thought on {lm.model_id} ...[/]")
    with RichStatus(notes) as status:
        answered = asyncio.run(_answer(strategy, task, Problem("demo", DEMO_QUESTION), lm, EvalSettings(),
                                       status=status))
    result = _result_or_exit(answered)
    samples = ", ".join(str(a) for a in result.details.get("samples", []))
    out.print(f"[bold]samples:[/] {shown(samples)}")
    conf = f" (vote share {result.confidence:.0%})" if result.confidence is not None else ""
    out.print(f"[bold]answer:[/] {shown(result.answer or '(none)')}{conf}")
    out.print(usage_line(answered.usage, answered.seconds))


@app.command()
@o.with_run_options
def run(
    strategy: Annotated[str, typer.Argument(help="Strategy name (see `thoughtloom strategies`).",
                                            autocompletion=o.complete_strategy)],
    question: Annotated[str, typer.Argument(help="The question or task input.")],
    opts: o.RunOptions,
    task: Annotated[str, typer.Option("--task", "-t", help="Task whose prompts and answer format to use.",
                                      autocompletion=o.complete_task)] = "freeform",
    show_program: Annotated[bool, typer.Option(
        "--show-program", help="Print the strategy's report (e.g. decomp's executed program), also with --json.")] = False,
    trace_out: Annotated[Optional[Path], typer.Option("--trace", help="Append the trace (JSON lines) here.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Answer one question with a strategy and print the answer and its cost."""
    task_obj = tasks.get(task)
    strat = opts.strategy(strategy, task_obj)
    with RichStatus(notes) as status:
        answered = asyncio.run(_answer(strat, task_obj, Problem("cli", question), opts.lm(),
                                       EvalSettings(budget=opts.budget()), opts, status=status))
    if trace_out is not None:
        with trace_out.open("a", encoding="utf-8") as fh:
            fh.writelines(dump_line(e) for e in answered.trace.events)
    result = _result_or_exit(answered)
    problems = count_step_problems(answered.trace.events)  # as an eval record keeps them
    if as_json:
        out.print_json(dump_line({"answer": result.answer, "confidence": result.confidence,
                                  "truncated": result.truncated, "stopped": result.stopped,
                                  "step_problems": problems,
                                  "text": result.text, "details": result.details,
                                  "usage": answered.usage.as_dict(), "seconds": answered.seconds,
                                  **({"report": strat.report(result)} if show_program else {})}))
        return
    report = strat.report(result)
    if report:
        out.print(encodable(report), highlight=False, markup=False)
        out.rule()
    elif result.text and result.text.strip() != result.answer:
        out.print(encodable(result.text.strip()), highlight=False, markup=False)
        out.rule()
    cut = (" [yellow](a reply was cut off at max_tokens: not a finished answer; raise the cap: the strategy's "
           "max_tokens with --set, or for decomp the handler prompt's #: max_tokens line, see --prompts)[/]"
           if result.truncated else "")
    stopped = (" [yellow](the budget ran out first: the best answer so far; raise it with --max-calls N "
               "--set max_calls=N)[/]" if result.stopped == "budget" else "")
    out.print(f"[bold]answer:[/] {shown(result.answer or '(none)')}{cut}{stopped}")
    print_step_problems(tally_step_problems([problems]))
    out.print(usage_line(answered.usage, answered.seconds))


def _result_or_exit(answered: ProblemRun) -> Result:
    """The strategy's result; a question that failed is one line on stderr and exit status 1."""
    if answered.result is None:
        err.print(f"[red]error:[/] {shown(_one_line(answered.error or ''))}", highlight=False, soft_wrap=True)
        err.print(usage_line(answered.usage, answered.seconds), highlight=False)
        raise typer.Exit(1)
    return answered.result


@app.command("eval")
@o.with_run_options
def eval_(
    opts: o.RunOptions,
    strategy: o.StrategyName,
    task: o.TaskName,
    data: Annotated[Optional[Path], typer.Option(
        "--data", "-d", help="Dataset file or folder (default: the task's packaged sample; "
                             "see `thoughtloom data list`).")] = None,
    limit: Annotated[Optional[int], typer.Option(help="Only the first N examples (after --offset).", min=1)] = None,
    offset: Annotated[int, typer.Option(help="Skip the first N examples (e.g. to tune on a held-aside slice).",
                                        min=0)] = 0,
    concurrency: o.Concurrency = 1,
    out_dir: Annotated[Optional[Path], typer.Option(
        "--out", "-o", help="Results folder (resumes if it exists and its run.json has this config).")] = None,
    example_timeout: Annotated[Optional[float], typer.Option(
        "--example-timeout", min=0.001,
        help="Seconds one example may take in all; past it the example gets an error record.")] = None,
    retry_errors: Annotated[bool, typer.Option(help="Rerun examples whose earlier record has an error.")] = False,
    seed: Annotated[int, typer.Option(help="Sampling seed.")] = 0,
    force: Annotated[bool, typer.Option(
        "--force", help="Resume into --out even if its results were made with another config (OUT/run.json).")] = False,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print the final summary (with --dry-run: the estimate) as JSON (progress stays on stderr).")] = False,
    executor: scaleout.ExecutorName = "local",
    ray_address: scaleout.RayAddress = None,
    workers: scaleout.Workers = 2,
    server_failures: server_health.ServerFailures = server_health.DEFAULTS.trip_after,
    server_silence: server_health.ServerSilence = server_health.DEFAULTS.silence_s,
    server_wait: server_health.ServerWait = server_health.DEFAULTS.max_wait_s,
    dry_run: est.DryRun = False,
    pilot: est.PilotSize = est.DEFAULT_PILOT,
    price_in: est.PriceIn = None,
    price_out: est.PriceOut = None,
) -> None:
    """Evaluate a strategy on a benchmark; writes OUT/results.jsonl, OUT/run.json and OUT/summary.json."""
    task_obj = tasks.get(task)
    strat = opts.strategy(strategy, task_obj)
    run_on = scaleout.executor(executor, opts, concurrency, ray_address, workers)
    if example_timeout is not None and not example_timeout < float("inf"):
        raise ConfigError(f"bad --example-timeout {example_timeout}", hint="pass a number of seconds")
    dataset = load_examples(task_obj, data, offset=offset, limit=limit)
    if dataset.sample:
        notes.print(f"[dim]no --data: the packaged sample of {task} ({dataset.path}); "
                    "`thoughtloom data list` says where the full set is[/]", soft_wrap=True)
    examples = dataset.examples
    out_dir = out_dir or Path("runs") / f"{task}_{strategy}"
    mode = opts.cache_mode()
    settings = EvalSettings(concurrency=concurrency, budget=opts.budget(),
                            retry_errors=retry_errors, seed=seed, example_timeout_s=example_timeout,
                            breaker=server_health.settings(server_failures, server_silence, server_wait))
    meta = run_notes(dataset, settings, offset=offset, limit=limit, cache_mode=mode, index=opts.index,
                     entail=opts.entail, timeout_s=opts.timeout)
    # Lock first: a folder in use is refused in one line, before the model loads.
    with disk_errors(out_dir), OutputLock(out_dir):
        lm = opts.lm(concurrency) if run_on is None else None  # on Ray, each worker opens its own
        if lm is not None:
            meta = {"model": lm.model_id, **meta}

        async def go() -> dict[str, Any]:
            try:
                resources = None if lm is None else opts.resources(lm)
                with RichProgress(task_obj.primary_metric, console=notes) as progress:
                    return await evaluate(strat, task_obj, examples[:pilot] if dry_run else examples, resources,
                                          out_dir, settings=settings, progress=progress, meta=meta, lock=False,
                                          force=force, source=DataSource(dataset.path, offset, limit),
                                          command=sys.argv, executor=run_on)
            finally:
                if lm is not None:
                    await lm.aclose()

        try:
            summary = asyncio.run(go())
        except ConfigMismatch as exc:  # the same line, with the flags that answer it
            raise ConfigMismatch(exc.folder, exc.differences,
                                 hint="pass --force to resume anyway, or choose another --out") from None
        except KeyboardInterrupt:
            err.print(f"[yellow]interrupted[/]: finished examples are saved in {out_dir}; "
                      "run the same command again to resume.", soft_wrap=True)
            raise typer.Exit(130) from None
    if dry_run:  # the pilot's records stay: the real run resumes past them
        estimate = folder_estimate(out_dir, [e.problem.id for e in examples], concurrency=concurrency)
        est.print_estimate(estimate, price_in, price_out, as_json=as_json)
    elif as_json:
        out.print_json(dump_line(summary))
    else:
        print_summary(summary, str(out_dir))


app.command("models")(info.models)
app.command("strategies")(info.list_strategies)
app.command("view")(view_commands.view)  # the run inspector, after the commands that make runs
app.command("compare")(view_commands.compare)


@cache_app.command("stats")
def cache_stats(cache: o.CachePath = o.DEFAULT_CACHE, as_json: info.AsJson = False) -> None:
    """Entries, size and stored model time of the cache."""
    store = CompletionStore(cache)
    try:
        stats = store.stats()
    finally:
        store.close()
    if as_json:
        out.print_json(json.dumps(stats))
        return
    out.print(f"[bold]{stats['path']}[/]: {stats['entries']} entries · {stats['bytes'] / 1e6:.1f} MB · "
              f"{stats['tokens']} tokens · {stats['model_seconds_stored']:.1f} s of model time stored")
    for model, entries in stats["by_model"].items():  # type: ignore[union-attr]
        out.print(f"  {entries:>8}  {model}", highlight=False)


@cache_app.command("clear")
def cache_clear(
    cache: o.CachePath = o.DEFAULT_CACHE,
    model: Annotated[Optional[str], typer.Option(help="Only entries of this model id.")] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False,
) -> None:
    """Delete cached completions (all, or one model's)."""
    if not yes and not typer.confirm(f"delete {'all' if model is None else model} entries of {cache}?"):
        raise typer.Exit(1)
    store = CompletionStore(cache)
    out.print(f"deleted {store.clear(model)} entries")
    store.close()


cache_app.command("merge")(cache_merge.merge)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def main() -> None:
    try:
        rc = app(standalone_mode=False, prog_name="thoughtloom")
    except ThoughtloomError as exc:
        err.print(f"[red]error:[/] {escape(_one_line(str(exc)))}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except CLICK_ERRORS as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # bare `thoughtloom cache`: the help is the message
            exc.show()  # type: ignore[union-attr]
            sys.exit(getattr(exc, "exit_code", 2))
        # click would print usage + a help hint + the error; we print one line
        ctx = getattr(exc, "ctx", None)
        where = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        err.print(f"error: {_one_line(message)}{where}", highlight=False, soft_wrap=True, markup=False)
        sys.exit(getattr(exc, "exit_code", 2))
    except ABORTS:
        err.print("aborted")
        sys.exit(130)
    except OSError as exc:  # disk full, permission denied, ... on a path the user gave
        err.print(f"[red]error:[/] {escape(_one_line(str(exc)))}", highlight=False, soft_wrap=True)
        sys.exit(1)
    sys.exit(rc if isinstance(rc, int) else 0)
