"""Strategy options: a config built from the user's values, the task's search settings and the defaults.

:func:`make_config` builds a strategy's frozen config from ``key=value``
strings (``--set``), TOML values or keywords through the one options
mechanism (:mod:`thoughtloom.core.options`: each field's declared type,
bounds and choices, one coercer, one error format); a tree strategy built
for a task takes the task's ``search_settings``
(:class:`~thoughtloom.core.options.TaskSetting`) for the options the user
leaves unset (:func:`task_settings`), and :func:`option_sources` says where
each value came from.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from ..core.errors import ConfigError
from ..core.options import make
from ..core.protocols import TaskView
from .interface import Strategy


#: Where an option's value came from (:func:`option_sources`): the user (``--set``, a
#: suite's settings, a keyword), a preset the user named (``preset NAME``), the task
#: (``Task.search_settings``), or the strategy's default.
FROM_USER, FROM_PRESET, FROM_TASK, FROM_STRATEGY = "user", "preset", "task", "strategy default"


def task_settings(cls: "type[Strategy]", task: TaskView | None) -> dict[str, Any]:
    """The task's search settings (``TaskSetting``s by option) that ``cls`` takes: a tree
    strategy (``needs == "search"``) takes each one its config has an option for."""
    if task is None or cls.needs != "search" or not dataclasses.is_dataclass(cls.Config):
        return {}
    declared = task.search_settings
    names = {f.name for f in dataclasses.fields(cls.Config)}
    return {k: v for k, v in declared.items() if k in names}


def option_sources(cls: "type[Strategy]", overrides: Mapping[str, Any],
                   task: TaskView | None = None, resolved: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Each option of ``cls`` and where its value comes from: ``user``, ``preset NAME`` (a value
    of the preset the user named that no option given beside it overrides), ``task NAME: <source>``
    or ``strategy default``."""
    taken = task_settings(cls, task)
    resolved = resolve_options(cls, overrides) if resolved is None else resolved
    preset = f"{FROM_PRESET} {str(overrides['preset']).strip()}" if "preset" in overrides else ""
    out = {}
    for f in dataclasses.fields(cls.Config):
        if f.name in overrides:
            out[f.name] = FROM_USER
        elif f.name in resolved:
            out[f.name] = preset
        elif f.name in taken:
            out[f.name] = f"{FROM_TASK} {task.name}: {taken[f.name].source}"
        else:
            out[f.name] = FROM_STRATEGY
    return out


def resolve_options(cls: "type[Strategy]", overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The options ``overrides`` stand for: a ``preset`` key expands into that preset's values
    (:attr:`Strategy.presets`), and every other key given overrides them."""
    rest = {k: v for k, v in overrides.items() if k != "preset"}
    if "preset" not in overrides:
        return rest
    name = str(overrides["preset"]).strip()
    if name not in cls.presets:
        raise ConfigError(f"strategy {cls.name!r} has no preset {name!r}",
                          hint="presets: " + (", ".join(cls.presets) or "none"))
    return {**cls.presets[name], **rest}


def make_config(cls: "type[Strategy]", overrides: Mapping[str, Any], task: TaskView | None = None,
                resolved: Mapping[str, Any] | None = None) -> Any:
    """Build ``cls.Config`` from ``key=value`` strings (the CLI's ``--set``), TOML values (a
    suite's settings) or Python values (the API's keyword arguments), each coerced to its
    declared type and checked against its declared bounds and choices by the one coercer
    (:func:`thoughtloom.core.options.make`); ``preset=NAME`` first fills in a preset's values
    (:func:`resolve_options`); options the user leaves unset take the task's search settings
    where it has them (:func:`task_settings`), else the strategy's defaults. ``resolved``: the
    options :func:`resolve_options` already made of ``overrides`` (``strategies.build`` resolves once)."""
    base = {k: s.value for k, s in task_settings(cls, task).items()}
    values = resolve_options(cls, overrides) if resolved is None else resolved
    return make(cls.Config, values, owner=cls.name, kind="strategy", base=base)
