"""Option defaults from TOML config files (optional).

Precedence, highest first: a flag on the command line, its environment
variable (``THOUGHTLOOM_MODEL``...), a config file, the built-in default.
(click resolves exactly in this order once the files are its ``default_map``.)

Files, each optional, read in this order (a later one wins):

1. the user's: ``$THOUGHTLOOM_CONFIG`` if set (then it must exist), else
   ``$XDG_CONFIG_HOME/thoughtloom/config.toml`` (``~/.config/...``);
2. the project's: ``thoughtloom.toml`` in the working folder.

A key is an option's long name (``model``, ``cache``, ``threads``,
``concurrency``, ``timeout``, ``max_calls`` or ``max-calls``...) and sets
that option's default for every command that has it. A table named after a
command sets that command's only, and wins over the top level::

    model = "openai:gpt-4o-mini"
    threads = 2

    [eval]
    concurrency = 8

    [cache.clear]
    yes = true

(``cache`` is both an option and a command group: one file cannot hold a
top-level ``cache = ...`` and a ``[cache.stats]`` table; TOML refuses the
pair.) A ``[role_models]`` table gives ``--role-model`` values, one ``ROLE = "MODEL"``
key each (``evaluator = "small.gguf"``). An unknown key or a value of the wrong type is a one-line error
naming the file and the key.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Iterator

from ..core.errors import ConfigError
from ..core.names import choices_hint
from .conventions import CLICK_ERRORS

PROJECT_FILE = "thoughtloom.toml"
#: options that are actions, not defaults
_NOT_SETTINGS = {"help", "version", "install_completion", "show_completion"}


def config_files() -> list[Path]:
    """The config files that apply here, user's first."""
    files = []
    chosen = os.environ.get("THOUGHTLOOM_CONFIG")
    if chosen:
        path = Path(chosen).expanduser()
        if not path.is_file():
            raise ConfigError(f"config file {path} (THOUGHTLOOM_CONFIG) does not exist",
                              hint="fix the path or unset THOUGHTLOOM_CONFIG")
        files.append(path)
    else:
        home = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
        files.append(home / "thoughtloom" / "config.toml")
    files.append(Path(PROJECT_FILE))
    return [f for f in files if f.is_file()]


def default_map(root: Any, ctx: Any, files: list[Path] | None = None) -> dict[str, Any]:
    """click's ``default_map`` for the command tree under ``root`` (nested by command
    name) from the config files; empty when there are none."""
    commands = dict(_commands(root))
    defaults: dict[tuple[str, ...], dict[str, tuple[Path, str, Any]]] = {}  # command -> name -> file, key, value
    for path in config_files() if files is None else files:
        table = _role_models(path, _read(path))
        tables = {k: v for k, v in table.items() if isinstance(v, dict)}
        everywhere = {k: v for k, v in table.items() if not isinstance(v, dict)}
        _apply(path, "", everywhere, commands, defaults)
        for name, sub in _flatten_tables(tables):
            where = tuple(name.split("."))
            if where not in commands:
                raise ConfigError(f"{path}: unknown command table [{name}]",
                                  hint=choices_hint(name, [".".join(c) for c in commands], listing="commands"))
            _apply(path, f"[{name}] ", sub, {where: commands[where]}, defaults)
    nested: dict[str, Any] = {}
    for where, entries in defaults.items():
        node = nested
        for part in where:
            node = node.setdefault(part, {})
        node.update(_checked(ctx, entries, commands[where]))
    return nested


def _read(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML ({exc})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None


def _role_models(path: Path, table: dict[str, Any]) -> dict[str, Any]:
    """A top-level ``[role_models]`` table (``evaluator = "MODEL"``) as the ``role_model`` key
    (``["evaluator=MODEL"]``, the ``--role-model`` values)."""
    roles = table.pop("role_models", None)
    if roles is None:
        return table
    if not isinstance(roles, dict) or not all(isinstance(v, str) for v in roles.values()):
        raise ConfigError(f"{path}: [role_models] takes ROLE = \"MODEL\" keys",
                          hint='e.g. [role_models] then evaluator = "openai:gpt-4o-mini"')
    if "role_model" in table:
        raise ConfigError(f"{path}: role_model and [role_models] both given", hint="keep one")
    return {**table, "role_model": [f"{role}={model}" for role, model in roles.items()]}


def _flatten_tables(tables: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """``{"cache": {"clear": {...}}}`` -> ``("cache.clear", {...})``; a table's plain keys stay with it."""
    for name, table in tables.items():
        full = f"{prefix}{name}"
        plain = {k: v for k, v in table.items() if not isinstance(v, dict)}
        if plain or not table:
            yield full, plain
        yield from _flatten_tables({k: v for k, v in table.items() if isinstance(v, dict)}, f"{full}.")


def _commands(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], dict[str, Any]]]:
    """(command path, {setting key: click parameter}) for every command and group under ``group``."""
    for name, command in getattr(group, "commands", {}).items():
        where = path + (name,)
        yield where, {key: p for p in command.params if (key := _key(p)) is not None}
        yield from _commands(command, where)


def _key(param: Any) -> str | None:
    """A parameter's name in config files: its long option without dashes (``--n-ctx`` -> n_ctx)."""
    if param.param_type_name != "option":
        return None
    long = next((o for o in param.opts if o.startswith("--")), None)
    key = long[2:].replace("-", "_") if long else None
    return None if key in _NOT_SETTINGS else key


def _apply(path: Path, where: str, values: dict[str, Any], commands: dict[tuple[str, ...], dict[str, Any]],
           defaults: dict[tuple[str, ...], dict[str, tuple[Path, str, Any]]]) -> None:
    known = {key for params in commands.values() for key in params}
    for raw_key, value in values.items():
        key = raw_key.replace("-", "_")
        if key not in known:
            raise ConfigError(f"{path}: {where}unknown key {raw_key!r}",
                              hint=choices_hint(key, known, listing="keys"))
        for command, params in commands.items():
            if key in params:
                defaults.setdefault(command, {})[params[key].name] = (path, raw_key, value)


def _checked(ctx: Any, entries: dict[str, tuple[Path, str, Any]], params: dict[str, Any]) -> dict[str, Any]:
    """The values of ``entries`` (parameter name -> file, key, value), each checked as its
    option would convert and range-check it; a bad one is an error naming file and key."""
    by_name = {p.name: p for p in params.values()}
    for name, (path, raw_key, value) in entries.items():
        param = by_name[name]
        if param.multiple and not isinstance(value, list):
            raise ConfigError(f"{path}: key {raw_key!r} takes a list", hint=f'e.g. {raw_key} = ["{value}"]')
        if not param.expose_value:  # -v/-q: their callbacks act at once, so check without calling them
            if not isinstance(value, bool):
                raise ConfigError(f"{path}: bad value for key {raw_key!r}: {value!r} is not true or false")
            continue
        try:
            param.process_value(ctx, value)
        except CLICK_ERRORS as exc:
            message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
            raise ConfigError(f"{path}: bad value for key {raw_key!r}: {message}") from None
    return {name: value for name, (_, _, value) in entries.items()}
