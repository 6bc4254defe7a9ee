"""Prompt templates are package data: one ``<role>.txt`` file per role.

Templates use ``string.Template`` placeholders (``$question``, ``$demos``,
...). Any template can be overridden on its own by putting a file of the
same name in a directory passed as ``prompt_dir`` (the CLI's
``--prompts DIR`` / ``THOUGHTLOOM_PROMPTS``).
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path
from string import Template

from ..core.errors import ConfigError


@lru_cache(maxsize=None)
def _packaged(name: str) -> str:
    try:
        return resources.files(__name__).joinpath(f"{name}.txt").read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigError(f"no prompt template named {name!r}") from exc


def load(name: str, prompt_dir: str | Path | None = None) -> Template:
    """The template for ``name``: the override in ``prompt_dir`` if present, else ours."""
    if prompt_dir is not None:
        override = Path(prompt_dir) / f"{name}.txt"
        if override.is_file():
            return Template(override.read_text(encoding="utf-8"))
    return Template(_packaged(name))


def render(name: str, prompt_dir: str | Path | None = None, **fields: object) -> str:
    """Fill a template; unknown placeholders raise a clear error naming the template."""
    try:
        return load(name, prompt_dir).substitute(**{k: str(v) for k, v in fields.items()}).strip()
    except (KeyError, ValueError) as exc:
        raise ConfigError(f"prompt template {name!r} has a bad placeholder: {exc}") from exc
