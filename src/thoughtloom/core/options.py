"""Options: typed fields with declared bounds and choices, one coercer, one error format.

Every set of options a user can give -- a strategy's config (``--set``, a
suite's TOML ``settings``, ``thoughtloom.solve(..., n=5)``), the LLM judge's
``--entail llm:KEY=V,...``, an index's ``--set bm25.KEY=V`` and a DecomP
handler's ``#: KEY=V`` header -- is a frozen dataclass whose fields declare
their type and, where it matters, their bounds and choices with
:func:`option`::

    @dataclass(frozen=True)
    class EchoConfig(Options):
        n: int = option(5, min=1)                      # chains sampled
        layout: str = option("chat", choices=("chat", "text"))
        temperature: float = 0.7                       # a plain default: finite, no bounds

:func:`make` builds one from user values, :func:`coerce` turns one value into
its field's declared type and checks it, and :class:`Options` (a base class)
checks a config made directly (``EchoConfig(n=0)``). The rules, one set for
every caller:

- a string is read as the field's type: ``"3"`` -> 3, ``"0.7"`` -> 0.7,
  ``"true"``/``"yes"``/``"on"``/``"1"`` and ``"false"``/``"no"``/``"off"``/``"0"``
  for a bool, ``"none"``/``"null"`` for an optional field's None; a str
  field keeps the text as given;
- any other value (TOML, a keyword) must already be of the type; an int is
  taken where a float is asked, a bool is never a number;
- a float must be finite; a number must lie within the field's ``min`` and
  ``max``, a value must be one of its ``choices``; nothing else is refused
  (no bound is guessed from an option's name: a field states its own).

Every refusal is one :class:`~.errors.ConfigError`: ``bad value for OWNER
option NAME: VALUE (HINT)`` where HINT says what is allowed (``expected
int``, ``must be >= 1``, ``must be one of: chat, text``), or ``OWNER has no
option 'x' (did you mean ...? options: ...)`` for a name the dataclass does
not have. :func:`describe` gives each field's declaration (type, default,
bounds, choices, help) for ``thoughtloom strategies NAME``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import types
import typing
from collections.abc import KeysView
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from .errors import ConfigError
from .names import choices_hint


@dataclass(frozen=True)
class TaskSetting:
    """A search option's value that a task declares (``Task.search_settings``), and where it comes from
    (the paper's sentence, or why we chose it where the paper is silent)."""

    value: Any
    source: str


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")
_NONE = ("none", "null")
_MISSING: Any = dataclasses.MISSING


def option(default: Any = _MISSING, *, default_factory: Any = _MISSING, min: float | None = None,
           max: float | None = None, choices: Iterable[Any] | None = None, help: str = "",
           hint: str = "") -> Any:
    """A dataclass field that declares its bounds (``min``/``max``, inclusive), its ``choices``,
    its ``help`` (``thoughtloom strategies NAME``; else the comment on its line is the help) and
    a ``hint`` added to a refusal's (say where a value that is not a choice belongs)."""
    meta: dict[str, Any] = {}
    if min is not None:
        meta["min"] = min
    if max is not None:
        meta["max"] = max
    if choices is not None:  # a registry's live names stay live: a part registered later is a choice too
        meta["choices"] = choices if isinstance(choices, KeysView) else tuple(choices)
    if help:
        meta["help"] = help
    if hint:
        meta["hint"] = hint
    return dataclasses.field(default=default, default_factory=default_factory, metadata=meta)


def bad_value(owner: str, name: str, value: Any, hint: str) -> ConfigError:
    """The one refusal of an option's value: ``bad value for OWNER option NAME: VALUE (HINT)``."""
    where = f"{owner} option" if owner else "option"
    return ConfigError(f"bad value for {where} {name}: {value!r}", hint=hint)


def unknown_option(owner: str, name: str, known: Iterable[str]) -> ConfigError:
    """``OWNER has no option 'name'`` with the nearest option, if any, and every option."""
    return ConfigError(f"{owner} has no option {name!r}", hint=choices_hint(name, known, listing="options"))


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _split_optional(annotation: Any) -> tuple[Any, bool]:
    """(the type, whether None is allowed) of ``X``, ``X | None`` or ``Optional[X]``."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0], len(args) < len(typing.get_args(annotation))
    return annotation, False


def type_name(annotation: Any) -> str:
    """``int``, ``str | None``, ...: an option's type as ``thoughtloom strategies`` shows it."""
    return getattr(annotation, "__name__", None) or str(annotation).replace("typing.", "")


def _expected(annotation: Any, optional: bool) -> str:
    name = type_name(annotation)
    if annotation is bool:
        name = "bool (true or false)"
    return f"expected {name}" + (" or none" if optional else "")


def _from_text(text: str, kind: Any, optional: bool, owner: str, name: str) -> Any:
    low = text.strip().lower()
    if optional and low in _NONE:
        return None
    if kind is str:
        return text
    if kind is bool:
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
    elif kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    else:
        raise ConfigError(f"{owner} option {name} cannot be set from text", hint=f"pass a {type_name(kind)}")
    raise bad_value(owner, name, text, _expected(kind, optional))


def _typed(value: Any, kind: Any, optional: bool, owner: str, name: str) -> Any:
    if value is None and optional:
        return None
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(kind, type) and isinstance(value, kind) and not (isinstance(value, bool) and kind is not bool):
        return value
    if not isinstance(kind, type):  # a type the coercer does not know: the dataclass takes it as given
        return value
    raise bad_value(owner, name, value, _expected(kind, optional))


def check_value(field: dataclasses.Field, value: Any, owner: str = "") -> None:
    """Refuse ``value`` for ``field`` if it is a non-finite float, out of the field's bounds or not
    one of its choices (None, an unset optional, is never refused here)."""
    if value is None:
        return
    meta = field.metadata or {}
    extra = f"; {meta['hint']}" if meta.get("hint") else ""
    choices = meta.get("choices")
    if choices is not None and value not in choices:
        raise bad_value(owner, field.name, value, "must be one of: " + ", ".join(map(str, choices)) + extra)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return
    if isinstance(value, float) and not math.isfinite(value):
        raise bad_value(owner, field.name, value, "must be a finite number")
    low, high = meta.get("min"), meta.get("max")
    if low is not None and value < low:
        raise bad_value(owner, field.name, value, f"must be >= {low}{extra}")
    if high is not None and value > high:
        raise bad_value(owner, field.name, value, f"must be <= {high}{extra}")


def coerce(cls: type, name: str, value: Any, owner: str = "") -> Any:
    """``value`` (text, a TOML value or a Python value) as field ``name`` of dataclass ``cls``
    declares it, checked (:func:`check_value`); a :class:`ConfigError` in the one format if not."""
    known = fields_of(cls)
    if name not in known:
        raise unknown_option(owner or cls.__name__, name, known)
    field = known[name]
    kind, optional = _split_optional(_hints(cls)[name])
    typed = (_from_text(value, kind, optional, owner, name) if isinstance(value, str)
             else _typed(value, kind, optional, owner, name))
    check_value(field, typed, owner)
    return typed


def fields_of(cls: type) -> dict[str, dataclasses.Field]:
    """A dataclass's fields by name."""
    return {f.name: f for f in dataclasses.fields(cls)}


def make(cls: type, values: Mapping[str, Any], *, owner: str, kind: str = "", base: Mapping[str, Any] = ()) -> Any:
    """``cls`` built from ``values`` (each coerced and checked, :func:`coerce`) over ``base``
    (values already of their types, e.g. a task's settings, checked the same way); the fields
    given in neither take their defaults. An unknown name is refused, listing the options;
    ``kind`` names what ``owner`` is in that message (``strategy 'cot'``)."""
    known = fields_of(cls)
    out = {k: coerce(cls, k, v, owner) for k, v in dict(base).items()}
    for key, raw in values.items():
        if key not in known:
            raise unknown_option(f"{kind} {owner!r}" if kind else owner, key, known)
        out[key] = coerce(cls, key, raw, owner)
    return cls(**out)


def check_options(config: Any, *, owner: str = "") -> None:
    """Raise :class:`ConfigError` naming the first field of dataclass ``config`` whose value is
    refused by :func:`check_value` (not a dataclass: nothing to check)."""
    if not dataclasses.is_dataclass(config) or isinstance(config, type):
        return
    for field in dataclasses.fields(config):
        check_value(field, getattr(config, field.name, None), owner)


class Options:
    """Base of an options dataclass: one made directly (``MCTSConfig(parallel=0)``) is checked
    when made, its class name standing for the owner in the message. A subclass that needs a
    ``__post_init__`` of its own calls ``super().__post_init__()``."""

    def __post_init__(self) -> None:
        check_options(self, owner=type(self).__name__)


def describe(cls: type) -> list[dict[str, Any]]:
    """Each field of dataclass ``cls`` as declared: name, type, default, min, max, choices, help
    (the declared help; empty where none was given)."""
    hints = _hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        meta = f.metadata or {}
        default = f.default if f.default is not _MISSING else (
            f.default_factory() if f.default_factory is not _MISSING else None)
        out.append({"name": f.name, "type": type_name(hints.get(f.name)), "default": default,
                    "min": meta.get("min"), "max": meta.get("max"),
                    "choices": list(meta["choices"]) if "choices" in meta else None, "help": meta.get("help", "")})
    return out


def allowed(entry: Mapping[str, Any]) -> str:
    """What a :func:`describe` entry allows, in a few characters: ``chat | text``, ``>= 1``, ``1..100``."""
    if entry.get("choices") is not None:
        return " | ".join(map(str, entry["choices"]))
    low, high = entry.get("min"), entry.get("max")
    if low is not None and high is not None:
        return f"{low}..{high}"
    if low is not None:
        return f">= {low}"
    if high is not None:
        return f"<= {high}"
    return ""
