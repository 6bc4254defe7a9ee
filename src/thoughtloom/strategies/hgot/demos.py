"""Demonstrations: DSP-style automatic annotation and per-question selection.

Format: the authors' annotated CSV (HGOT's ``data/*_augmented.csv``), columns
``Question, Plan Context, Plan, Dependencies, Rewrite Context, Rewrite,
Rationale Context, Rationale, Answer``. :func:`annotation_row` writes the
same columns from one HGOT run, so our own annotations and theirs load alike.

Annotation (appendix D, after DSP): run HGOT on training questions, keep a
run when (1) its prediction matches the gold answer, (2) every plan step is a
question, (3) its mean step length is not an outlier by the IQR rule
(:func:`iqr_keep`). HGOT declares this step (:class:`Annotation`, from
:meth:`HGOT.demo_annotation <thoughtloom.strategies.hgot.strategy.HGOT.demo_annotation>`)
when its config asks for demos and names no file of them, and
:mod:`thoughtloom.eval.annotate` runs it before the eval.
Selection per test question (``demos``): ``knn`` (the k annotated questions
most similar to it) or ``sampling`` (balanced over answer classes, random
under the seed), by a :class:`DemoSelector`, which renders the chosen rows
into :class:`Demos`, one block per prompt that shows them.
"""

from __future__ import annotations

import ast
import csv
import json
import math
import random
import re
from collections import Counter
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ...core.errors import ConfigError, DataError
from ..interface import AnnotationRun, DemoAnnotation, Strategy
from . import deps
from .config import HGOTConfig
from .quality import split_statements

COLUMNS = ["Question", "Plan Context", "Plan", "Dependencies", "Rewrite Context", "Rewrite",
           "Rationale Context", "Rationale", "Answer"]
_STEP_SPLIT = re.compile(r"(?=\bStep \d+\s*:)")
_WORD = re.compile(r"\w+")
_STEP_PREFIX = re.compile(r"^Step \d+:\s*")


@dataclass(frozen=True)
class Annotated:
    question: str
    plan: str = ""
    dependencies: str = ""
    rewrite_context: str = ""
    rewrite: str = ""
    rationale_context: str = ""
    rationale: str = ""
    answer: str = ""
    plan_context: str = ""  # the passages the plan was made over (the authors' Plan Context)

    def plan_steps(self) -> list[str]:
        return [s.strip() for s in _STEP_SPLIT.split(self.plan) if s.strip().lower().startswith("step")]


@dataclass(frozen=True)
class Demos:
    """One question's demonstrations, rendered for the Plan, Rewrite and Infer prompts."""

    plan: str = ""
    rewrite: str = ""
    infer: str = ""


def load_annotated(path: str | Path) -> list[Annotated]:
    path = Path(path)
    if not path.is_file():
        raise DataError(f"demo file not found: {path}")
    out = []
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in ("Question", "Plan", "Answer") if c not in (reader.fieldnames or [])]
        if missing:
            raise DataError(f"{path}:1: missing columns {missing}")
        for row in reader:
            out.append(Annotated(row["Question"], row.get("Plan", ""), row.get("Dependencies", ""),
                                 row.get("Rewrite Context", ""), row.get("Rewrite", ""),
                                 row.get("Rationale Context", ""), row.get("Rationale", ""),
                                 row.get("Answer", ""), plan_context=row.get("Plan Context", "")))
    return out


def _dependencies_line(text: str) -> str:
    """The Dependencies line of a plan demo: every edge the row's text states, in the
    arrow notation the plan parser reads back as the same edges (:func:`.deps.render`)."""
    return "Dependencies: " + deps.render(deps.read_edges(text))


#: a demo's context passages shown at most (the authors' pools hold 5 to 7)
DEMO_PASSAGES = 7


def context_passages(raw: str, words: int = 0) -> list[str]:
    """A demo row's context cell (the authors' ``Plan Context`` / ``Rationale Context``: a
    Python list literal of passage strings, read with ``ast.literal_eval``, never eval) as
    passages, at most :data:`DEMO_PASSAGES`, each clipped to ``words`` words (0: whole). A
    cell that is no such list is one passage; an empty one, none."""
    text = raw.strip()
    if not text:
        return []
    try:
        value = ast.literal_eval(text) if text.startswith("[") else [text]
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        value = [text]
    if not isinstance(value, (list, tuple)):
        value = [text]
    out = [" ".join(str(v).strip().strip('"').split()) for v in value if str(v).strip()]
    if words > 0:
        out = [" ".join(p.split()[:words]) for p in out]
    return out[:DEMO_PASSAGES]


def _numbered(passages: Sequence[str]) -> str:
    return "\n".join(f"[{i}] {p}" for i, p in enumerate(passages, 1))


def render_plan_demos(demos: Sequence[Annotated], words: int = 0) -> str:
    """Plan demos in the ``hgot_plan`` layout, each with its plan context passages when the row
    holds them (``Context:``, as the prompt shows the question's own)."""
    blocks = []
    for d in demos:
        steps = d.plan_steps()
        if steps:
            context = context_passages(d.plan_context, words)
            head = f"Context:\n{_numbered(context)}\n\n" if context else ""
            blocks.append(f"{head}Question: {d.question}\n" + "\n".join(steps) + "\n"
                          + _dependencies_line(d.dependencies))
    return "".join(f"\n{b}\n" for b in blocks)


def split_rewrite_context(context: str) -> tuple[list[str], str]:
    """The authors' rewrite context ("Step 1: q ANSWER: a. Step 2: q2") as its answered
    steps ("Step 1: q ANSWER: a") and the step to rewrite ("q2", without its label)."""
    parts = [p.strip() for p in _STEP_SPLIT.split(context) if p.strip()]
    answered = [p.rstrip(".").strip() for p in parts if " ANSWER: " in p]
    last = next((p for p in reversed(parts) if " ANSWER: " not in p), "")
    return answered, _STEP_PREFIX.sub("", last).strip()


def render_rewrite_demos(demos: Sequence[Annotated]) -> str:
    """Rewrite demos in the ``hgot_rewrite`` layout: the parents' answers, the step, its rewrite.
    A row whose context holds no answered step (nothing to rewrite from) is left out."""
    blocks = []
    for d in demos:
        if not (d.rewrite and d.rewrite_context):
            continue
        answered, step = split_rewrite_context(d.rewrite_context)
        if answered and step:
            facts = "\n".join(f"- {a}" for a in answered)
            blocks.append(f"Known answers:\n{facts}\nQuestion: {step}\nRewrite: {_STEP_PREFIX.sub('', d.rewrite)}")
    return "".join(f"\n{b}\n" for b in blocks)


def render_infer_demos(demos: Sequence[Annotated], thought_format: str = "json", words: int = 0) -> str:
    """Demonstrations in the reply format the Infer prompt asks for, each after the passages
    its rationale cites (``Passages:``, numbered as the prompt numbers the question's own),
    when the row holds them: a citation [3] then points at a passage the demo shows."""
    blocks = []
    for d in demos:
        if not (d.rationale and d.answer):
            continue
        context = context_passages(d.rationale_context, words)
        head = f"Passages:\n{_numbered(context)}\n" if context else ""
        if thought_format == "json":
            statements = [{"text": st.text, "cites": [c + 1 for c in st.cites]}
                          for st in split_statements(d.rationale, 99)]
            reply = json.dumps({"statements": statements, "answer": d.answer}, ensure_ascii=False)
            blocks.append(f"{head}Question: {d.question}\n{reply}")
        else:
            blocks.append(f"{head}Question: {d.question}\nRationale: {d.rationale}\nAnswer: {d.answer}")
    return "".join(f"\n{b}\n" for b in blocks)


def iqr_keep(values: Sequence[float]) -> list[bool]:
    """Tukey's rule on the upper side: keep x < Q3 + 1.5 * (Q3 - Q1).

    Applied to each annotated run's mean plan-step length (characters), it
    drops runs with overlong sub-queries. Quartiles use the midpoint method.
    """
    if not values:
        return []
    q1, q3 = np.percentile(values, [25, 75], method="midpoint")
    limit = q3 + 1.5 * (q3 - q1)
    return [v < limit or math.isclose(q1, q3) and v <= limit for v in values]


def qualify(rows: Sequence[Annotated], golds: Sequence[str], match: Callable[[str, str], bool]) -> list[Annotated]:
    """The DSP-style filter: correct prediction, question-shaped steps, IQR on step length."""
    candidates = [r for r, g in zip(rows, golds)
                  if match(r.answer, g) and r.plan_steps()
                  and all(s.rstrip().endswith("?") for s in r.plan_steps())]
    lengths = [float(np.mean([len(s) for s in r.plan_steps()])) for r in candidates]
    return [r for r, keep in zip(candidates, iqr_keep(lengths)) if keep]


def _bow(text: str) -> Counter:
    return Counter(w.lower() for w in _WORD.findall(text))


def _cosine(a: Counter, b: Counter) -> float:
    dot = sum(a[w] * b[w] for w in a.keys() & b.keys())
    na, nb = math.sqrt(sum(v * v for v in a.values())), math.sqrt(sum(v * v for v in b.values()))
    return dot / (na * nb) if na and nb else 0.0


def knn_select(question: str, demos: Sequence[Annotated], k: int,
               embed: Callable[[list[str]], np.ndarray] | None = None) -> list[Annotated]:
    """The k demos whose questions are nearest the input question.

    With ``embed`` (a sentence encoder: texts -> unit-norm rows) similarity is
    the embedding dot product; without, bag-of-words cosine, which needs no
    model. Ties keep file order.
    """
    if k <= 0 or not demos:
        return []
    if embed is not None:
        vecs = embed([question] + [d.question for d in demos])
        sims = list(vecs[1:] @ vecs[0])
    else:
        q = _bow(question)
        sims = [_cosine(q, _bow(d.question)) for d in demos]
    order = sorted(range(len(demos)), key=lambda i: (-sims[i], i))
    return [demos[i] for i in order[:k]]


def balanced_select(demos: Sequence[Annotated], k: int, seed: int = 0) -> list[Annotated]:
    """k demos with an even distribution of answer classes, random under ``seed`` (appendix D:
    "balanced sampling preserves an even answer-class distribution").

    Each class (normalized answer) gets floor(k / #classes) demos and a random
    k mod #classes of them one more (as the authors' ``sample_balancedly``);
    within a class the demos are drawn at random. With free-form answers every
    answer is its own class, so this is a uniform random sample of k, as
    HGOT+Sampling on HotpotQA or Open-SQuAD means. A class with fewer demos
    than its share leaves the rest to a random draw from the others.
    """
    rng = random.Random(seed)
    if k <= 0 or not demos:
        return []
    by_class: dict[str, list[int]] = {}
    for i, d in enumerate(demos):
        by_class.setdefault(" ".join(d.answer.split()).upper(), []).append(i)
    share, extra = divmod(k, len(by_class))
    lucky = set(rng.sample(range(len(by_class)), extra))
    picked: list[int] = []
    for c, members in enumerate(by_class.values()):
        picked += rng.sample(members, min(len(members), share + (c in lucky)))
    rest = [i for i in range(len(demos)) if i not in set(picked)]
    picked += rng.sample(rest, min(len(rest), k - len(picked)))
    rng.shuffle(picked)
    return [demos[i] for i in picked]


def annotation_row(question: str, tree: dict[str, Any], shown: Sequence[str] = ()) -> dict[str, str]:
    """One CSV row (authors' columns) from an HGOT result's ``details['tree']``; ``shown``:
    the passages the root's last Infer showed (``details['context']``), its Rationale Context."""
    plan = tree.get("plan") or {"steps": [], "edges": []}
    steps = " ".join(f"Step {i + 1}: {s}" for i, s in enumerate(plan["steps"]))
    dependencies = " ".join(f"Step {v} depends on Step {u}." for u, v in plan["edges"]) or "None"
    children = tree.get("children", [])
    step_of = {i + 1: c for i, c in enumerate(children)}
    rewritten = next((i for i, c in step_of.items() if c.get("original")), None)
    context = ""
    if rewritten is not None:  # the authors' layout: each parent's question and answer, then the step
        parents = sorted(u for u, v in plan["edges"] if v == rewritten and u in step_of)
        context = " ".join([f"Step {u}: {step_of[u]['question']} ANSWER: {step_of[u]['answer']}."
                            for u in parents if step_of[u].get("answer")]
                           + [f"Step {rewritten}: {step_of[rewritten]['original']}"])
    return {
        "Question": question, "Plan Context": "", "Plan": steps, "Dependencies": dependencies,
        "Rewrite Context": context,
        "Rewrite": "" if rewritten is None else step_of[rewritten]["question"],
        "Rationale Context": repr([str(p) for p in shown]) if shown else "",
        "Rationale": tree.get("rationale", ""), "Answer": tree.get("answer", ""),
    }


def write_annotated(rows: Sequence[dict[str, str]], path: str | Path) -> None:
    with Path(path).open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)


@dataclass(frozen=True)
class Annotation(DemoAnnotation):
    """HGOT's own demonstrations (appendix D): runs of ``plain`` (``demos=none``) kept by :func:`qualify`,
    written in the authors' columns; :meth:`annotated` is ``config`` with ``demo_file`` set to them."""

    config: HGOTConfig | None = None

    def qualified(self, runs: Sequence[AnnotationRun], correct: Callable[[str, Any], bool]) -> list[dict[str, str]]:
        """The CSV rows of the runs that pass the DSP-style filter: correct, question-shaped steps,
        IQR on step length."""
        done = [r for r in runs if r.details.get("tree")]
        rows = [annotation_row(r.question, r.details["tree"], r.details.get("context") or ()) for r in done]
        annotated = [Annotated(x["Question"], x["Plan"], x["Dependencies"], x["Rewrite Context"], x["Rewrite"],
                               x["Rationale Context"], x["Rationale"], x["Answer"]) for x in rows]
        keep = {a.question for a in qualify(annotated, [r.gold for r in done], correct)}
        return [x for x in rows if x["Question"] in keep]

    def write(self, rows: Sequence[dict[str, str]], path: str) -> None:
        write_annotated(rows, path)

    def annotated(self, path: str) -> Strategy:
        return type(self.plain)(dataclasses.replace(self.config, demo_file=path))


def annotation(strategy: Strategy) -> Annotation | None:
    """The annotation step an HGOT strategy declares: one when its config asks for demos (``knn`` or
    ``sampling``) and names no ``demo_file``, else None."""
    cfg = strategy.config
    if cfg.demos == "none" or cfg.demo_file:
        return None
    return Annotation(plain=type(strategy)(dataclasses.replace(cfg, demos="none")), n=cfg.annotate_n,
                      train_file=cfg.train_file, label=f"demos={cfg.demos}", config=cfg)


class DemoSelector:
    """Chooses each question's demonstrations from the config's demo file.

    One selector serves every question a strategy answers, so it owns what
    selection reuses between them: the demo file's rows (read at the first
    question) and, for ``knn``, the vector of every question it has encoded
    (each demo question is encoded once, not once per test question).
    ``encode`` maps texts to unit-norm rows; only ``knn`` with the MiniLM
    encoder calls it. A demo whose question is the one asked is never shown
    (DSP's ``all_but``).
    """

    def __init__(self, cfg: HGOTConfig, encode: Callable[[list[str]], np.ndarray]) -> None:
        self.cfg = cfg
        self._encode = encode
        self._pool: tuple[Annotated, ...] | None = None
        self._vectors: dict[str, np.ndarray] = {}

    def select(self, question: str, seed: int) -> Demos:
        cfg = self.cfg
        if cfg.demos == "none":
            return Demos()
        if not cfg.demo_file:
            raise ConfigError(f"hgot: demos={cfg.demos} needs annotated demonstrations",
                              hint="set demo_file=PATH (the authors' CSV columns), or run it with "
                                   "`thoughtloom eval`, which annotates them from the task's sample first")
        if self._pool is None:
            self._pool = tuple(d for path in cfg.demo_file.split(",") for d in load_annotated(path.strip()))
        pool = [d for d in self._pool if d.question.strip() != question.strip()]
        if cfg.demos == "knn":
            chosen = knn_select(question, pool, cfg.n_demos, embed=self.embed if cfg.knn_encoder == "minilm" else None)
        else:
            chosen = balanced_select(pool, cfg.n_demos, seed)
        return Demos(plan=render_plan_demos(chosen, cfg.passage_words), rewrite=render_rewrite_demos(chosen),
                     infer=render_infer_demos(chosen, cfg.thought_format, cfg.passage_words))

    def embed(self, texts: list[str]) -> np.ndarray:
        """texts -> unit rows for :func:`knn_select`, each distinct text encoded once per selector."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            self._vectors.update(zip(missing, self._encode(missing)))
        return np.vstack([self._vectors[t] for t in texts])
