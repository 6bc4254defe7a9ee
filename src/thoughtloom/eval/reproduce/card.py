"""What a reproduction card says, computed from the cells' results folders alone.

Nothing here calls a model: a card is a function of ``OUT/<cell>/results.jsonl``
and the suite, so ``--replay`` (and any later sitting) regenerates it exactly.

Per cell: each metric's mean with a 95% bootstrap interval over examples
(:func:`..stats.mean_ci`; with several seeds, over the examples every seed
has scored, resampling seeds too), the primary metric by length stratum
where the dataset is stratified, how many examples were scored as no answer
(:func:`answered`), calls and tokens per example, and tokens
per solved case (all tokens over the sum of the primary score, which for a
0/1 metric is the number solved), and each seed's anytime curves
(:func:`..curves.run_curves`) over those examples. Per claim "A beats B":
the paired difference A - B on the examples both scored (each example's
score averaged over seeds first; examples the task groups, several
questions over one context, resampled as groups), tested by
:func:`..inference.paired_test` with its power figures; the verdicts of all
the card's claims are read together, after Holm's correction across them
(:func:`..inference.judge_all`); and the same claim described along the
call budget from the curves (:mod:`.budgetwise`, no verdict).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..curves import RunCurves, run_curves
from ..record import EvalRecord
from ..results import SUMMARY, read_records
from ..inference import Judgement, PairedTest, judge_all, paired_test
from ... import tasks
from ...tasks.factqa import STRATA, strata_sizes
from ..stats import Estimate, mean_ci, weighted_strata_ci
from ..tally import usage_by_role
from .budgetwise import JUDGED, along_budget
from .run import Cell, SuitePlan, Slice
from .suites import Claim, DatasetSpec, MethodSpec, PaperFigure

NOT_RUN = "not run"


@dataclass(frozen=True)
class CellResult:
    dataset: DatasetSpec
    method: MethodSpec
    total: int  # examples in the slice
    seeds: int  # seeds with any record
    n: int  # examples every one of those seeds has scored
    metrics: Mapping[str, Estimate] = field(default_factory=dict)
    strata: Mapping[str, Estimate] = field(default_factory=dict)  # primary metric; "overall": weighted (Table 2)
    calls: float = 0.0  # per example
    tokens: float = 0.0  # per example
    tokens_per_solved: float | None = None
    errors: int = 0
    budget_stopped: int = 0
    truncated: int = 0
    cut_off: int = 0  # examples with a reply cut off at max_tokens anywhere in their run
    limited: int = 0  # examples with an evaluation held to the task's rubric (score_limits, a symbolic check)
    no_answer: int = 0  # records scored as no answer: errored, truncated, or no answer the task's reader reads
    by_example: Mapping[str, Mapping[str, float]] = field(default_factory=dict)  # metric -> id -> seed mean
    stratum_of: Mapping[str, str] = field(default_factory=dict)
    group_of: Mapping[str, str] = field(default_factory=dict)  # examples sharing a context (Task.group)
    curves: tuple[RunCurves, ...] = ()  # per seed, over the n examples every seed scored
    #: per role on a model of its own (``own_models``, ``--role-model``): (calls, tokens) per example
    by_role: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    #: the model judge's score by revision step (ThoughtSculpt Fig. 4): step 0 the given outline, step s
    #: the best outline within s revisions (``details.judge``); empty where no record has per-step scores
    steps: tuple[Estimate, ...] = ()

    @property
    def complete(self) -> bool:
        return self.n >= self.total


@dataclass(frozen=True)
class ClaimResult:
    claim: Claim
    dataset: DatasetSpec
    metric: str
    difference: PairedTest | None  # None: a cell has no results
    verdict: str  # holds, does not hold, inconclusive, or not run
    paper: tuple[tuple[str, float, float], ...] = ()  # (model, better, worse) where the paper reports both
    along: str = "–"  # the claim described along the call budget (budgetwise.phrase); "–": a cell has no results
    judgement: Judgement | None = None  # the verdict, its reason and Holm-adjusted p (None: not run)

    def paper_n(self) -> tuple[tuple[str, float, int | None], ...]:
        """Per paper model: its difference "better - worse" (a fraction) and the n this design needs to
        detect it with 80% power at alpha 0.05 (None: no spread here, or no difference there)."""
        if self.difference is None:
            return ()
        return tuple((model, (b - w) / 100, self.difference.n_needed((b - w) / 100)) for model, b, w in self.paper)


def cell_result(plan: SuitePlan, dataset: DatasetSpec, method: MethodSpec, sl: Slice) -> CellResult:
    """One (dataset, method) over the plan's seeds, from its folders."""
    order = sl.ids
    runs = [read_records(Cell(dataset, method, seed).folder(plan.out)) for seed in range(plan.seeds)]
    runs = [{i: r for i, r in run.items() if i in set(order)} for run in runs]
    runs = [run for run in runs if run]
    if not runs:
        return CellResult(dataset, method, total=len(order), seeds=0, n=0)
    common = [i for i in order if all(i in run for run in runs)]
    records = [run[i] for run in runs for i in common]
    by_example = {m: {i: sum(run[i].score(m) for run in runs) / len(runs) for i in common}
                  for m in dataset.metrics}
    metrics = {m: mean_ci([[run[i].score(m) for i in common] for run in runs]) for m in dataset.metrics}
    stratum_of = {i: sl.task.stratum(runs[0][i].meta) or "medium" for i in common}  # the task's own rule
    group_of = {i: g for i in common if (g := sl.task.group(runs[0][i].meta)) is not None}
    strata = _by_stratum(runs, common, stratum_of, dataset.primary) if dataset.strata else {}
    caps = {"max_calls": plan.budget.max_calls, "max_tokens": plan.budget.max_tokens}
    curves = tuple(run_curves({i: run[i] for i in common}, caps) for run in runs)
    tokens = sum(r.used("total_tokens") for r in records)
    solved = sum(r.score(dataset.primary) for r in records)
    return CellResult(
        dataset, method, total=len(order), seeds=len(runs), n=len(common), metrics=metrics, strata=strata,
        calls=sum(r.used("calls") for r in records) / len(records) if records else 0.0,
        tokens=tokens / len(records) if records else 0.0,
        tokens_per_solved=tokens / solved if solved > 0 else None,
        errors=sum(1 for r in records if r.failed),
        budget_stopped=sum(1 for r in records if r.budget_stopped),
        truncated=sum(1 for r in records if r.truncated is True),
        cut_off=sum(1 for r in records if r.used("truncated_calls") > 0),
        limited=sum(1 for r in records if r.step_problems.get("limited")),
        no_answer=sum(1 for r in records if not answered(sl, r)),
        by_example=by_example, stratum_of=stratum_of, group_of=group_of, curves=curves,
        by_role={role: (u["calls"] / len(records), u["total_tokens"] / len(records))
                 for role, u in usage_by_role(records).items()} if records else {},
        steps=step_scores(records))


def _score(value: Any) -> float | None:
    """A judged score as a finite number in [0, 1], else None (a record is hostile input)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        return None
    return float(value)


def step_scores(records: list[EvalRecord]) -> tuple[Estimate, ...]:
    """Fig. 4's curve: per revision step s, the mean judged score of the best outline within s
    revisions (``details.judge.steps``; step 0 is the search's root, the given outline), over
    the records that carry per-step scores. A search that stopped at a shallower depth keeps its
    last step's outline at every later step (the best within s revisions is then the best within
    its depth), so every step averages the same records; unreadable judgements are left out of
    their step. Empty when no record has per-step scores (a method that is no tree search)."""
    rows = []
    for r in records:
        judge = r.details.get("judge")
        steps = judge.get("steps") if isinstance(judge, dict) else None
        if not isinstance(steps, list) or not steps:
            continue
        rows.append([_score(v) for v in steps[:MAX_STEPS]])
    if not rows:
        return ()
    depth = max(len(row) for row in rows)
    filled = [row + [row[-1]] * (depth - len(row)) for row in rows]
    return tuple(mean_ci([row[s] for row in filled if row[s] is not None]) for s in range(depth))


#: steps read from one record (a tree deeper than this is not a paper setting; the bound keeps a
#: hostile record from making the card's table as wide as it likes)
MAX_STEPS = 32


def _by_stratum(runs: list[dict[str, EvalRecord]], common: list[str], stratum_of: Mapping[str, str],
                metric: str) -> dict[str, Estimate]:
    """The metric per length stratum, and ``overall``: HGOT's Table 2 Overall, the strata's means
    weighted by their sizes in the slice (the task's report's weighting, ``stratified_means``:
    the counts that ran where no sizes are recorded), with a stratified bootstrap interval. Not
    the plain mean over examples: with fewer of one stratum run than its share, that mean leans
    to the others."""
    sizes = strata_sizes(runs[0][i].meta for i in common)
    out: dict[str, Estimate] = {}
    weighted = []
    for name in STRATA:
        ids = [i for i in common if stratum_of[i] == name]
        if ids:
            scores = [[run[i].score(metric) for i in ids] for run in runs]
            out[name] = mean_ci(scores)
            size = sizes.get(name) if sizes else None
            weighted.append((scores, float(size) if isinstance(size, (int, float)) else float(len(ids))))
    out["overall"] = weighted_strata_ci(weighted)
    return out


def answered(sl: Slice, record: EvalRecord | Mapping[str, Any]) -> bool:
    """Whether a record was scored on an answer: no error, not cut off (where the task scores
    no truncated answer), and a prediction the task's reader reads (``Task.answered``)."""
    record = EvalRecord.of(record)
    if record.failed or (record.truncated is True and not sl.task.score_truncated):
        return False
    return sl.task.answered(record.prediction)


def _paper_pairs(figures: list[PaperFigure], claim: Claim, metric: str) -> tuple[tuple[str, float, float], ...]:
    def values(method: str) -> dict[str, float]:
        return {f.model: f.value for f in figures
                if f.method == method and f.metric == metric and f.stratum == claim.stratum}

    better, worse = values(claim.better), values(claim.worse)
    return tuple((model, better[model], worse[model]) for model in better if model in worse)


def model_judged(dataset: DatasetSpec, metric: str) -> bool:
    """Whether the dataset's task scores ``metric`` by the model judge, once after the run and outside
    its budget (``Task.judged_metrics``), so that no record has a budget trajectory for it."""
    return metric in tasks.get(dataset.task).judged_metrics


def claim_result(claim: Claim, dataset: DatasetSpec, cells: Mapping[tuple[str, str], CellResult],
                 figures: list[PaperFigure], max_calls: int | None = None) -> ClaimResult:
    """The claim tested at the suite's budget (its verdict is :func:`judged`'s, across the card's claims),
    and described along the call budget up to ``max_calls`` (the suite's)."""
    metric = claim.metric or dataset.primary
    paper = _paper_pairs(figures, claim, metric)
    better, worse = cells.get((dataset.id, claim.better)), cells.get((dataset.id, claim.worse))
    if better is None or worse is None or not better.n or not worse.n:
        return ClaimResult(claim, dataset, metric, None, NOT_RUN, paper)

    def scores(cell: CellResult) -> dict[str, float]:
        return {i: s for i, s in cell.by_example[metric].items()
                if claim.stratum is None or cell.stratum_of.get(i) == claim.stratum}

    ours, theirs = scores(better), scores(worse)
    difference = paired_test(theirs, ours, groups={**worse.group_of, **better.group_of})
    if model_judged(dataset, metric):
        along = JUDGED
    else:
        along = along_budget(better.curves, worse.curves, set(ours) & set(theirs), metric, max_calls)
    return ClaimResult(claim, dataset, metric, difference, "inconclusive", paper, along)


def judged(claims: list[ClaimResult]) -> list[ClaimResult]:
    """Every claim's verdict, after Holm's correction across the claims that have a test."""
    found = judge_all([c.difference for c in claims], what="claims")
    return [c if j is None else dataclasses.replace(c, verdict=j.verdict, judgement=j) for c, j in zip(claims, found)]


@dataclass(frozen=True)
class GridChoice:
    """One grid search on one dataset (the suite's methods sharing a ``grid`` id): every point's
    cell and the point with the highest mean primary metric on these questions (the first listed
    on a tie; None while no point has results). A choice made on held-out questions, for use on
    the test questions, not a result on them."""

    dataset: DatasetSpec
    family: str
    points: tuple[CellResult, ...]
    chosen: CellResult | None


def grid_choices(plan: SuitePlan, cells: Mapping[tuple[str, str], CellResult]) -> tuple[GridChoice, ...]:
    out = []
    for d in plan.datasets:
        for family, methods in plan.suite.grids().items():
            points = tuple(cells[d.id, m.id] for m in methods if (d.id, m.id) in cells)
            if not points:
                continue
            ran = [c for c in points if c.n]
            chosen = max(ran, key=lambda c: c.metrics[d.primary].mean) if ran else None
            out.append(GridChoice(d, family, points, chosen))
    return tuple(out)


@dataclass(frozen=True)
class CardData:
    plan: SuitePlan
    slices: Mapping[str, Slice]
    cells: tuple[CellResult, ...]
    claims: tuple[ClaimResult, ...]
    provenance: Mapping[str, Any]  # version, commit, command, generated, sittings, judge, index
    models: tuple[str, ...] = ()  # the model ids the cells' summaries name
    missing: Mapping[str, str] = field(default_factory=dict)  # dataset id -> why it has no data here
    grids: tuple[GridChoice, ...] = ()  # the suite's grid searches, per dataset
    role_models: tuple[tuple[str, str], ...] = ()  # (role, model id) of roles on a model of their own


def _models(plan: SuitePlan) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """The models behind the results: each cell folder's summary.json names its own, and (in its copy
    of the cell's identity) the model each of its own roles asked (``own_models``), as sorted
    ``(role, model)``."""
    found: list[str] = []
    roles: set[tuple[str, str]] = set()
    for cell in plan.cells():
        try:
            summary = json.loads((cell.folder(plan.out) / SUMMARY).read_text(encoding="utf-8"))
        except (OSError, ValueError):  # a cell not run yet, or a damaged summary
            continue
        if not isinstance(summary, dict):
            continue
        model = summary.get("model")
        if isinstance(model, str) and model not in found:
            found.append(model)
        identity = summary.get("identity")
        config = identity.get("config") if isinstance(identity, dict) else None
        own = config.get("role_models") if isinstance(config, dict) else None
        if isinstance(own, dict):
            roles.update((str(r), str(m)) for r, m in own.items())
    return tuple(found), tuple(sorted(roles))


def collect(plan: SuitePlan, slices: Mapping[str, Slice], provenance: Mapping[str, Any],
            missing: Mapping[str, str] | None = None) -> CardData:
    """Every cell and claim of the plan's datasets that have data here (``slices``), from the folders
    under ``plan.out``; ``missing`` says why the others have none."""
    datasets = [d for d in plan.datasets if d.id in slices]
    cells = {(d.id, m.id): cell_result(plan, d, m, slices[d.id]) for d in datasets for m in plan.methods}
    suite = plan.suite
    claims = []
    for d in datasets:
        figures = [f for f in suite.figures if f.dataset in (None, d.id)]
        claims += [claim_result(claim, d, cells, figures, plan.budget.max_calls) for claim in suite.claims_for(d.id)]
    models, role_models = _models(plan)
    return CardData(plan, slices, tuple(cells.values()), tuple(judged(claims)), dict(provenance), models,
                    dict(missing or {}), grid_choices(plan, cells), role_models)
