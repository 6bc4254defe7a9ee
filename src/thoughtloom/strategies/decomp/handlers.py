"""Sub-task handlers: one interface, four kinds, addressed by name.

Every handler answers a *batch* of :class:`Call`s (all items of a foreach, and
the same handler's steps of programs run side by side) and returns one
:class:`Outcome` per call, in order. It sees a :class:`HandlerEnv` (the
model, the seed, the task's answer extraction, search, and the other handlers
by name), never the controller itself. Kinds:

* ``prompt``: a few-shot prompt file with its own demonstrations
  (``decomp/handlers/<name>.txt`` in :mod:`thoughtloom.prompts`, package
  data, overridable with ``--prompts DIR``);
* ``symbolic``: a Python function ``str -> str | list`` registered with
  :func:`~.functions.symbolic` (the registry lives with the built-ins in
  ``functions.py``);
* ``program``: another decomposed program (hierarchical) or the running
  program itself (recursive); ``controller.py`` defines it, as it runs
  programs;
* ``retrieval``: search over the core ``Retriever`` protocol;
* ``strategy`` and ``function``: a registered strategy, or a function registered with
  :func:`~.step_handlers.register_handler`, run with the run's own context (:mod:`.step_handlers`).

Add your own with the decorator::

    @symbolic("shout")
    def shout(question: str) -> str:
        return question.upper()

or by dropping ``decomp/handlers/shout.txt`` into your ``--prompts`` folder.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
from pathlib import Path
from string import Template
from typing import Awaitable, Callable, Sequence

from ... import prompts
from ...core.errors import ConfigError
from ...core.options import Options, make, option
from ...core.protocols import LM
from ...core.text import CHARS_PER_TOKEN
from ...core.types import Passage, Request
from ..context import Context
from .functions import SymbolicFn, symbolic_function, symbolic_names
from .language import Answer, read_reply, render_value
from .record import Run


@dataclass(frozen=True)
class Call:
    """One question for a handler, with what the running program knows."""

    question: str
    context: str = ""  # the problem's own context (e.g. CommaQA's facts)
    evidence: tuple[Passage, ...] = ()  # passages retrieved earlier in this run
    depth: int = 0
    run_id: str = "1"  # the id of a program run that answers it (its place in the nesting, for the trace)
    qc: str = ""  # the question (QC) of the program whose step asks it: a prompt's ``$qc``


@dataclass(frozen=True)
class Outcome:
    value: Answer
    evidence: tuple[Passage, ...] = ()
    tokens: int = 0
    calls: int = 0
    error: str | None = None
    children: tuple[Run, ...] = ()  # nested program runs (for the record and the printed program)
    cut_off: str | None = None  # a reply cut off at max_tokens that gave no answer (traced by the controller)
    fit: Fit | None = None  # where a prompt's passages did not fit its evidence_tokens: what was cut


class Handler(ABC):
    name: str = ""
    kind: str = ""

    @abstractmethod
    async def answer(self, calls: Sequence[Call], env: HandlerEnv) -> list[Outcome]: ...


@dataclass(frozen=True)
class HandlerEnv:
    """What a handler may use while a program runs.

    ``lm`` is the ``handler`` role's model; ``search`` returns the top passages for each query
    (the run's ``k``; the controller retrieves and traces); ``resolve`` looks up another handler
    by name, for handlers built from others (``retrieve_odqa``); ``ctx`` is the run's own context
    (its trace, task, budget, prompt folder and role models), which a strategy or function handler
    runs with (:mod:`.step_handlers`).
    """

    lm: LM
    seed: int
    extract_answer: Callable[[str], str | None]
    search: Callable[[list[str]], Awaitable[list[list[Passage]]]]
    resolve: Callable[[str], Handler]
    ctx: Context | None = None


# -- symbolic ------------------------------------------------------------------


class SymbolicHandler(Handler):
    kind = "symbolic"

    def __init__(self, name: str, fn: SymbolicFn) -> None:
        self.name, self.fn = name, fn

    async def answer(self, calls: Sequence[Call], env: HandlerEnv) -> list[Outcome]:
        out = []
        for call in calls:
            try:
                out.append(Outcome(self.fn(call.question)))
            except (ValueError, IndexError, KeyError, ZeroDivisionError) as exc:
                out.append(Outcome("", error=f"{type(exc).__name__}: {exc}"))
        return out


# -- prompt files: package data under thoughtloom/prompts/decomp/, read with prompts.read ------


def read_prompt(kind: str, name: str, task: str = "", prompt_dir: str | Path | None = None) -> str | None:
    """The text of prompt ``decomp/<kind>/<name>`` (kind: ``handlers`` or ``decomposers``): the
    task's own version ``decomp/<kind>/<task>/<name>.txt`` when there is one (per-dataset
    prompts, e.g. the open-domain QA decomposer and readers of ``2wiki``), else the shared one;
    ``--prompts DIR`` overrides either at the same relative path."""
    if task:
        text = prompts.read(f"decomp/{kind}/{task}/{name}", prompt_dir)
        if text is not None:
            return text
    return prompts.read(f"decomp/{kind}/{name}", prompt_dir)



def split_header(text: str) -> tuple[dict[str, str], str]:
    """Leading ``#: key=value`` lines are options; the rest is the template."""
    opts: dict[str, str] = {}
    lines = text.splitlines()
    while lines and lines[0].startswith("#:"):
        key, _, value = lines.pop(0)[2:].strip().partition("=")
        opts[key.strip()] = value.strip().encode().decode("unicode_escape")
    return opts, "\n".join(lines).strip()


@dataclass(frozen=True)
class Fit:
    """How a run's passages were fitted into a prompt's evidence budget."""

    passages: int  # passages the run had
    shortened: int  # passages whose text was cut below PASSAGE_CHARS to fit
    dropped: int  # passages left out (the last ones): only when even MIN_PASSAGE_CHARS each would not fit


#: Characters of a passage's text a prompt shows; past the evidence budget, each gets an equal share.
PASSAGE_CHARS = 600
#: The least share of text a passage keeps before passages are left out instead.
MIN_PASSAGE_CHARS = 100
#: Default evidence budget of a prompt (``#: evidence_tokens=``), about CHARS_PER_TOKEN characters a token.
EVIDENCE_TOKENS = 3000


def render_evidence(passages: Sequence[Passage], max_tokens: int = EVIDENCE_TOKENS) -> tuple[str, Fit | None]:
    """Every passage of the run (each hop's), titled, within about ``max_tokens`` tokens.

    Each passage shows up to :data:`PASSAGE_CHARS` of its text. When they do not all fit,
    each keeps an equal share of the budget, so every hop's passages stay (shortened); only
    when a share would fall below :data:`MIN_PASSAGE_CHARS` are the last passages left out.
    The :class:`Fit` says what was cut (None: nothing was).
    """
    budget = max(0, max_tokens) * CHARS_PER_TOKEN
    heads = [f"Wikipedia Title: {p.title}\n" for p in passages]
    size = sum(len(h) + min(len(p.text), PASSAGE_CHARS) + 2 for h, p in zip(heads, passages))
    if size <= budget:
        return "\n\n".join(h + p.text[:PASSAGE_CHARS] for h, p in zip(heads, passages)), None
    used, keep = 0, 0  # the most passages whose titles and least share fit, first ones first
    for h in heads:
        if used + len(h) + 2 + MIN_PASSAGE_CHARS > budget:
            break
        used, keep = used + len(h) + 2 + MIN_PASSAGE_CHARS, keep + 1
    share = (budget - sum(len(h) + 2 for h in heads[:keep])) // keep if keep else 0
    share = min(PASSAGE_CHARS, max(MIN_PASSAGE_CHARS, share))
    kept = passages[:keep]
    text = "\n\n".join(h + p.text[:share] for h, p in zip(heads, kept))
    return text, Fit(len(passages), sum(min(len(p.text), PASSAGE_CHARS) > share for p in kept),
                     len(passages) - keep)


@dataclass(frozen=True)
class PromptHeader(Options):
    """A prompt handler's ``#: KEY=VALUE`` header lines, read by the one options coercer
    (:mod:`thoughtloom.core.options`): an unknown key or a bad value names the prompt file."""

    stop: str = "\n\n|\nQ:"  # |-separated stop strings; unless raw, only the reply's first non-empty line is kept
    max_tokens: int = option(64, min=1)  # reply length cap
    raw: bool = False  # keep the reply's text unparsed (e.g. a chain of thought)
    evidence_tokens: int = option(EVIDENCE_TOKENS, min=0)  # about how many tokens $evidence may take


class PromptHandler(Handler):
    """A few-shot prompt: ``$question``, ``$context``, ``$evidence`` and ``$qc`` (the question of
    the program whose step asks it) fields.

    Header options (:class:`PromptHeader`): ``stop`` (``|``-separated; default a
    blank line or a new ``Q:``; unless ``raw`` only the first non-empty line is
    kept), ``max_tokens`` (default 64), ``raw=true`` to keep the text unparsed
    (e.g. a chain of thought; one cut off at ``max_tokens`` is kept as it is, and
    counted as cut off), ``evidence_tokens`` (default
    :data:`EVIDENCE_TOKENS`: about how many tokens ``$evidence`` may take; see
    :func:`render_evidence`).
    """

    kind = "prompt"

    def __init__(self, name: str, text: str) -> None:
        self.name = name
        opts, body = split_header(text)
        header = make(PromptHeader, opts, owner=f"decomp/handlers/{name}.txt")
        self.template = Template(body)
        self.stop = tuple(s for s in header.stop.split("|") if s)
        self.max_tokens = header.max_tokens
        self.raw = header.raw
        self.evidence_tokens = header.evidence_tokens

    def render(self, call: Call) -> tuple[str, Fit | None]:
        evidence, fit = render_evidence(call.evidence, self.evidence_tokens) if call.evidence else ("", None)
        return self.template.safe_substitute(question=call.question, context=call.context, evidence=evidence,
                                             qc=call.qc), fit

    async def answer(self, calls: Sequence[Call], env: HandlerEnv) -> list[Outcome]:
        rendered = [self.render(c) for c in calls]
        requests = [Request.of(text, max_tokens=self.max_tokens, stop=self.stop, seed=env.seed)
                    for text, _ in rendered]
        completions = await env.lm.generate(requests)
        out = []
        for c, (_, fit) in zip(completions, rendered):
            if c.truncated and self.raw:
                # a chain cut off at max_tokens goes on as it is, to whatever reads it next (the
                # pattern, or an extraction prompt): every arm reads the same cut chain
                out.append(Outcome(c.text.strip(), tokens=c.usage.total_tokens, calls=1, fit=fit,
                                   cut_off=c.text))
                continue
            if c.truncated and "\n" not in c.text.strip():
                # an answer line cut off at max_tokens before it ended: not an answer
                out.append(Outcome("", tokens=c.usage.total_tokens, calls=1, fit=fit,
                                   error="the reply was cut off at max_tokens", cut_off=c.text))
                continue
            value = c.text.strip() if self.raw else read_reply(c.text)
            out.append(Outcome(value, tokens=c.usage.total_tokens, calls=1, fit=fit))
        return out


# -- built-in handlers that need the run's context -----------------------------


class ExtractHandler(Handler):
    """Pattern extraction with the task's own ``extract_answer`` (CoT baselines)."""

    name, kind = "extract", "symbolic"

    async def answer(self, calls: Sequence[Call], env: HandlerEnv) -> list[Outcome]:
        return [Outcome(env.extract_answer(c.question) or "") for c in calls]


class RetrieveHandler(Handler):
    """``retrieve``: the top-k passages for each query; answers with their titles."""

    name, kind = "retrieve", "retrieval"

    async def answer(self, calls: Sequence[Call], env: HandlerEnv) -> list[Outcome]:
        hits = await env.search([c.question for c in calls])
        return [Outcome([p.title for p in ps], evidence=tuple(ps)) for ps in hits]


class RetrieveQAHandler(Handler):
    """``retrieve_odqa``: retrieve K passages, then ``singlehop_titleqa`` over them."""

    name, kind = "retrieve_odqa", "retrieval"

    async def answer(self, calls: Sequence[Call], env: HandlerEnv) -> list[Outcome]:
        hits = await env.search([c.question for c in calls])
        reader = env.resolve("singlehop_titleqa")
        subcalls = [replace(c, evidence=tuple(ps)) for c, ps in zip(calls, hits)]
        answers = await reader.answer(subcalls, env)
        return [Outcome(a.value, evidence=sc.evidence, tokens=a.tokens, calls=a.calls, fit=a.fit)
                for a, sc in zip(answers, subcalls)]


BUILTIN_CLASSES: dict[str, type[Handler]] = {
    "extract": ExtractHandler,
    "retrieve": RetrieveHandler,
    "retrieve_odqa": RetrieveQAHandler,
}


def resolve(name: str, *, prefer_symbolic: bool, prompt_dir: str | Path | None, task: str = "") -> Handler:
    """The handler for ``name``: a built-in class, a prompt file (the task's own version first,
    :func:`read_prompt`) or a symbolic function.

    With ``prefer_symbolic`` (the controller check) a symbolic function wins
    over a prompt file of the same name.
    """
    if name in BUILTIN_CLASSES:
        return BUILTIN_CLASSES[name]()
    text = read_prompt("handlers", name, task, prompt_dir)
    fn = symbolic_function(name)
    if fn is not None and (prefer_symbolic or text is None):
        return SymbolicHandler(name, fn)
    if text is not None:
        return PromptHandler(name, text)
    raise ConfigError(f"no handler named {name!r}",
                      hint="register one with @symbolic or add decomp/handlers/<name>.txt to --prompts")


def known_names(prompt_dir: str | Path | None) -> set[str]:
    return set(symbolic_names()) | set(BUILTIN_CLASSES) | prompts.names("decomp/handlers", prompt_dir)


__all__ = ["Call", "Fit", "Handler", "HandlerEnv", "Outcome", "PromptHandler", "SymbolicHandler", "render_value"]
