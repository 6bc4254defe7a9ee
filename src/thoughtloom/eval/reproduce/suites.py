"""Reproduction suites: one TOML file per paper comparison, read and checked.

A suite names the datasets (task, data file relative to a data root, slice),
the methods (an id, a registered strategy and its settings), one budget per
example that every method gets alike, the default n and seeds, and the
paper's own figures and ordering claims with their sources. The packaged
suites live beside this module in ``suites/``; ``load`` also takes a path, so
a user can write their own.

A suite is checked twice before any model call: against :data:`SCHEMA`
(jsonschema), then for meaning (every method's strategy and settings, every
task, every id a figure or claim names). Each failure is a
:class:`~thoughtloom.core.errors.ConfigError` naming the file and the key,
e.g. ``sculpt-game24.toml: methods[2].settings: strategy 'tot-bfs' has no
option 'beams'``.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Mapping

import jsonschema

from ... import strategies, tasks
from ...core.errors import ConfigError, ThoughtloomError
from ...lm.meter import Budget
from ...retrieval import TemporaryIndex

_ID = {"type": "string", "pattern": "^[a-z0-9][a-z0-9_.-]*$"}
_TEXT = {"type": "string", "minLength": 1}
_STRATUM = {"enum": ["long", "medium", "short"]}
_POSITIVE = {"type": "integer", "minimum": 1}

#: The shape of a suite file (what the meaning checks then rely on).
SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["name", "title", "paper", "n", "datasets", "methods"],
    "properties": {
        "name": _ID,
        "title": _TEXT,
        "paper": _TEXT,
        "n": _POSITIVE,
        "seeds": _POSITIVE,
        "entail": _TEXT,
        "notes": {"type": "array", "items": _TEXT},
        "budget": {"type": "object", "additionalProperties": False, "minProperties": 1,
                   "properties": {"max_calls": _POSITIVE, "max_tokens": _POSITIVE}},
        "paper_budget": {"type": "object", "additionalProperties": False, "required": ["max_calls", "source"],
                         "properties": {"max_calls": _POSITIVE, "source": _TEXT}},
        "datasets": {"type": "array", "minItems": 1, "items": {
            "type": "object", "additionalProperties": False, "required": ["id", "task", "data"],
            "properties": {"id": _ID, "task": _TEXT, "data": _TEXT, "offset": {"type": "integer", "minimum": 0},
                           "metrics": {"type": "array", "minItems": 1, "items": _TEXT}, "primary": _TEXT,
                           "strata": {"type": "boolean"}, "note": _TEXT, "stratum": _STRATUM,
                           "index": {"type": "object", "minProperties": 1, "additionalProperties": False,
                                     "properties": {"bm25": {"type": "object"}, "links": {"type": "object"}}},
                           "corpus": {"type": "array", "minItems": 1, "items": _TEXT}}}},
        "methods": {"type": "array", "minItems": 1, "items": {
            "type": "object", "additionalProperties": False, "required": ["id", "strategy"],
            "properties": {"id": _ID, "strategy": _TEXT, "label": _TEXT, "note": _TEXT, "grid": _ID,
                           "settings": {"type": "object", "additionalProperties": {
                               "type": ["string", "integer", "number", "boolean"]}},
                           "data_settings": {"type": "object", "additionalProperties": {"anyOf": [
                               _TEXT, {"type": "array", "minItems": 1, "items": _TEXT}]}},
                           "own_models": {"type": "array", "minItems": 1, "uniqueItems": True,
                                          "items": _TEXT}}}},
        "paper_figures": {"type": "array", "items": {
            "type": "object", "additionalProperties": False,
            "required": ["method", "metric", "value", "model", "source"],
            "properties": {"method": _ID, "dataset": _ID, "metric": _TEXT, "stratum": _STRATUM,
                           "value": {"type": "number", "minimum": 0, "maximum": 100},
                           "model": _TEXT, "source": _TEXT, "setting": _TEXT}}},
        "claims": {"type": "array", "items": {
            "type": "object", "additionalProperties": False, "required": ["better", "worse", "statement", "source"],
            "properties": {"better": _ID, "worse": _ID, "dataset": _ID, "metric": _TEXT, "stratum": _STRATUM,
                           "statement": _TEXT, "source": _TEXT}}},
    },
}


@dataclass(frozen=True)
class DatasetSpec:
    """One benchmark slice: ``data`` is relative to the data root; examples ``offset`` to ``offset + n``."""

    id: str
    task: str
    data: str
    offset: int
    metrics: tuple[str, ...]
    primary: str
    strata: bool = False  # report the primary metric by question-length stratum (HGOT's Table 2)
    note: str = ""
    corpus: tuple[str, ...] = ()  # more corpus files (under the data root) pooled with the data file's paragraphs
    #: only this length stratum's questions (the task's rule, ``Task.stratum``), ``offset`` and ``n``
    #: counted among them: HGOT's weight grid runs on medium questions (Table 9)
    stratum: str | None = None
    #: the pooled BM25 index's build settings, every method alike (``index build --set`` keys as a
    #: table: ``{ links = { seeds = 3 } }``); an ``--index`` replaces the pooled index and them
    index: Mapping[str, Any] = field(default_factory=dict)

    def select(self, task: tasks.Task, examples: list[tasks.Example], n: int) -> list[tasks.Example]:
        """This dataset's ``n`` examples from ``offset`` among the loaded ones of its stratum (all
        of them when it names none)."""
        kept = examples if self.stratum is None else [e for e in examples
                                                      if task.stratum(e.problem.meta) == self.stratum]
        if self.offset >= len(kept):
            raise ConfigError(f"offset {self.offset}: dataset {self.id!r} has only {len(kept)} examples"
                              + (f" in stratum {self.stratum!r}" if self.stratum else ""))
        return kept[self.offset:self.offset + n]


@dataclass(frozen=True)
class MethodSpec:
    """One method of a suite: a strategy and its settings. ``data_settings`` are options whose
    values are files under the data root (e.g. HGOT's ``demo_file``: the authors' annotated
    demonstrations), given relative to it; several files are joined with commas."""

    id: str
    strategy: str
    label: str
    settings: Mapping[str, Any] = field(default_factory=dict)
    note: str = ""
    data_settings: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: the roles (:data:`thoughtloom.strategies.ROLES`) this method puts on the model the user gives
    #: with ``--role-model ROLE=MODEL`` (say a weaker evaluator); every other role, and every role of
    #: an unmarked method, asks ``--model``
    own_models: tuple[str, ...] = ()
    #: the grid search this method is one point of (a family id shared by its points, e.g. DecomP's K
    #: grid, Appendix A.2, or HGOT's weight grid, Table 9); the card names each family's best point
    grid: str = ""

    def build(self, task: tasks.Task | None = None, data_root: Path | None = None) -> strategies.Strategy:
        """The strategy with this method's settings (typed TOML values, checked as ``--set`` values are);
        a tree strategy takes ``task``'s search settings for the options the suite leaves unset. With a
        ``data_root``, each data setting is its files under it (a missing one is an error naming it);
        without one (a packaged sample stands in for the data) the data settings stay unset."""
        return strategies.build(self.strategy, self.options(data_root), task)

    def options(self, data_root: Path | None = None) -> dict[str, Any]:
        """The strategy options this method sets: its settings, and each data setting's files under
        ``data_root`` (:meth:`data_paths`)."""
        return {**self.settings, **self.data_paths(data_root)}

    def data_paths(self, data_root: Path | None) -> dict[str, str]:
        """Each data setting's value under ``data_root`` (none without a root)."""
        if data_root is None:
            return {}
        out = {}
        for option, files in self.data_settings.items():
            paths = [data_root.expanduser() / f for f in files]
            for p in paths:
                if not p.is_file():
                    raise ConfigError(f"data file not found: {p} (method {self.id!r}, option {option})",
                                      hint="check --data-root / THOUGHTLOOM_DATA")
            out[option] = ",".join(str(p) for p in paths)
        return out


@dataclass(frozen=True)
class PaperFigure:
    """A figure the paper reports, in percent, for one of our cells."""

    method: str
    dataset: str | None
    metric: str
    value: float
    model: str
    source: str
    stratum: str | None = None
    setting: str = ""  # the paper's own setting when it differs from ours (e.g. "k = 100")


@dataclass(frozen=True)
class Claim:
    """The paper says ``better`` beats ``worse`` (on ``dataset``, or on each dataset when None)."""

    better: str
    worse: str
    statement: str
    source: str
    dataset: str | None = None
    metric: str | None = None  # None: the dataset's primary metric
    stratum: str | None = None


@dataclass(frozen=True)
class Suite:
    name: str
    title: str
    paper: str
    n: int
    seeds: int
    budget: Budget
    datasets: tuple[DatasetSpec, ...]
    methods: tuple[MethodSpec, ...]
    figures: tuple[PaperFigure, ...] = ()
    claims: tuple[Claim, ...] = ()
    entail: str | None = None
    notes: tuple[str, ...] = ()
    paper_budget: tuple[int, str] | None = None  # (calls per example, where the paper says so) if it does
    source: str = ""  # the file it was read from
    digest: str = ""  # sha256 of the file's bytes

    def dataset(self, dataset_id: str) -> DatasetSpec:
        return next(d for d in self.datasets if d.id == dataset_id)

    def method(self, method_id: str) -> MethodSpec:
        return next(m for m in self.methods if m.id == method_id)

    def figures_for(self, dataset: str, method: str) -> list[PaperFigure]:
        return [f for f in self.figures if f.method == method and f.dataset in (None, dataset)]

    def claims_for(self, dataset: str) -> list[Claim]:
        return [c for c in self.claims if c.dataset in (None, dataset)]

    def grids(self) -> dict[str, list[MethodSpec]]:
        """Each grid search's points (methods sharing a ``grid`` id), in the suite's order."""
        out: dict[str, list[MethodSpec]] = {}
        for m in self.methods:
            if m.grid:
                out.setdefault(m.grid, []).append(m)
        return out


def _packaged() -> Any:
    return resources.files(__package__).joinpath("suites")


def available() -> list[str]:
    """Names of the packaged suites."""
    return sorted(p.name[: -len(".toml")] for p in _packaged().iterdir() if p.name.endswith(".toml"))


def load(name_or_path: str | Path) -> Suite:
    """A packaged suite by name, or a suite file by path."""
    path = Path(name_or_path)
    if path.suffix == ".toml" and path.is_file():
        return parse(path.read_bytes(), str(path))
    if str(name_or_path) not in available():
        raise ConfigError(f"unknown suite {str(name_or_path)!r}",
                          hint=f"choose one of: {', '.join(available())} (or pass a suite .toml file)")
    resource = _packaged().joinpath(f"{name_or_path}.toml")
    return parse(resource.read_bytes(), f"{name_or_path}.toml")


def _key(path: Any) -> str:
    """``methods[2].settings`` from jsonschema's path (``deque(['methods', 2, 'settings'])``)."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def parse(raw: bytes, source: str) -> Suite:
    """Read and check a suite file's bytes; ``source`` names it in errors."""
    try:
        doc = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{source}: not a valid TOML file ({exc})") from None
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(SCHEMA).iter_errors(doc))
    if error is not None:
        raise ConfigError(f"{source}: {_key(error.absolute_path)}: {error.message}")
    suite = _build(doc, source, hashlib.sha256(raw).hexdigest())
    _check_meaning(suite, source)
    return suite


def _build(doc: dict[str, Any], source: str, digest: str) -> Suite:
    datasets = []
    for i, d in enumerate(doc["datasets"]):
        try:
            task = tasks.get(d["task"])
        except ConfigError as exc:
            raise ConfigError(f"{source}: datasets[{i}].task: {exc}") from None
        metrics = tuple(d.get("metrics", [task.primary_metric]))
        for m in metrics:
            if m not in task.metrics:
                raise ConfigError(f"{source}: datasets[{i}].metrics: task {d['task']!r} emits no metric {m!r} "
                                  f"(its metrics: {', '.join(task.metrics)})")
        datasets.append(DatasetSpec(d["id"], d["task"], d["data"], d.get("offset", 0), metrics,
                                    d.get("primary", metrics[0]), d.get("strata", False), d.get("note", ""),
                                    tuple(d.get("corpus", ())), d.get("stratum"), dict(d.get("index", {}))))
    methods = tuple(MethodSpec(m["id"], m["strategy"], m.get("label", m["id"]), dict(m.get("settings", {})),
                               m.get("note", ""), {k: (v,) if isinstance(v, str) else tuple(v)
                                                   for k, v in m.get("data_settings", {}).items()},
                               tuple(m.get("own_models", ())), m.get("grid", ""))
                    for m in doc["methods"])
    budget = doc.get("budget", {})
    return Suite(
        name=doc["name"], title=doc["title"], paper=doc["paper"], n=doc["n"], seeds=doc.get("seeds", 1),
        budget=Budget(max_calls=budget.get("max_calls"), max_tokens=budget.get("max_tokens")),
        datasets=tuple(datasets), methods=methods,
        figures=tuple(PaperFigure(f["method"], f.get("dataset"), f["metric"], float(f["value"]), f["model"],
                                  f["source"], f.get("stratum"), f.get("setting", ""))
                      for f in doc.get("paper_figures", [])),
        claims=tuple(Claim(c["better"], c["worse"], c["statement"], c["source"], c.get("dataset"),
                           c.get("metric"), c.get("stratum")) for c in doc.get("claims", [])),
        entail=doc.get("entail"), notes=tuple(doc.get("notes", [])),
        paper_budget=(doc["paper_budget"]["max_calls"], doc["paper_budget"]["source"]) if "paper_budget" in doc
        else None, source=source, digest=digest)


def _check_meaning(suite: Suite, source: str) -> None:
    """Ids unique and resolvable, strategies and settings valid, metrics listed."""
    def fail(key: str, message: str) -> None:
        raise ConfigError(f"{source}: {key}: {message}")

    if Path(source).stem != suite.name:
        fail("name", f"{suite.name!r} differs from the file name {Path(source).name!r}")
    for kind, items in (("datasets", suite.datasets), ("methods", suite.methods)):
        seen: set[str] = set()
        for i, item in enumerate(items):
            if item.id in seen:
                fail(f"{kind}[{i}].id", f"{item.id!r} is used twice")
            seen.add(item.id)
    for i, d in enumerate(suite.datasets):
        if d.primary not in d.metrics:
            fail(f"datasets[{i}].primary", f"{d.primary!r} is not one of its metrics {list(d.metrics)}")
        if d.index:
            try:
                TemporaryIndex([], settings=dict(d.index))
            except ThoughtloomError as exc:
                fail(f"datasets[{i}].index", str(exc))
    for i, m in enumerate(suite.methods):
        try:
            for d in suite.datasets:
                m.build(tasks.get(d.task))
        except ThoughtloomError as exc:
            fail(f"methods[{i}].settings" if "option" in str(exc) else f"methods[{i}].strategy", str(exc))
        for role in m.own_models:
            if role not in strategies.ROLES:
                fail(f"methods[{i}].own_models", f"unknown role {role!r} (roles: {', '.join(strategies.ROLES)})")
        if m.data_settings:  # each names a text option of the strategy (its files are checked when a run finds them)
            try:
                strategies.build(m.strategy, {**m.settings, **{k: ",".join(v) for k, v in m.data_settings.items()}})
            except ThoughtloomError as exc:
                fail(f"methods[{i}].data_settings", str(exc))
    for family, points in suite.grids().items():
        if len(points) < 2:
            fail(f"methods[{suite.methods.index(points[0])}].grid", f"grid {family!r} has one point; a grid "
                 "search needs two or more methods with the same grid id")
    datasets = {d.id: d for d in suite.datasets}
    methods = {m.id for m in suite.methods}
    for kind, items in (("paper_figures", suite.figures), ("claims", suite.claims)):
        for i, item in enumerate(items):
            for key in ("method",) if kind == "paper_figures" else ("better", "worse"):
                if getattr(item, key) not in methods:
                    fail(f"{kind}[{i}].{key}", f"no method {getattr(item, key)!r} in this suite")
            if item.dataset is not None and item.dataset not in datasets:
                fail(f"{kind}[{i}].dataset", f"no dataset {item.dataset!r} in this suite")
            for d in [datasets[item.dataset]] if item.dataset else suite.datasets:
                if item.metric is not None and item.metric not in d.metrics:
                    fail(f"{kind}[{i}].metric", f"{item.metric!r} is not a metric of dataset {d.id!r}")
                if item.stratum is not None and not d.strata:
                    fail(f"{kind}[{i}].stratum", f"dataset {d.id!r} is not length-stratified")
    if len(suite.datasets) > 1 and any(f.dataset is None for f in suite.figures):
        fail("paper_figures", "name the dataset of each figure when the suite has several")
