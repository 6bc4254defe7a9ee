"""Running a suite: every (dataset, method, seed) cell through the eval runner.

Each cell is one eval, assembled as every eval is
(:func:`~thoughtloom.eval.assembly.assemble` of the cell's
:func:`cell_request`: its method's strategy and settings, its slice, its
notes), into its own folder, ``OUT/<dataset>/<method>`` (``-seed<K>`` added for seeds after the
first), so a suite resumes cell by cell and example by example after any
stop, and a later sitting with a larger ``n`` or more seeds only runs what is
new. All cells run on the services of one :class:`~thoughtloom.eval.assembly.RunSpec`
opened once (:meth:`~thoughtloom.eval.assembly.RunSpec.open`: one completion cache, one
backend, one judge), the suite's per-example budget, and per dataset one
retriever (``--index``, else BM25 over the data file's pooled paragraphs,
built once on those services for all methods: :attr:`EvalResources.pooled_indexes`). With an executor factory (``--executor ray``)
no model opens here: each cell's examples run on a fresh executor's
workers, which open their own services from the same spec
(:mod:`thoughtloom.eval.ray_executor`), and the driver writes the records.

A dry run (:func:`pilot`) runs the first few examples of each method's first
seed into those same folders, then :func:`estimate` extrapolates from every
record there to what the rest of the plan will cost.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ContextManager, Protocol, Sequence

from ... import tasks
from ...core.errors import ConfigError
from ..assembly import EvalRequest, RunSpec, assemble
from ...lm.meter import Budget
from ...tasks.datasets import Dataset, load_examples, sample_path
from ..estimate import CostEstimate, cached_time, extrapolate
from ..executors import Executor
from ..identity import DataSource
from ..progress import Progress
from ..results import atomic_write, read_records
from ..runner import EvalResources
from .suites import DatasetSpec, MethodSpec, Suite

#: Written beside the cells: the suite, and one entry per sitting (command, model, commit).
RUN_LOG = "reproduce.json"


@dataclass(frozen=True)
class Cell:
    dataset: DatasetSpec
    method: MethodSpec
    seed: int

    @property
    def name(self) -> str:
        return f"{self.dataset.id}/{self.method.id}" + (f"-seed{self.seed}" if self.seed else "")

    def folder(self, out: Path) -> Path:
        return out / self.name


@dataclass(frozen=True)
class SuitePlan:
    """What this sitting covers: the suite cut to the chosen datasets, methods, n and seeds (named apart
    from HGOT's question plan, :class:`thoughtloom.strategies.hgot.plan.Plan`)."""

    suite: Suite
    out: Path
    n: int
    seeds: int
    budget: Budget
    datasets: tuple[DatasetSpec, ...]
    methods: tuple[MethodSpec, ...]

    def cells(self) -> list[Cell]:
        return [Cell(d, m, s) for d in self.datasets for m in self.methods for s in range(self.seeds)]


def make_plan(suite: Suite, out: Path, *, n: int | None = None, seeds: int | None = None,
              budget: Budget | None = None, datasets: Sequence[str] = (), methods: Sequence[str] = ()) -> SuitePlan:
    """The plan, refusing a dataset or method id the suite does not have."""
    def chosen(kind: str, items: tuple, wanted: Sequence[str]) -> tuple:
        known = [i.id for i in items]
        unknown = [w for w in wanted if w not in known]
        if unknown:
            raise ConfigError(f"suite {suite.name} has no {kind} {unknown[0]!r}", hint=f"choose from: {', '.join(known)}")
        return tuple(i for i in items if not wanted or i.id in wanted)

    return SuitePlan(suite, out, n or suite.n, seeds or suite.seeds, budget or suite.budget,
                chosen("dataset", suite.datasets, datasets), chosen("method", suite.methods, methods))


@dataclass
class Slice:
    """A dataset's examples for this plan, and the task object that loaded them."""

    task: tasks.Task
    path: Path
    examples: list[tasks.Example]
    sample: bool = False  # the task's packaged sample stands in for the suite's data file
    data_root: Path | None = None  # where the methods' data settings are read (None with a sample)

    @property
    def ids(self) -> list[str]:
        return [e.problem.id for e in self.examples]


#: A suite dataset's ``data`` for data that ship with the package, the task's packaged set
#: (``tasks/data/samples/``), read with or without a data root: the outline suite's outlines.
PACKAGED = "packaged"


def load_slice(dataset: DatasetSpec, data_root: Path | None, n: int) -> Slice:
    """The dataset's examples ``offset`` to ``offset + n`` under ``data_root``.

    Without a data root, the task's packaged sample stands in when it is a
    part of the same file (same name), from its first example: a few dozen
    examples to try a suite on, not the suite's slice.
    """
    task = tasks.get(dataset.task)
    if dataset.strata:
        task.draw_strata = True  # HGOT §4: each length stratum drawn to the paper's share of the file
    packaged = dataset.data == PACKAGED  # the suite's own data ship in the package (story outlines)
    if data_root is not None and not packaged:
        path = data_root.expanduser() / dataset.data
        if not path.exists():
            raise ConfigError(f"data file not found: {path} (dataset {dataset.id!r})",
                              hint="check --data-root / THOUGHTLOOM_DATA")
        if dataset.stratum is None:
            loaded = load_examples(task, path, offset=dataset.offset, limit=n)
        else:  # the stratum's questions, offset and n counted among them (suites.DatasetSpec.select)
            loaded = load_examples(task, path)
            loaded = dataclasses.replace(loaded, examples=dataset.select(task, list(loaded.examples), n))
        extra = tuple(data_root.expanduser() / f for f in dataset.corpus)  # more corpus files pooled with its own
        for p in extra:
            if not p.is_file():
                raise ConfigError(f"corpus file not found: {p} (dataset {dataset.id!r})",
                                  hint="check --data-root / THOUGHTLOOM_DATA")
        if extra or dataset.index:  # a task with no pooled corpus refuses, naming itself
            task.pool_with(extra, dataset.index)  # the index settings (title links) travel with the corpus
        return Slice(task, loaded.path, list(loaded.examples), loaded.sample, data_root.expanduser())
    else:
        try:
            sample = sample_path(dataset.task)
        except ConfigError:
            sample = None
        if sample is None or not packaged and sample.name != Path(dataset.data).name:
            raise ConfigError(f"dataset {dataset.id!r} reads {dataset.data}, which is not packaged",
                              hint="pass --data-root DIR (or set THOUGHTLOOM_DATA) to the folder that holds it; "
                                   "`thoughtloom data list` says where to get it")
        loaded = load_examples(task, None, offset=dataset.offset if packaged else 0, limit=n)
    return Slice(task, loaded.path, list(loaded.examples), loaded.sample and not packaged)


def load_slices(plan: SuitePlan, data_root: Path | None) -> tuple[dict[str, Slice], dict[str, str]]:
    """The plan's datasets that have data here, and for the others why not."""
    slices, missing = {}, {}
    for d in plan.datasets:
        try:
            slices[d.id] = load_slice(d, data_root, plan.n)
        except ConfigError as exc:
            missing[d.id] = str(exc)
    return slices, missing


@dataclass
class SuiteStatus:
    """Examples done and to do over the plan, and this sitting's pace, for progress displays."""

    total: int
    done: int
    new: int = 0
    started: float = dataclasses.field(default_factory=time.monotonic)

    def eta_s(self) -> float | None:
        elapsed = time.monotonic() - self.started
        return elapsed / self.new * (self.total - self.done) if self.new else None


class SuiteProgress(Protocol):
    def cell(self, cell: Cell, index: int, total: int, status: SuiteStatus) -> ContextManager[Progress | None]:
        """Entered around each cell; yields the eval's per-example progress for it."""
        ...


def cell_meta(plan: SuitePlan, cell: Cell) -> dict[str, Any]:
    """What a cell's summary.json says about where it comes from (the same in every sitting), beside
    what every eval's says (:meth:`.assembly.RunSpec.notes`: data, slice, seed, budget, index, ...)."""
    return {"suite": plan.suite.name, "dataset": cell.dataset.id, "method": cell.method.id,
            **({"own_models": list(cell.method.own_models)} if cell.method.own_models else {})}


def cell_request(plan: SuitePlan, cell: Cell, sl: Slice, limit: int | None = None,
                 command: Sequence[str] | str | None = None, force: bool = False) -> EvalRequest:
    """The eval of ``cell`` (its first ``limit`` examples when given), as every eval is asked for
    (:class:`~thoughtloom.eval.assembly.EvalRequest`): its method's strategy and settings at the suite's
    values (the suite's budget is the runner's, not the methods' own cap), its slice, its folder, and
    only the roles its method puts on models of their own."""
    return EvalRequest(cell.method.strategy, sl.task, cell.method.options(sl.data_root),
                       data=Dataset(sl.examples[:limit], sl.path, sl.sample), offset=cell.dataset.offset,
                       limit=plan.n, source=DataSource(sl.path, 0 if sl.sample else cell.dataset.offset, plan.n),
                       out=cell.folder(plan.out), cap_strategy=False, roles=tuple(cell.method.own_models),
                       meta=cell_meta(plan, cell), force=force, command=command)


def cell_spec(spec: RunSpec, plan: SuitePlan, cell: Cell) -> RunSpec:
    """``spec`` with the plan's budget and the cell's seed."""
    return dataclasses.replace(spec, seed=cell.seed, max_calls=plan.budget.max_calls,
                               max_tokens=plan.budget.max_tokens)


def check_own_models(cells: Sequence[Cell], spec: RunSpec, *, on_workers: bool = False) -> None:
    """Refuse (one line, before any model call) a cell whose method puts a role on a model of
    its own (``own_models``) that ``--role-model`` does not give."""
    given = dict(spec.role_models)
    for cell in cells:
        for role in cell.method.own_models:
            if role not in given:
                raise ConfigError(f"method {cell.method.id!r} puts its {role} on a model of its own, and none "
                                  f"is given", hint=f"pass --role-model {role}=MODEL (say a smaller .gguf)")
        if on_workers and cell.method.own_models:
            raise ConfigError(f"method {cell.method.id!r} has own_models, which Ray workers do not route yet",
                              hint="run this suite without --executor ray")


async def run_cells(plan: SuitePlan, slices: dict[str, Slice], spec: RunSpec, *, res: EvalResources | None = None,
                    progress: SuiteProgress | None = None, limit: int | None = None,
                    cells: Sequence[Cell] | None = None, command: Sequence[str] | str | None = None,
                    force: bool = False, executors: Callable[[], Executor] | None = None,
                    sitting: int | None = None) -> dict[str, dict[str, Any]]:
    """Evaluate ``cells`` (default: the whole plan) on their slices (the first ``limit`` examples
    when given); returns each cell's summary by name. Stops at the first fatal error, with every
    finished example on disk -- a cell folder made with another config among them
    (:class:`~thoughtloom.eval.identity.ConfigMismatch`, unless ``force``).

    ``res``: ``spec``'s services, opened by the caller (``async with spec.open() as res``), that the
    cells run on here; or ``executors``, which makes each cell's executor (its workers open their own
    services from ``spec``). Every cell has the plan's budget (the suite's, or ``--max-calls`` /
    ``--max-tokens``) and its own seed. ``sitting``: this sitting's index in ``OUT/reproduce.json``
    (:func:`log_sitting`), where each cell's new examples are counted as it finishes (the card's
    "which sittings made it")."""
    if (res is None) == (executors is None):
        raise ValueError("run_cells takes res (examples run here) or executors (on workers), not both")
    todo = list(plan.cells() if cells is None else cells)
    check_own_models(todo, spec, on_workers=executors is not None)
    status = SuiteStatus(total=sum(len(slices[c.dataset.id].ids[:limit]) for c in todo),
                         done=sum(len(_done_ids(c, plan, slices, limit)) for c in todo))
    summaries = {}
    for i, cell in enumerate(todo):
        sl = slices[cell.dataset.id]
        run = assemble(cell_spec(spec, plan, cell), cell_request(plan, cell, sl, limit, command, force))
        with progress.cell(cell, i, len(todo), status) if progress else contextlib.nullcontext() as bar:
            summary = await run.run(res=res, executor=executors() if executors is not None else None, progress=bar)
        summaries[cell.name] = summary
        if sitting is not None and summary["this_run"]["examples"]:
            log_added(plan.out, sitting, cell.name, summary["this_run"]["examples"])
        status.done += summary["this_run"]["examples"]
        status.new += summary["this_run"]["examples"]
    return summaries


def _done_ids(cell: Cell, plan: SuitePlan, slices: dict[str, Slice], limit: int | None) -> set[str]:
    return set(read_records(cell.folder(plan.out))) & set(slices[cell.dataset.id].ids[:limit])


def missing_cells(plan: SuitePlan, slices: dict[str, Slice]) -> list[Cell]:
    """Cells with examples of their slice not yet done."""
    return [c for c in plan.cells() if len(_done_ids(c, plan, slices, None)) < len(slices[c.dataset.id].examples)]


async def pilot(plan: SuitePlan, slices: dict[str, Slice], spec: RunSpec, size: int,
                progress: SuiteProgress | None = None, **where: Any) -> None:
    """The first ``size`` examples of each method's first seed, into the real cell folders
    (``where``: ``res`` or ``executors``, and ``command`` and ``force``, as :func:`run_cells` takes them)."""
    first_seed = [c for c in plan.cells() if c.seed == 0]
    await run_cells(plan, slices, spec, progress=progress, limit=size, cells=first_seed, **where)


def estimate(plan: SuitePlan, slices: dict[str, Slice], concurrency: int = 1,
             model_seconds: Any = None) -> dict[str, CostEstimate]:
    """Per ``dataset/method``, the cost of its examples not yet done over all seeds, from its records;
    ``model_seconds`` (a cache store's lookup) adds back what their cache hits took when they ran."""
    out = {}
    for d in plan.datasets:
        ids = set(slices[d.id].ids)
        for m in plan.methods:
            records, done = [], 0
            folders = [Cell(d, m, seed).folder(plan.out) for seed in range(plan.seeds)]
            for folder in folders:
                kept = [r for i, r in read_records(folder).items() if i in ids]
                records += kept
                done += len(kept)
            remaining = len(ids) * plan.seeds - done
            cached = cached_time(folders, ids, model_seconds) if model_seconds is not None else None
            out[f"{d.id}/{m.id}"] = extrapolate(records, done=done, remaining=remaining, concurrency=concurrency,
                                                cached=cached)
    return out


def log_sitting(out: Path, suite: Suite, entry: dict[str, Any]) -> list[dict[str, Any]]:
    """Append one sitting to ``OUT/reproduce.json``; returns every sitting so far."""
    path = out / RUN_LOG
    try:
        log = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    except ValueError:
        log = {}  # a damaged log loses its history, never the run
    sittings = [s for s in log.get("sittings", []) if isinstance(s, dict)] + [entry]
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps({"suite": suite.name, "suite_file": suite.source, "suite_sha256": suite.digest,
                                   "sittings": sittings}, indent=2, ensure_ascii=False) + "\n")
    return sittings


def log_added(out: Path, sitting: int, cell: str, examples: int) -> None:
    """Count ``examples`` new examples of ``cell`` in sitting ``sitting`` of ``OUT/reproduce.json``
    (its ``added``: cell name -> examples); a log that cannot be read is left alone."""
    path = out / RUN_LOG
    try:
        log = json.loads(path.read_text(encoding="utf-8"))
        entry = log["sittings"][sitting]
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return
    if not isinstance(entry, dict):
        return
    added = entry.get("added") if isinstance(entry.get("added"), dict) else {}
    entry["added"] = {**added, cell: added.get(cell, 0) + examples}
    atomic_write(path, json.dumps(log, indent=2, ensure_ascii=False) + "\n")


def sittings(out: Path) -> list[dict[str, Any]]:
    path = out / RUN_LOG
    try:
        return list(json.loads(path.read_text(encoding="utf-8")).get("sittings", [])) if path.exists() else []
    except (ValueError, AttributeError):
        return []
