"""The user's own code named on the command line: ``--metric MODULE:FUNCTION``, ``--task MODULE:CLASS``,
``--strategy MODULE:CLASS`` (and ``thoughtloom run MODULE:CLASS``).

``MODULE`` is an importable module (the working folder is searched first,
as ``python -m`` does) or a path to a ``.py`` file. Whatever cannot be
imported is one :class:`ConfigError` line naming the flag, the module and
what went wrong.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any, Callable

from .. import strategies, tasks
from ..core.errors import ConfigError
from ..core.names import unknown
from ..tasks.base import Task
from ..tasks.qa import METRICS


def is_spec(value: str) -> bool:
    """Whether ``value`` names user code (``module:name``) rather than a built-in name."""
    return ":" in value


def load(spec: str, flag: str) -> Any:
    """The object ``spec`` (``module:name`` or ``path/to/file.py:name``) names."""
    module_name, _, attr = spec.rpartition(":")
    if not module_name or not attr:
        raise ConfigError(f"bad {flag} {spec!r}", hint="write MODULE:NAME, e.g. my_metrics:exact")
    module = _module(module_name, spec, flag)
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            names = [n for n in dir(module) if not n.startswith("_")]
            raise ConfigError(f"{flag} {spec}: {module_name} has no {attr!r}",
                              hint=f"it defines: {', '.join(names[:20]) or 'nothing public'}")
        obj = getattr(obj, part)
    return obj


def _module(name: str, spec: str, flag: str) -> Any:
    try:
        if name.endswith(".py"):
            path = Path(name).expanduser()
            if not path.is_file():
                raise ConfigError(f"{flag} {spec}: no file {path}")
            where = importlib.util.spec_from_file_location(path.stem, path)
            assert where is not None and where.loader is not None
            module = importlib.util.module_from_spec(where)
            sys.modules[path.stem] = module  # pickling by reference (Ray) finds it again
            where.loader.exec_module(module)
            return module
        cwd = os.getcwd()
        if cwd not in sys.path:  # a console script does not search the working folder; python -m does
            sys.path.insert(0, cwd)
        return importlib.import_module(name)
    except ConfigError:
        raise
    except ModuleNotFoundError as exc:
        if exc.name and name.split(".")[0] == exc.name.split(".")[0]:
            raise ConfigError(f"{flag} {spec}: no module named {exc.name!r} in the working folder or the "
                              "installed packages",
                              hint=f"run from the folder that holds {name.split('.')[0]}.py, or write "
                                   "path/to/file.py:NAME") from None
        raise ConfigError(f"{flag} {spec}: importing {name} failed: {exc}") from None
    except Exception as exc:  # the user's module raised while it was imported
        raise ConfigError(f"{flag} {spec}: importing {name} failed: {type(exc).__name__}: {exc}") from None


def metric(spec: str | None) -> str | Callable[..., Any] | None:
    """A built-in metric's name, or the user's function ``spec`` names."""
    if spec is None or not is_spec(spec):
        if spec is not None and spec not in METRICS:
            raise unknown("metric", spec, sorted(METRICS))
        return spec
    fn = load(spec, "--metric")
    if not callable(fn):
        raise ConfigError(f"--metric {spec}: {type(fn).__name__} is not a function",
                          hint="point at a function fn(prediction, gold) -> float")
    return fn


def task(name: str, *, input_field: str = "question", gold_field: str = "answer",
         metric_spec: str | None = None) -> Task:
    """The task ``--task`` names: a built-in one, ``qa`` with its fields and metric, or the
    user's ``MODULE:CLASS`` (a :class:`~thoughtloom.tasks.Task` subclass, or an instance of one)."""
    chosen: str | Task = name
    if is_spec(name):
        obj = load(name, "--task")
        if isinstance(obj, type) and issubclass(obj, Task):
            obj = obj()
        if not isinstance(obj, Task):
            raise ConfigError(f"--task {name}: {obj!r} is not a thoughtloom Task",
                              hint="subclass thoughtloom.tasks.Task (see the Task API in docs/tasks.md)")
        chosen = obj
    return tasks.resolve(chosen, input_field=input_field, gold_field=gold_field, metric=metric(metric_spec))


def strategy(name: str) -> str:
    """The registered name of the strategy ``--strategy`` names: a built-in name as it is, or the user's
    ``MODULE:CLASS`` (a :class:`~thoughtloom.strategies.Strategy` subclass), registered here under its
    ``name`` (``@strategies.register("NAME")``) or, without one, under its class name."""
    if not is_spec(name):
        return name
    cls = load(name, "--strategy")
    if not (isinstance(cls, type) and issubclass(cls, strategies.Strategy)):
        raise ConfigError(f"--strategy {name}: {cls!r} is not a thoughtloom Strategy",
                          hint="subclass thoughtloom.strategies.Strategy and write solve(problem, ctx) "
                               "(see docs/library.md)")
    registered = cls.name or cls.__name__
    try:
        strategies.register(registered, again=True)(cls)
    except ValueError:
        raise ConfigError(f"--strategy {name}: its name {registered!r} is another strategy's",
                          hint="give the class a name of its own with @strategies.register(\"NAME\")") from None
    return registered
