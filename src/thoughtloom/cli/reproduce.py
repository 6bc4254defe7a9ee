"""``thoughtloom reproduce``: run a paper's comparison suite and write its reproduction card.

``thoughtloom reproduce list`` prints the packaged suites; ``thoughtloom
reproduce SUITE`` runs every (dataset, method, seed) cell of it through the
eval runner into ``OUT/<dataset>/<method>[-seed<K>]/``, resuming whatever is
already there, and writes ``OUT/card.md`` and ``OUT/card.html`` at the end of
every sitting (also one that is interrupted). ``--dataset`` / ``--method``
choose the cells this sitting runs; the card always covers the whole suite.
``--dry-run`` runs a small pilot and prints the estimated cost of the rest;
``--replay`` rebuilds the card from the results folders, answering any
missing example from the completion cache alone (zero model calls).
``--executor ray`` runs each cell's examples on Ray workers, as ``eval``
does (:mod:`.scaleout`); the cluster is joined once for the whole sitting.
``--pack`` leaves OUT fit to commit beside the card (traces compressed, or
left out past ``--trace-limit``; :mod:`thoughtloom.eval.reproduce.pack`), so
that a later sitting on any machine resumes from it and extends n.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import functools
import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any, Awaitable, Callable, Iterator, Optional

import typer

from ..version import __version__
from ..core.errors import ConfigError, ThoughtloomError
from ..core.protocols import LM
from ..core.text import redact_credentials
from ..eval.assembly import RunSpec, default_suite_out
from ..eval.estimate import NOTHING, CostEstimate
from ..eval.identity import ConfigMismatch
from ..eval.settings import EvalResources
from ..eval.reproduce import card as cards
from ..eval.reproduce import pack as packing
from ..eval.reproduce import run as runs
from ..eval.reproduce import suites
from ..eval.reproduce.render import verdict_counts, write_card
from ..lm import Budget
from ..view.card_curves import card_figures
from . import estimate as est
from . import options as o
from . import scaleout
from .index import IndexDir
from .render import RichProgress, count, err, notes, out, shown

SuiteArg = Annotated[str, typer.Argument(
    help="A suite name (see `thoughtloom reproduce list`), `list`, or a suite .toml file.")]
DataRoot = Annotated[Optional[Path], typer.Option(
    "--data-root", envvar="THOUGHTLOOM_DATA", help="Folder the suites' data files are read from.")]
Names = Annotated[Optional[list[str]], typer.Option(help="Run only this one (repeatable); the card still covers all.")]


def git_commit() -> str | None:
    """The source checkout's commit (``+dirty`` with local changes), or None outside git."""
    where = Path(__file__).resolve().parent
    try:
        rev = subprocess.run(["git", "-C", str(where), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                             text=True, timeout=10)
        if rev.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(where), "status", "--porcelain", "--", "."], capture_output=True,
                               text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return rev.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _command() -> str:
    return redact_credentials(shlex.join(["thoughtloom", *sys.argv[1:]]))


def print_suites(as_json: bool) -> None:
    loaded = [suites.load(name) for name in suites.available()]
    if as_json:
        out.print_json(json.dumps([{"name": s.name, "title": s.title, "paper": s.paper, "n": s.n,
                                    "datasets": [d.id for d in s.datasets], "methods": [m.id for m in s.methods],
                                    "claims": len(s.claims), "paper_figures": len(s.figures)} for s in loaded]))
        return
    for s in loaded:
        out.print(f"[bold]{s.name:<18}[/] {s.title}", highlight=False)
        out.print(f"{'':<18} [dim]n={s.n} · datasets: {', '.join(d.id for d in s.datasets)} · methods: "
                  f"{', '.join(m.id for m in s.methods)} · {count(len(s.claims), 'claim')}, {count(len(s.figures), 'paper figure')}[/]",
                  highlight=False)


class SuiteBars:
    """A suite-level line before each cell, then the eval's own progress bar for it."""

    def __init__(self, plan: runs.SuitePlan) -> None:
        self.plan = plan

    @contextlib.contextmanager
    def cell(self, cell: runs.Cell, index: int, total: int, status: runs.SuiteStatus) -> Iterator[RichProgress]:
        eta = status.eta_s()
        when = f" · suite ETA at this pace {est.duration(eta)}" if eta is not None else ""
        notes.print(f"[bold]cell {index + 1}/{total}[/] {cell.name} · suite {status.done}/{status.total} examples"
                    f" done{when}", highlight=False)
        with RichProgress(cell.dataset.primary, console=notes, label=cell.name) as bar:
            yield bar


def _write_card(card_plan: runs.SuitePlan, slices: dict[str, runs.Slice], provenance: dict[str, Any],
                missing: dict[str, str], trace_limit: int | None = None) -> None:
    """The card, then (``trace_limit``: ``--pack``) the folder packed to commit."""
    provenance = {**provenance, "sittings": runs.sittings(card_plan.out)}
    card = cards.collect(card_plan, slices, provenance, missing)
    md, page = write_card(card, card_plan.out, card_figures(card))
    verdicts = ", ".join(f"{count} {verdict}" for verdict, count in verdict_counts(card).items()) or "none"
    out.print(f"card: {md} · {page} · claims: {verdicts}", highlight=False)
    if trace_limit is not None:
        packed = packing.pack(card_plan.out, trace_limit)
        dropped = [p.folder for p in packed if not p.kept]
        out.print(f"packed {card_plan.out} to commit: {count(len(packed), 'trace')} compressed"
                  + (f", {len(dropped)} left out (over {trace_limit / 1e6:g} MB compressed): {', '.join(dropped)}"
                     if dropped else ""), highlight=False, soft_wrap=True)


def reproduce(
    suite: SuiteArg,
    model: o.Model = "embedded",
    n: Annotated[Optional[int], typer.Option("--n", min=1, help="Examples per dataset (default: the suite's).")] = None,
    seeds: Annotated[Optional[int], typer.Option(min=1, help="Seeds per method (default: the suite's).")] = None,
    out_dir: Annotated[Optional[Path], typer.Option(
        "--out", "-o", help="Results folder (default runs/reproduce/SUITE; resumes if it exists).")] = None,
    data_root: DataRoot = None,
    dataset: Names = None,
    method: Names = None,
    concurrency: o.Concurrency = 1,
    max_calls: Annotated[Optional[int], typer.Option(min=1, help="Override the suite's calls per example.")] = None,
    max_tokens: Annotated[Optional[int], typer.Option(min=1, help="Override the suite's tokens per example.")] = None,
    dry_run: est.DryRun = False,
    pilot: est.PilotSize = est.DEFAULT_PILOT,
    price_in: est.PriceIn = None,
    price_out: est.PriceOut = None,
    replay: Annotated[bool, typer.Option(
        "--replay", help="Rebuild the card from the results folders; answer any missing example from the "
                         "cache only (a miss is an error). Makes no model call.")] = False,
    as_json: est.AsJson = False,
    force: Annotated[bool, typer.Option(
        "--force", help="Resume into cells whose results were made with another config (their run.json).")] = False,
    cache: o.CachePath = o.DEFAULT_CACHE,
    no_cache: o.NoCache = False,
    index: IndexDir = None,
    entail: Annotated[Optional[str], typer.Option(
        help="Entailment judge (llm, lexical, cross:PATH, none); default: the suite's, else llm.")] = None,
    prompts: o.PromptDir = None,
    n_ctx: o.NCtx = o.DEFAULT_N_CTX,
    threads: o.Threads = None,
    parallel: o.Parallel = None,
    timeout: o.Timeout = o.DEFAULT_TIMEOUT_S,
    role_model: o.RoleModels = None,
    executor: scaleout.ExecutorName = "local",
    ray_address: scaleout.RayAddress = None,
    workers: scaleout.Workers = 2,
    pack: Annotated[bool, typer.Option(
        "--pack", help="After the sitting, leave OUT fit to commit beside the card (e.g. --out "
                       "docs/cards/runs/SUITE): traces gzip-compressed, lock files removed; a later sitting on "
                       "any machine resumes from it.")] = False,
    trace_limit: Annotated[float, typer.Option(
        "--trace-limit", min=0, help="With --pack: leave out a cell's trace whose compressed size is over "
                                     "this many MB.")] = packing.TRACE_LIMIT / 1e6,
) -> None:
    """Run a paper's comparison suite at equal budgets and write OUT/card.md and OUT/card.html."""
    if suite == "list":
        print_suites(as_json)
        return
    if dry_run and replay:
        raise ConfigError("--dry-run and --replay cannot be used together",
                          hint="--replay spends nothing to estimate; drop --dry-run")
    loaded = suites.load(suite)
    out_dir = out_dir or default_suite_out(loaded.name)
    budget = Budget(max_calls=max_calls or loaded.budget.max_calls,
                    max_tokens=max_tokens or loaded.budget.max_tokens)
    card_plan = runs.make_plan(loaded, out_dir, n=n, seeds=seeds, budget=budget)  # the card covers every cell
    slices, missing = runs.load_slices(card_plan, data_root)
    plan = runs.make_plan(loaded, out_dir, n=n, seeds=seeds, budget=budget, methods=method or (),
                          datasets=dataset or [d.id for d in loaded.datasets if d.id in slices] or [loaded.datasets[0].id])
    for d in plan.datasets:
        if d.id in missing:  # named with --dataset, or no dataset has data here
            raise ConfigError(missing[d.id])
    for name, reason in missing.items():
        notes.print(f"[yellow]skipping dataset {name}[/]: {shown(reason)}", soft_wrap=True)
    for d in plan.datasets:  # said before any call: a sample's n is not the suite's, and its folders are another data file's
        sl = slices.get(d.id)
        if sl is not None and sl.sample:
            notes.print(f"[yellow]dataset {d.id} runs on the task's packaged sample[/] {sl.path.name} "
                        f"({len(sl.examples)} examples), not {d.data}: pass --data-root DIR (or set "
                        "THOUGHTLOOM_DATA) to the folder that holds the suite's data", soft_wrap=True)
    todo = runs.missing_cells(plan, slices) if replay else plan.cells()
    # every cell's budget is the plan's (run_cells); the spec carries it for the workers' and the record's sake
    spec = o.run_spec(model, cache, o.cache_mode(no_cache, replay, False), max_calls=plan.budget.max_calls,
                      max_tokens=plan.budget.max_tokens, index=index, entail=entail or loaded.entail or "llm",
                      prompts=prompts, n_ctx=n_ctx, threads=threads, parallel=parallel, timeout_s=timeout,
                      concurrency=concurrency, role_models=o.parse_role_models(role_model))
    on_ray = scaleout.executor(executor, spec, ray_address, workers) is not None  # flags checked
    executors = functools.partial(scaleout.executor, executor, spec, ray_address, workers) if on_ray else None
    needed = bool(todo) or dry_run  # a replay of complete cells needs no model at all
    # opened before the sitting is logged (it records the model's id), and refused before anything is written;
    # on Ray, each worker opens its own from the spec
    lm = spec.open_lm() if needed and not on_ray else None
    provenance = {"version": __version__, "commit": git_commit(), "command": _command(), "generated": _now(),
                  "entail": spec.entail, "index": str(index) if index else None}
    logged = runs.log_sitting(out_dir, loaded, {
        "kind": "dry-run" if dry_run else "replay" if replay else "run", "started": provenance["generated"],
        "command": provenance["command"], "model": lm.model_id if lm is not None else model if needed else None,
        "executor": executor,
        "commit": provenance["commit"], "version": __version__, "n": plan.n, "seeds": plan.seeds,
        "datasets": [d.id for d in plan.datasets], "methods": [m.id for m in plan.methods]})
    write_card = functools.partial(_write_card, card_plan, slices, provenance, missing,
                                   int(trace_limit * 1e6) if pack else None)
    identity = {"command": [redact_credentials(a) for a in sys.argv], "force": force, "executors": executors,
                "sitting": len(logged) - 1}
    if not needed:
        write_card()
        return
    with _cluster(ray_address) if on_ray else contextlib.nullcontext():
        if dry_run:
            parts = _dry_run(plan, slices, spec, lm, pilot, identity)
            est.print_estimate(sum(parts.values(), NOTHING), price_in, price_out, parts, as_json=as_json)
        else:
            _run_and_write_card(plan, slices, spec, lm, todo, identity, write_card)


@contextlib.contextmanager
def _cluster(address: str | None) -> Iterator[None]:
    """Ray joined (or a local cluster started) once for every cell of the sitting, and left at the end."""
    from ..eval.ray_executor import connect

    ray, connected = connect(address)
    try:
        yield
    finally:
        if connected:
            ray.shutdown()


async def _on(spec: RunSpec, lm: LM | None, cells: Callable[[EvalResources | None], Awaitable[None]]) -> None:
    """``cells`` on the spec's services around ``lm`` (None on Ray: the workers open their own);
    ``lm`` is closed after."""
    try:
        async with spec.open(lm) if lm is not None else contextlib.nullcontext() as res:
            await cells(res)
    finally:
        if lm is not None:
            await lm.aclose()


def _run_and_write_card(plan: runs.SuitePlan, slices: dict[str, runs.Slice], spec: RunSpec, lm: LM | None,
                        todo: list[runs.Cell], identity: dict[str, Any], write_card: Callable[[], None]) -> None:
    """Run the cells; the card is written however the sitting ends."""
    async def cells(res: EvalResources | None) -> None:
        await runs.run_cells(plan, slices, spec, res=res, progress=SuiteBars(plan), cells=todo, **identity)

    try:
        asyncio.run(_on(spec, lm, cells))
    except ConfigMismatch as exc:  # the same line, with the flags that answer it; the card shows what is done
        write_card()
        raise ConfigMismatch(exc.folder, exc.differences,
                             hint="pass --force to resume anyway, or choose another --out") from None
    except KeyboardInterrupt:
        err.print(f"[yellow]interrupted[/]: finished examples are saved under {plan.out}; "
                  "run the same command again to resume.", soft_wrap=True)
        write_card()
        raise typer.Exit(130) from None
    except ThoughtloomError:  # a fatal error (service down, a replay cache miss): the card shows what is done
        write_card()
        raise
    write_card()


def _dry_run(plan: runs.SuitePlan, slices: dict[str, runs.Slice], spec: RunSpec, lm: LM | None, size: int,
             identity: dict[str, Any]) -> dict[str, CostEstimate]:
    async def cells(res: EvalResources | None) -> None:
        await runs.pilot(plan, slices, spec, size, progress=SuiteBars(plan), res=res, **identity)

    asyncio.run(_on(spec, lm, cells))
    assert spec.cache is not None  # the CLI always names a cache file (--no-cache turns it off)
    with est.stored_times(spec.cache, spec.cache_mode) as model_seconds:
        return runs.estimate(plan, slices, spec.concurrency, model_seconds)
