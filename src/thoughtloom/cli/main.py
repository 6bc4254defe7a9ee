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

from ..core.errors import ConfigError, ThoughtloomError
from ..core.text import printable, redact_credentials
from ..eval.identity import ConfigMismatch
from ..eval.estimate import folder_estimate
from ..eval.lock import OutputLock
from ..eval.results import disk_errors, dump_line
from ..eval.assembly import EvalRequest, assemble
from ..lm import CompletionStore
from . import answer, cache_merge, config, info, scaleout, server_health, usercode
from . import estimate as est
from . import options as o
from .conventions import ABORTS, CLICK_ERRORS, Commands, Version
from .render import RichProgress, err, notes, out, print_summary
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

@app.callback()
def _root(ctx: typer.Context, version: Version = False) -> None:
    """Option defaults come from the config files, for the command about to parse its options."""
    ctx.default_map = config.default_map(ctx.command, ctx)


app.command(epilog=answer.DEMO_EXIT_HELP)(answer.demo)
app.command(epilog=answer.EXIT_HELP)(o.with_run_options(answer.run))


@app.command("eval")
@o.with_run_options
def eval_(
    opts: o.RunOptions,
    strategy: o.StrategyName,
    task: o.TaskName,
    data: Annotated[Optional[Path], typer.Option(
        "--data", "-d", help="Dataset file or folder (default: the task's packaged sample; "
                             "see `thoughtloom data list`).")] = None,
    input_field: o.InputField = "question",
    gold_field: o.GoldField = "answer",
    metric: o.MetricSpec = None,
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
    task_obj = usercode.task(task, input_field=input_field, gold_field=gold_field, metric_spec=metric)
    spec = opts.spec(concurrency=concurrency, seed=seed)
    run = assemble(spec, EvalRequest(
        usercode.strategy(strategy), task_obj, o.parse_sets(opts.sets), data=data, offset=offset, limit=limit,
        out=out_dir, retry_errors=retry_errors, example_timeout_s=example_timeout,
        breaker=server_health.settings(server_failures, server_silence, server_wait), force=force,
        command=sys.argv))
    run_on = scaleout.executor(executor, spec, ray_address, workers)
    if run.dataset.sample:
        notes.print(f"[dim]no --data: the packaged sample of {task} ({run.dataset.path}); "
                    "`thoughtloom data list` says where the full set is[/]", soft_wrap=True)
    if run.pooled_note is not None:
        notes.print(f"[dim]{escape(run.pooled_note)}[/]", soft_wrap=True)
    for line in run.notes:
        notes.print(f"[dim]note: {escape(line)}[/]", soft_wrap=True)
    out_dir = run.out
    examples = run.dataset.examples
    # Lock first: a folder in use is refused in one line, before the model loads.
    with disk_errors(out_dir), OutputLock(out_dir):
        async def go() -> dict[str, Any]:
            with RichProgress(task_obj.primary_metric, console=notes) as progress:
                return await run.run(executor=run_on, progress=progress, lock=False,
                                     pilot=pilot if dry_run else None)

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
        with est.stored_times(opts.cache, spec.cache_mode) as model_seconds:
            estimate = folder_estimate(out_dir, [e.problem.id for e in examples], concurrency=concurrency,
                                       model_seconds=model_seconds)
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
def cache_stats(ctx: typer.Context, cache: o.CachePath = o.DEFAULT_CACHE, as_json: info.AsJson = False) -> None:
    """Entries, size and stored model time of the cache."""
    if not cache.expanduser().is_file() and not _given(ctx, "cache"):  # the default one, before any run
        if as_json:
            out.print_json(json.dumps({"path": str(cache), "entries": 0, "exists": False}))
        else:
            out.print(f"{cache}: no cache yet (a run writes it at its first model call)", highlight=False)
        return
    store = _existing_cache(cache)
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
    store = _existing_cache(cache)
    if not yes and not typer.confirm(f"delete {'all' if model is None else model} entries of {cache}?"):
        store.close()
        raise typer.Exit(1)
    out.print(f"deleted {store.clear(model)} entries")
    store.close()


cache_app.command("merge")(cache_merge.merge)


def _given(ctx: typer.Context, name: str) -> bool:
    """Whether the option ``name`` was given on the command line (not a default, variable or config file)."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name == "COMMANDLINE"


def _existing_cache(path: Path) -> CompletionStore:
    """The cache file at ``path``; one that does not exist is an error, not an empty cache made there."""
    if not path.expanduser().is_file():
        raise ConfigError(f"no cache file {path}",
                          hint="pass --cache PATH of a cache a run wrote; THOUGHTLOOM_CACHE sets the default")
    return CompletionStore(path)


def _nearest_option(exc: BaseException) -> str | None:
    """'no option --limt (did you mean --limit?)' for a mistyped option: click lists every option
    that shares a few letters; the nearest one, if any is near, is the useful hint."""
    name, possible = getattr(exc, "option_name", None), getattr(exc, "possibilities", None)
    if type(exc).__name__ != "NoSuchOption" or not isinstance(name, str):
        return None
    import difflib

    near = difflib.get_close_matches(name, list(possible or ()), n=1, cutoff=0.75)
    return f"no option {name}" + (f" (did you mean {near[0]}?)" if near else "")


def _strategy_hint(exc: BaseException) -> str:
    """Where ``run`` and ``eval`` differ in how they take the strategy, the way the other one takes it:
    ``run`` positionally (``run cot QUESTION``), ``eval`` as ``-S/--strategy``."""
    ctx = getattr(exc, "ctx", None)
    command = getattr(getattr(ctx, "command", None), "name", None)
    kind = type(exc).__name__
    param = getattr(getattr(exc, "param", None), "name", None)
    if command == "eval" and (param == "strategy" or kind == "UsageError" and "extra argument" in str(exc)):
        return "; eval takes the strategy as an option: thoughtloom eval -S NAME --task TASK (run takes it first)"
    if command == "run" and kind == "NoSuchOption" and getattr(exc, "option_name", "") in ("--strategy", "-S"):
        return "; run takes the strategy first: thoughtloom run NAME QUESTION"
    return ""


def _one_line(text: str) -> str:
    """An error as one line: control characters shown as escapes, a URL's user:password hidden."""
    return " ".join(printable(redact_credentials(str(text))).split())


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
        message = _nearest_option(exc) or (exc.format_message() if hasattr(exc, "format_message") else str(exc))
        hint = _strategy_hint(exc)
        message = message.rstrip(".") + hint if hint else message
        err.print(f"error: {_one_line(message)}{where}", highlight=False, soft_wrap=True, markup=False)
        sys.exit(getattr(exc, "exit_code", 2))
    except ABORTS:
        err.print("aborted")
        sys.exit(130)
    except OSError as exc:  # disk full, permission denied, ... on a path the user gave
        err.print(f"[red]error:[/] {escape(_one_line(str(exc)))}", highlight=False, soft_wrap=True)
        sys.exit(1)
    sys.exit(rc if isinstance(rc, int) else 0)
