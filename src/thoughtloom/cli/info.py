"""``thoughtloom strategies [NAME]`` and ``thoughtloom models``: what there is to run.

Everything shown is read from the code: a strategy's paper and the tasks it
is built for from its class (``Strategy.paper``, ``Strategy.supports``), its
description from its docstring (RST markup removed), its options from its
config dataclass as :func:`thoughtloom.core.options.describe` reads the
declarations (type, default, bounds, choices: the same ones ``--set`` is
checked against), each option's help from its declared ``help``, else the
comment on (or just above) its line in the source. ``--json`` prints the same as one JSON document.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import io
import json
import re
import textwrap
import tokenize
from typing import Annotated, Any, Optional

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from .. import strategies, tasks
from ..core.errors import ThoughtloomError
from ..core.options import allowed
from ..core.options import describe as describe_options
from ..strategies.config import FROM_STRATEGY, option_sources, task_settings
from ..strategies.interface import DEFAULT_MAX_CALLS
from .options import complete_strategy, complete_task
from .render import out

AsJson = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]

#: how ``thoughtloom strategies`` groups and titles the strategies (Strategy.paper)
PAPERS = {
    "DecomP": "DecomP: Decomposed Prompting (Khot et al., ICLR 2023)",
    "HGOT": "HGOT: Hierarchical Graph of Thoughts (Fang et al., 2024)",
    "ThoughtSculpt": "ThoughtSculpt: search over revisable thoughts (Chi, Yang, Klein 2024)",
    "baselines": "Baselines",
}


_ROLE = re.compile(r":[\w:]+:`~?([^`]*)`")  # :class:`~a.b.C`, :func:`f`, :ref:`text <target>`


def plain(text: str) -> str:
    """Docstring text without RST markup: ``x`` -> x, :class:`~a.b.C` -> C, :ref:`text <t>` -> text."""
    def role(match: re.Match[str]) -> str:
        target = match.group(1)
        if "<" in target:
            return target.split("<", 1)[0].strip()
        return target.rsplit(".", 1)[-1]

    return re.sub(r"``(.+?)``", r"\1", _ROLE.sub(role, text))


def summary_line(cls: type) -> str:
    return plain((cls.__doc__ or "").strip().splitlines()[0]) if cls.__doc__ else ""


def option_help(config: type) -> dict[str, str]:
    """Each field's help: the comment after it on its line, else the comment lines just above it.
    Base classes first, so a subclass's own comment wins."""
    helps: dict[str, str] = {}
    for cls in reversed(config.__mro__):
        if not dataclasses.is_dataclass(cls):
            continue
        try:
            lines = textwrap.dedent(inspect.getsource(cls)).splitlines()
        except (OSError, TypeError):  # no source (a class made at run time): no help
            continue
        comments = {t.start[0]: t.string.lstrip("#").strip() for t in
                    tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline)
                    if t.type == tokenize.COMMENT}
        own = {f.name for f in dataclasses.fields(cls)} & set(vars(cls).get("__annotations__", {}))
        for number, line in enumerate(lines, start=1):
            match = re.match(r"\s+(\w+)\s*:", line)
            if not match or match.group(1) not in own:
                continue
            text = comments.get(number) if not line.strip().startswith("#") else None
            above, n = [], number - 1
            while not text and n >= 1 and lines[n - 1].strip().startswith("#"):
                above.insert(0, comments.get(n, ""))
                n -= 1
            helps[match.group(1)] = text or " ".join(above)
    return helps


def options(cls: type) -> list[dict[str, Any]]:
    """A strategy's options as its config declares them: name, type, default, min, max, choices
    (None where not declared) and help."""
    config = cls.Config
    helps = option_help(config)
    return [{**o, "help": o["help"] or helps.get(o["name"], "")} for o in describe_options(config)]


def built_for(cls: type) -> list[str]:
    """The tasks a strategy is built for (Strategy.supports over every task)."""
    return [t for t in tasks.available() if cls.supports(tasks.get(t))]


def describe(name: str, task: str | None = None) -> dict[str, Any]:
    """A strategy's paper, description, tasks and options; ``task_settings``: each task's search settings it
    takes (value and source). With ``task``, each option also has the ``value`` it takes on that task and
    ``from``: where that comes from (``task NAME: <source>`` or ``strategy default``)."""
    cls = strategies.get(name)
    info = {"name": name, "paper": cls.paper, "description": summary_line(cls), "tasks": built_for(cls),
            "options": options(cls), "task_settings": {},
            "presets": {k: dict(v) for k, v in cls.presets.items()}}
    for t in tasks.available():
        taken = task_settings(cls, tasks.get(t))
        if taken:
            info["task_settings"][t] = {k: {"value": s.value, "source": s.source} for k, s in taken.items()}
    if task is not None:
        task_obj = tasks.get(task)
        config = strategies.build(name, {}, task_obj).config if dataclasses.is_dataclass(cls.Config) else None
        sources = option_sources(cls, {}, task_obj) if config is not None else {}
        info["task"] = task
        for o in info["options"]:
            o["value"], o["from"] = getattr(config, o["name"], o["default"]), sources.get(o["name"], FROM_STRATEGY)
    return info


def _tasks_cell(names: list[str]) -> str:
    return "any" if set(names) == set(tasks.available()) else ", ".join(names) or "(none)"


def list_strategies(
    name: Annotated[Optional[str], typer.Argument(help="Show one strategy's options with defaults and help.",
                                                  autocompletion=complete_strategy)] = None,
    as_json: AsJson = False,
    task: Annotated[Optional[str], typer.Option(
        "--task", "-t", help="With NAME: the value each option takes on this task, and where it comes from "
                             "(the task's search settings, or the strategy's default).",
        autocompletion=complete_task)] = None,
) -> None:
    """Strategies grouped by paper, with the tasks each is built for and its options."""
    if name is not None:
        _show_strategy(describe(name, task), as_json)
        return
    every = [describe(n) for n in strategies.available()]
    if as_json:
        out.print_json(json.dumps({"strategies": every, "tasks": tasks.available(),
                                   "default_max_calls": DEFAULT_MAX_CALLS}, default=str))
        return
    for paper, title in PAPERS.items():
        rows = [s for s in every if s["paper"] == paper]
        if not rows:
            continue
        table = Table(title=title, title_justify="left", title_style="bold", box=box.SIMPLE_HEAD, expand=out.is_terminal)
        table.add_column("strategy", style="bold", no_wrap=True)
        # where lines do not wrap (a pipe), the long cells wrap at a readable width of their own
        table.add_column("what it does [dim](options)[/]", ratio=3, max_width=None if out.is_terminal else 80)
        table.add_column("tasks", ratio=2, max_width=None if out.is_terminal else 50)
        for s in rows:
            names = " ".join(o["name"] for o in s["options"])
            table.add_row(s["name"], f"{s['description']}\n[dim]{names}[/]", _tasks_cell(s["tasks"]))
        out.print(table)
    out.print(f"[bold]tasks:[/] {', '.join(tasks.available())}")
    out.print("[dim]`thoughtloom strategies NAME` shows a strategy's options with defaults and help; set them "
              f"with --set KEY=VALUE. Every question is capped at {DEFAULT_MAX_CALLS} model calls by default "
              "(--max-calls N raises the budget and each strategy's own max_calls with it)[/]")


def _show_strategy(info: dict[str, Any], as_json: bool) -> None:
    if as_json:
        out.print_json(json.dumps(info, default=str))
        return
    out.print(f"[bold]{info['name']}[/] ({PAPERS[info['paper']].split(':')[0]}): {info['description']}")
    out.print(f"[bold]tasks:[/] {_tasks_cell(info['tasks'])}")
    table = Table(title_justify="left", expand=out.is_terminal)
    on_task = "task" in info
    for column in ("option", "type", "default", "allowed") + ((f"on {info['task']}", "from") if on_task else ()):
        table.add_column(column, no_wrap=True, style="bold" if column == "option" else None)
    table.add_column("help", ratio=1, max_width=None if out.is_terminal else 60)
    for o in info["options"]:
        extra = (repr(o["value"]), o["from"].split(":", 1)[0]) if on_task else ()
        table.add_row(o["name"], o["type"], repr(o["default"]), escape(allowed(o)), *extra, o["help"])
    out.print(table)
    for preset, values in info["presets"].items():
        out.print(f"[bold]--set preset={preset}[/] runs with " + ", ".join(f"{k}={v!r}" for k, v in values.items())
                  + " (options given beside it override these; the defaults above are what runs without it)")
    if on_task:
        for o in info["options"]:
            if o["from"] != FROM_STRATEGY:
                out.print(f"{o['name']} = {o['value']!r}: {escape(o['from'])}", soft_wrap=True, highlight=False)
        return
    for t, settings in info["task_settings"].items():
        taken = ", ".join(f"{k}={s['value']!r}" for k, s in settings.items())
        out.print(f"[dim]on task {t} it takes the task's {taken} unless you --set them "
                  f"(`thoughtloom strategies {info['name']} --task {t}` says why)[/]", soft_wrap=True)


def models(as_json: AsJson = False) -> None:
    """List the model backends and where the embedded model lives."""
    from ..lm.litellm_api import EXTRA_HINT
    from ..lm.llamacpp import embedded_model_path
    from ..lm.cpu import cpu_flags, repack_safe

    try:
        path = embedded_model_path()
        embedded: dict[str, Any] = {"available": True, "path": str(path), "bytes": path.stat().st_size}
    except ThoughtloomError as exc:
        embedded = {"available": False, "error": str(exc)}
    repack = repack_safe(cpu_flags())
    litellm = importlib.util.find_spec("litellm") is not None
    backends = [
        {"spec": "embedded", "what": "SmolLM2-135M-Instruct via llama.cpp", **embedded},
        {"spec": "PATH.gguf", "what": "any local GGUF model via llama.cpp", "weight_repacking": repack},
        {"spec": "openai:MODEL", "what": "OpenAI's API (https://api.openai.com/v1)",
         "key": "OPENAI_API_KEY or THOUGHTLOOM_API_KEY (required)"},
        {"spec": "openai:MODEL@URL", "what": "any OpenAI-compatible server (vLLM, llama.cpp, Ollama, ...)",
         "key": "THOUGHTLOOM_API_KEY or OPENAI_API_KEY (if the server wants one)"},
        {"spec": "litellm:PROVIDER/MODEL", "what": "hosted APIs through LiteLLM (Anthropic, Gemini, Azure, "
         "Bedrock, Together, ...)", "installed": litellm,
         "key": "the provider's own variable (ANTHROPIC_API_KEY, GEMINI_API_KEY, ...)"},
    ]
    if as_json:
        out.print_json(json.dumps({"backends": backends}))
        return
    where = (f"{embedded['path']} ({embedded['bytes'] / 1e6:.0f} MB)" if embedded["available"]
             else f"[red]not available[/]: {embedded['error']}")
    out.print("[bold]backends[/] (choose with --model or THOUGHTLOOM_MODEL)")
    out.print(f"  embedded                SmolLM2-135M-Instruct via llama.cpp: {where}")
    out.print("  PATH.gguf               any local GGUF model via llama.cpp")
    out.print("                          .gguf models run in a worker process; weight repacking "
              + ("on" if repack else "off (this CPU has AMX, where llama.cpp's repack path crashes)")
              + "; threads follow the free cores unless --threads is given")
    out.print("  openai:MODEL            OpenAI's API; key from OPENAI_API_KEY or THOUGHTLOOM_API_KEY")
    out.print("  openai:MODEL@URL        any OpenAI-compatible server (vLLM, llama.cpp, Ollama, ...);"
              " key, if it wants one, from THOUGHTLOOM_API_KEY or OPENAI_API_KEY")
    out.print("  litellm:PROVIDER/MODEL  hosted APIs through LiteLLM (Anthropic, Gemini, Azure, Bedrock, "
              "Together, ...); keys from each provider's own variable; "
              + ("installed" if litellm else f"[yellow]not installed[/]: {escape(EXTRA_HINT)}"))
