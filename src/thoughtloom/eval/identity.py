"""Run identity: what an eval folder's results were made with, and who may resume into it.

:func:`run_identity` describes one invocation before its first model call:

- ``command``: the command line (``sys.argv`` from the CLI), or the
  caller's own description, or None;
- ``config``: everything that decides an example's result -- the strategy
  and every resolved option value, the task, the data file (path, sha256,
  offset, limit), the sampling seed, the per-question budget, the model
  (id, backend class, ``n_ctx`` where the backend has one), the prompt
  overrides (folder and a sha256 of its files), the retriever (its
  fingerprint) and the entailment judge (its id);
- ``settings``: this invocation's knobs that do not (concurrency, the
  per-example deadline, retry_errors, trace_text) and ``notes``, whatever
  the caller added (the CLI: cache mode, call timeout, ...);
- ``versions`` (thoughtloom, Python, the backend's client library) and
  ``started`` / ``updated`` (UTC).

The runner writes it to ``OUT/run.json`` and puts the same object in
``summary.json`` (``identity``). Resuming into a folder whose records were
made with another config is refused with one line naming the differences
(:class:`ConfigMismatch`, from :func:`identity_differences`); ``force``
resumes anyway and the overridden differences are kept in ``forced``. A
folder without ``run.json`` (made before it existed) resumes with a warning.

A data file that changed (``data.sha256`` the only difference) is not refused
for that alone when the run says which examples it runs: the folder's
finished examples are compared with those of the same id instead
(:mod:`.data_change` says what is compared and how). All the same: the run
resumes without ``force``, logs one warning line, and ``data_changes`` keeps
each such change (the old and new hash, how many finished examples were
compared and how). Any finished example changed or not among the run's: the
resume is refused as before, the line naming the first such example.

What counts: every ``config`` field except :data:`NOT_COMPARED` -- the
data file's path and the prompt folder's path (the hashes say whether the
content moved on), and ``limit`` (a growing limit is how a run is
extended). Options are compared only when the strategy is the same.
Nothing under ``settings``, ``versions`` or the times counts: they change
how long a run takes or how it is looked after, not what an example's
result is.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import logging
import platform
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

from ..version import __version__
from ..core.errors import ConfigError
from ..core.text import redact_credentials
from ..core.types import to_json
from .data_change import FinishedCheck, check_finished
from .results import RESULTS, atomic_write

from ..strategies.interface import Strategy
from ..tasks.base import Example, Task
from .settings import EvalResources, EvalSettings

log = logging.getLogger(__name__)

RUN = "run.json"
FORMAT = 1

#: ``config`` fields (dotted) that a resume may change.
NOT_COMPARED = frozenset({"data.path", "data.limit", "prompts.dir"})

#: The client library behind each backend module, whose version a run records.
BACKEND_PACKAGES: dict[str, tuple[str, ...]] = {
    "thoughtloom.lm.llamacpp": ("xllamacpp", "llama-cpp-python"),
    "thoughtloom.lm.openai_compat": ("httpx",),
}


@dataclass(frozen=True)
class DataSource:
    """Where an eval's examples came from: the file, and the slice of it that was asked for."""

    path: str | Path | None = None
    offset: int = 0
    limit: int | None = None
    sha256: str | None = None  # of examples given in memory (no file); else the file's is taken


@dataclass(frozen=True)
class Difference:
    key: str  # dotted config field, e.g. "strategy", "options.n", "data.sha256"
    old: Any
    new: Any
    note: str | None = None  # what was found beyond the values (data.sha256: the first changed example)


class ConfigMismatch(ConfigError):
    """The output folder's results were made with another config."""

    def __init__(self, folder: Path, differences: Sequence[Difference],
                 hint: str = "pass force=True to resume anyway, or choose another output folder") -> None:
        self.folder, self.differences = folder, list(differences)
        super().__init__(mismatch_line(folder, differences), hint=hint)


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def tree_sha256(path: str | Path | None) -> str | None:
    """sha256 of a file, or of a folder's files (names and contents, in name order); None if absent."""
    if path is None:
        return None
    path = Path(path).expanduser()
    if path.is_file():
        return file_sha256(path)
    if not path.is_dir():
        return None
    digest = hashlib.sha256()
    for f in sorted(p for p in path.rglob("*") if p.is_file()):
        digest.update(f"{f.relative_to(path).as_posix()}\0{file_sha256(f)}\n".encode())
    return digest.hexdigest()


def innermost(obj: Any) -> Any:
    """The object at the bottom of a wrapper stack (``Cached(Retrying(Limited(backend)))``)."""
    for _ in range(32):
        inner = getattr(obj, "inner", None)
        if inner is None:
            break
        obj = inner
    return obj


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def versions(backend: Any) -> dict[str, str | None]:
    found = {"thoughtloom": __version__, "python": platform.python_version()}
    for dist in BACKEND_PACKAGES.get(type(backend).__module__, ()):
        found[dist] = _version(dist)
    return found


def _retriever(retriever: Any) -> dict[str, Any] | None:
    if retriever is None:
        return None
    fingerprint = getattr(retriever, "fingerprint", None)
    if not isinstance(fingerprint, str) or fingerprint.startswith("object-"):  # an id() is no identity
        fingerprint = None
    return {"kind": type(innermost(retriever)).__name__, "fingerprint": fingerprint}


def run_identity(strategy: "Strategy", task: "Task", res: "EvalResources", settings: "EvalSettings", *,
                 source: DataSource | None = None, command: Sequence[str] | str | None = None,
                 notes: dict[str, Any] | None = None) -> dict[str, Any]:
    """This invocation's identity (see the module's docstring); no model call."""
    source = source or DataSource()
    backend = innermost(res.lm)
    n_ctx = getattr(backend, "n_ctx", None)
    config = {
        "strategy": strategy.name,
        "options": to_json(strategy.config),
        "task": task.name,
        **({"task_options": to_json(task_options)} if (task_options := task.settings()) is not None else {}),
        "data": {"path": None if source.path is None else str(source.path), "sha256": source.sha256 or tree_sha256(source.path),
                 "offset": source.offset, "limit": source.limit},
        "seed": settings.seed,
        "budget": {"max_calls": settings.budget.max_calls, "max_tokens": settings.budget.max_tokens},
        "model": {"id": res.lm.model_id, "backend": type(backend).__name__,
                  "n_ctx": n_ctx if isinstance(n_ctx, int) else None},
        # a role on a model of its own (--role-model) is part of what ran; absent when none is
        **({"role_models": {r: m.model_id for r, m in sorted(res.role_lms.items())}} if res.role_lms else {}),
        "prompts": {"dir": None if res.prompt_dir is None else str(res.prompt_dir),
                    "sha256": tree_sha256(res.prompt_dir)},
        "retriever": _retriever(res.retriever),
        "entail": None if res.entail is None else str(getattr(res.entail, "judge_id", type(res.entail).__name__)),
    }
    started = now()
    return {
        "format": FORMAT,
        "command": _redacted(command),
        "config": config,
        "settings": {"concurrency": settings.concurrency, "example_timeout_s": settings.example_timeout_s,
                     "retry_errors": settings.retry_errors, "trace_text": settings.trace_text,
                     "notes": to_json(notes or {})},
        "versions": versions(backend),
        "started": started,
        "updated": started,
        "forced": [],
        "data_changes": [],
    }


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": 1}}`` as ``{"a.b": 1}``."""
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for key, inner in value.items():
            out.update(_flat(inner, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: value}


def identity_differences(old: dict[str, Any], new: dict[str, Any]) -> list[Difference]:
    """The ``config`` fields that differ between two identities, except :data:`NOT_COMPARED`."""
    a, b = _flat(old.get("config") or {}), _flat(new.get("config") or {})
    same_strategy = a.get("strategy") == b.get("strategy")
    keys = [k for k in dict.fromkeys([*a, *b]) if k not in NOT_COMPARED
            and (same_strategy or not k.startswith("options."))]
    return [Difference(k, a.get(k), b.get(k)) for k in keys if a.get(k) != b.get(k)]


def _shown(key: str, value: Any) -> str:
    if isinstance(value, str) and key.endswith("sha256"):
        value = value[:12]
    return "none" if value is None else json.dumps(value) if isinstance(value, (dict, list)) else str(value)


def _said(diff: Difference, value: Any, *, name: bool = True) -> str:
    if diff.key.startswith("options."):
        return f"{diff.key[len('options.'):]}={_shown(diff.key, value)}"
    shown = _shown(diff.key, value)
    return f"{diff.key.replace('.', ' ')} {shown}" if name else shown


def mismatch_line(folder: Path, differences: Sequence[Difference]) -> str:
    """``folder was made with strategy cot-sc, this run asks for cot`` (every difference, in one line)."""
    old = ", ".join(_said(d, d.old) for d in differences)
    new = ", ".join(_said(d, d.new, name=len(differences) > 1) for d in differences)
    notes = "".join(f"; {d.note}" for d in differences if d.note)
    return f"{folder} was made with {old}, this run asks for {new}{notes}"


def read_identity(folder: Path) -> dict[str, Any] | None:
    """``folder/run.json``, or None when there is none or it cannot be read (warned)."""
    path = folder / RUN
    if not path.exists():
        return None
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        log.warning("%s cannot be read (%s): resuming without checking the config", path, exc)
        return None
    return found if isinstance(found, dict) else None


def open_identity(folder: str | Path, identity: dict[str, Any], *, force: bool = False,
                  examples: Sequence[Example] | None = None) -> dict[str, Any]:
    """Check ``identity`` against the folder's, then write ``run.json``; returns what was written.

    Raises :class:`ConfigMismatch` when the folder holds results made with
    another config, unless ``force`` (then the differences join ``forced``).
    ``examples``: the ones this run is given; with them, a changed data file
    whose finished examples are all unchanged resumes (see the module's
    docstring). A resumed run keeps the folder's ``started`` time.
    """
    folder = Path(folder)
    has_results = (folder / RESULTS).exists() and (folder / RESULTS).stat().st_size > 0
    old = read_identity(folder) if has_results else None
    if has_results and old is None and not (folder / RUN).exists():
        log.warning("%s has results but no %s (made before runs recorded their config): resuming without "
                    "checking that they were made with this config", folder, RUN)
    identity = dict(identity)
    if old is not None:
        differences = identity_differences(old, identity)
        for key in ("forced", "data_changes"):  # kept across resumes
            previous = old.get(key)
            identity[key] = list(previous) if isinstance(previous, list) else []
        if [d.key for d in differences] == ["data.sha256"] and examples is not None:
            differences = _data_changed(folder, differences[0], examples, identity)
        if differences and not force:
            raise ConfigMismatch(folder, differences)
        if differences:
            log.warning("%s (resuming anyway: forced)", mismatch_line(folder, differences))
            identity["forced"].append({"at": identity["updated"], "differences": [
                {"key": d.key, "old": d.old, "new": d.new} for d in differences]})
        if isinstance(old.get("started"), str):
            identity["started"] = old["started"]
    write_identity(folder, identity)
    return identity


def _data_changed(folder: Path, change: Difference, examples: Sequence[Example],
                  identity: dict[str, Any]) -> list[Difference]:
    """The data file's change checked example by example: [] when every finished example is the
    same (recorded in ``data_changes`` and warned), else the change with the first changed one named."""
    found: FinishedCheck = check_finished(folder, examples)
    if found.changed is not None:
        return [Difference(change.key, change.old, change.new,
                           note=f"finished example {found.changed!r} {found.why}")]
    log.warning("%s: the data file changed (sha256 %s, now %s) but the %d finished examples are unchanged: "
                "resuming", folder, _shown(change.key, change.old), _shown(change.key, change.new), found.finished)
    identity["data_changes"].append({"at": identity["updated"], "old": change.old, "new": change.new,
                                     "finished_unchanged": found.finished, "compared_by": found.compared_by})
    return []


def write_identity(folder: Path, identity: dict[str, Any], *, touch: bool = False) -> None:
    """Write ``run.json``; ``touch``: with ``updated`` set to now (a run's end)."""
    if touch:
        identity["updated"] = now()
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write(folder / RUN, json.dumps(identity, indent=2, ensure_ascii=False, default=str) + "\n")


def _redacted(command: Sequence[str] | str | None) -> list[str] | str | None:
    """The command line as run.json keeps it: a URL's ``user:password`` never written."""
    if command is None:
        return None
    if isinstance(command, str):
        return redact_credentials(command)
    return [redact_credentials(str(part)) for part in command]
