"""Prompts are package data, read by one loader: one ``<role>.txt`` file per role.

Every prompt file lives under this package, named by its path without
``.txt``: the roles' templates at the top (``cot``, ``hgot_plan``...),
DecomP's few-shot programs below ``decomp/`` (``decomp/decomposers/<name>``,
``decomp/handlers/<name>``). Any file can be overridden on its own by a file
at the same relative path in a directory passed as ``prompt_dir`` (the
CLI's ``--prompts DIR`` / ``THOUGHTLOOM_PROMPTS``); :func:`read` returns the
text, :func:`names` what a folder holds.

Templates use ``string.Template`` placeholders (``$question``, ``$demos``,
...).

A template with few-shot demos can be laid out two ways from the same file:

- **text** (:func:`render`): one user message, the demos written into
  ``$demos``. This is the completion-style layout: the model continues a
  document whose format the demos set.
- **chat** (:func:`render_turns`): the text before ``$demos`` becomes the
  system message (the instruction), each demo becomes a user turn (its
  question) and an assistant turn (its answer), and the text after
  ``$demos`` becomes the last user message. A chat model then answers the
  real question instead of reading the demos as tasks to solve.

Which roles use which layout is decided where they are sent; see
``docs/prompts.md``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Sequence
from string import Template

from ..core.errors import ConfigError
from ..core.types import Message, assistant, system, user

# ``$demos`` or ``${demos}``, where a template's demos go
_DEMOS = re.compile(r"\$(?:demos\b|\{demos\})")


def _packaged_path(name: str) -> Traversable:
    """``name`` (a path below this package, ``/``-separated) among the package's files."""
    path = resources.files(__name__)
    for part in name.split("/"):
        path = path / part
    return path


@lru_cache(maxsize=None)
def _packaged(name: str) -> str | None:
    path = _packaged_path(f"{name}.txt")
    return path.read_text(encoding="utf-8") if path.is_file() else None


#: Prompt files renamed, new name -> old: the tree-search kernel's prompts were ``sculpt_*``
#: while Tree of Thoughts and Self-Refine ran on them too. An override file under its old
#: name still replaces the prompt (the new name wins where both are given).
RENAMED: dict[str, str] = {"tree_root": "sculpt_root", "tree_generate": "sculpt_generate",
                           "tree_evaluate": "sculpt_evaluate", "tree_evaluate_items": "sculpt_evaluate_items"}


def read(name: str, prompt_dir: str | Path | None = None) -> str | None:
    """The text of prompt file ``name`` (``cot``, ``decomp/handlers/qa``): the override
    in ``prompt_dir`` if there is one (under its name, else its old name, :data:`RENAMED`),
    else ours; None if neither exists."""
    if prompt_dir is not None:
        for candidate in (name, RENAMED.get(name)):
            override = Path(prompt_dir) / f"{candidate}.txt" if candidate else None
            if override is not None and override.is_file():
                return override.read_text(encoding="utf-8")
    return _packaged(name)


def names(folder: str, prompt_dir: str | Path | None = None) -> set[str]:
    """The prompt files in ``folder`` (``decomp/handlers``), ours and the overrides', without ``.txt``."""
    found = {p.name[:-4] for p in _packaged_path(folder).iterdir() if p.name.endswith(".txt")}
    if prompt_dir is not None and (Path(prompt_dir) / folder).is_dir():
        found |= {p.stem for p in (Path(prompt_dir) / folder).glob("*.txt")}
    return found


def load(name: str, prompt_dir: str | Path | None = None) -> Template:
    """The template for ``name``: the override in ``prompt_dir`` if present, else ours."""
    text = read(name, prompt_dir)
    if text is None:
        raise ConfigError(f"no prompt template named {name!r}")
    return Template(text)


def _fill(name: str, template: Template, fields: dict[str, object]) -> str:
    try:
        return template.substitute(**{k: str(v) for k, v in fields.items()}).strip()
    except (KeyError, ValueError) as exc:
        raise ConfigError(f"prompt template {name!r} has a bad placeholder: {exc}") from exc


def render(name: str, prompt_dir: str | Path | None = None, **fields: object) -> str:
    """Fill a template; unknown placeholders raise a clear error naming the template."""
    return _fill(name, load(name, prompt_dir), fields)


def render_turns(name: str, prompt_dir: str | Path | None, demos: Sequence[tuple[str, str]],
                 **fields: object) -> list[Message]:
    """The template as chat turns: system (text before ``$demos``), one
    (user, assistant) pair per demo, then the user message (text after).

    A template without ``$demos`` is one user message, without the demos, as
    in the text layout.
    """
    parts = _DEMOS.split(load(name, prompt_dir).template, maxsplit=1)
    if len(parts) == 1:
        return [user(_fill(name, Template(parts[0]), fields))]
    head, tail = parts
    messages: list[Message] = []
    instruction = _fill(name, Template(head), fields)
    if instruction:
        messages.append(system(instruction))
    for question, answer in demos:
        messages += [user(question), assistant(answer)]
    messages.append(user(_fill(name, Template(tail), fields)))
    return messages
