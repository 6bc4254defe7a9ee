"""What every ``thoughtloom`` command does the same way: -v/-q anywhere, --version.

typer reads a command's options from its signature. ``-v/--verbose`` and
``-q/--quiet`` are instead added to every command by the app's group class,
:class:`Commands`, as typer builds it, so they work before the subcommand
name and after it (``thoughtloom -q eval ...``, ``thoughtloom eval ... -q``,
``thoughtloom cache stats -v``) and a command module added later gets them
without a line of its own.

- verbose: log progress details (INFO) on stderr;
- quiet: no progress and no notes, only results (stdout) and errors (stderr,
  through :data:`.render.err`, which ``-q`` never silences).

The flags only turn things on; the root group resets them before each
invocation (tests invoke the app many times in one process).
"""

from __future__ import annotations

import logging
import sys
from typing import Annotated, Any

import typer
import typer.core
import typer.main

from ..version import __version__
from ..core.errors import ConfigError
from ..core.text import printable, redact_credentials
from .render import err, notes

_flags = {"verbose": False, "quiet": False}
_handler: logging.Handler | None = None


def quiet() -> bool:
    """Whether ``-q`` was given (progress and notes are off)."""
    return _flags["quiet"]


def _apply() -> None:
    global _handler
    if _flags["verbose"] and _flags["quiet"]:
        raise ConfigError("--verbose and --quiet cannot be used together")
    if _handler is None:
        _handler = _LogHandler()
        _handler.setFormatter(SafeFormatter("%(message)s"))
    root = logging.getLogger()
    if _handler not in root.handlers:
        root.addHandler(_handler)
    root.setLevel(logging.INFO if _flags["verbose"] else logging.ERROR if _flags["quiet"] else logging.WARNING)
    notes.quiet = _flags["quiet"]


class SafeFormatter(logging.Formatter):
    """Log lines as the terminal may show them: a message quoting a model reply or a passage has
    its control characters as escapes (``core.text.printable``), a URL its user:password hidden."""

    def format(self, record: logging.LogRecord) -> str:
        return printable(redact_credentials(super().format(record)))


class _LogHandler(logging.Handler):
    """Log records on :data:`.render.err`: rich's layout on a terminal; in a pipe or a log file one
    plain line each (``warning: ...``), since rich pads its log table to the console's width."""

    def __init__(self) -> None:
        super().__init__()
        from rich.logging import RichHandler

        self._rich = RichHandler(console=err, show_path=False)

    def setFormatter(self, fmt: logging.Formatter | None) -> None:
        super().setFormatter(fmt)
        self._rich.setFormatter(fmt)

    def emit(self, record: logging.LogRecord) -> None:
        if err.is_terminal:
            self._rich.handle(record)
            return
        try:
            err.print(f"{record.levelname.lower()}: {self.format(record)}", markup=False, highlight=False,
                      soft_wrap=True)
        except Exception:  # logging must never fail the command
            self.handleError(record)


def _turn_on(flag: str) -> Any:
    def callback(value: bool) -> bool:
        if value:
            _flags[flag] = True
            _apply()
        return value
    return callback


def _verbosity_params() -> list[Any]:
    """-v and -q as typer builds them (the same click classes as every other option,
    whichever click typer uses): read off a one-command probe app."""
    probe = typer.Typer(add_completion=False)

    @probe.command()
    def _probe(
        verbose: Annotated[bool, typer.Option(
            "--verbose", "-v", help="Log progress details.", callback=_turn_on("verbose"), expose_value=False)] = False,
        quiet: Annotated[bool, typer.Option(
            "--quiet", "-q", help="No progress or notes: only results and errors.", callback=_turn_on("quiet"),
            expose_value=False)] = False,
    ) -> None: ...

    return list(typer.main.get_command(probe).params)


class Commands(typer.core.TyperGroup):
    """The root group: every command in the tree (and the root) takes -v and -q."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        shared = _verbosity_params()
        todo: list[Any] = [self]
        while todo:
            command = todo.pop()
            names = {p.name for p in command.params}
            command.params.extend(p for p in shared if p.name not in names)
            todo.extend(getattr(command, "commands", {}).values())

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        _flags.update(verbose=False, quiet=False)
        _apply()
        _help_layout(self, boxed=sys.stdout.isatty())
        return super().parse_args(ctx, args)


def _help_layout(root: Any, *, boxed: bool) -> None:
    """``--help`` as rich's boxed panels on a terminal; in a pipe or a file click's plain layout, since
    rich's panels, laid out 80 columns wide there, wrap an option's help 3 or 4 words a line."""
    todo: list[Any] = [root]
    while todo:
        command = todo.pop()
        if not hasattr(command, "_boxed_markup"):
            command._boxed_markup = getattr(command, "rich_markup_mode", None)
        command.rich_markup_mode = command._boxed_markup if boxed else None
        todo.extend(getattr(command, "commands", {}).values())


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"thoughtloom {__version__}")
        raise typer.Exit()


Version = Annotated[bool, typer.Option(
    "--version", help="Print thoughtloom's version and exit.", callback=_show_version, is_eager=True)]


#: click's exceptions (typer < 0.25 raises click's own; later typer vendors click
#: and raises subclasses of typer.TyperException).
try:
    import click as _click

    CLICK_ERRORS: tuple[type[BaseException], ...] = (_click.ClickException,)
    ABORTS: tuple[type[BaseException], ...] = (_click.Abort, typer.Abort, KeyboardInterrupt)
except ImportError:  # pragma: no cover - typer without click
    CLICK_ERRORS, ABORTS = (), (typer.Abort, KeyboardInterrupt)
CLICK_ERRORS += tuple(c for c in (getattr(typer, "TyperException", None),) if c is not None)
