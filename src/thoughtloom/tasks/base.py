"""A task: load a benchmark's files, tell strategies how to answer, score answers.

Tasks never import strategies. They implement the ``TaskView`` protocol that
strategies see (instruction, demos, answer extraction and normalization) and
add loading and scoring, which only the eval runner uses. A task whose data
files carry paragraphs names the loaded file in :meth:`Task.pooled_corpus`;
the layer that builds strategy contexts decides whether to index it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Iterator, Mapping, NamedTuple, Sequence

from ..core.errors import ConfigError, DataError
from ..core.files import field_too_long, jsonl_lines, long_field, read_utf8, require
from ..core.options import TaskSetting
from ..core.protocols import DEFAULT_COT_ANSWER_FORMAT
from ..core.types import Demo, Problem
from .answers import short_answer
from .metrics import exact_match, normalize_text, token_f1



@dataclass(frozen=True)
class Example:
    problem: Problem
    gold: Any


class CorpusFile(NamedTuple):
    """A data file whose records carry paragraphs, and its format for ``retrieval.read_corpus``;
    ``extra``: more corpus files pooled with it (their formats detected), e.g. a suite's
    dataset ``corpus``; ``settings``: the pooled index's build settings as sorted JSON (a suite
    dataset's ``index``, e.g. title links), "" for plain BM25 -- a string, so the corpus stays
    hashable (one index per corpus and settings) and travels to Ray workers as it is."""

    path: Path
    format: str
    extra: tuple[Path, ...] = ()
    settings: str = ""

    @property
    def paths(self) -> tuple[Path, ...]:
        return (self.path, *self.extra)

    @property
    def index_settings(self) -> dict[str, Any]:
        return json.loads(self.settings) if self.settings else {}

    def describe(self) -> str:
        return " + ".join(str(p) for p in self.paths)


class Task:
    """Free-form question answering; benchmarks override what differs."""

    name: ClassVar[str] = "freeform"
    instruction: ClassVar[str] = "Answer the question with a short answer."
    primary_metric: ClassVar[str] = "em"
    # every metric ``score`` emits, by name; a subclass that names only its
    # primary_metric emits that one (see __init_subclass__). Suites, the card
    # and the run inspector refuse a metric not listed here.
    metrics: ClassVar[tuple[str, ...]] = ("em", "f1")
    # the tree strategies' options this task sets (its natural depth, children per
    # node, search steps), each with where it comes from; a tree strategy takes
    # them unless the user sets the option (``strategies.build(..., task=)``)
    search_settings: ClassVar[Mapping[str, TaskSetting]] = {}
    # how a chain of thought (``cot``, ``cot-sc``) must end so extract_answer can read it
    cot_answer_format: ClassVar[str] = DEFAULT_COT_ANSWER_FORMAT
    # what the questions are like, for the strategies that pick a program by it (DecomP's default
    # program for a task with none of its own): "qa", a short answer; "math", a numeric one; "" none
    question_shape: ClassVar[str] = ""
    # whether questions are answered from retrieved passages (the retrieval
    # strategies are built for these tasks; see Strategy.needs)
    open_domain: ClassVar[bool] = False
    # whether an answer read from a reply cut off at max_tokens is scored;
    # by default it is not (scored as no answer, the record says truncated)
    score_truncated: ClassVar[bool] = False
    # tree searches (SearchTask): whether a Tree-of-Thoughts thought is a whole new
    # candidate (a rewritten outline) rather than a step that extends its parent
    whole_thoughts: ClassVar[bool] = False
    # whether an itemized evaluation's items of feedback each get their own child
    # (ThoughtSculpt §4.1, story outlines) rather than every child getting all of it
    child_per_feedback_item: ClassVar[bool] = False
    # whether one generation reply lists several candidates, each a line with an optional
    # confidence (ThoughtSculpt's crosswords NEW_CANDIDATE), rather than one reply per child
    candidate_list: ClassVar[bool] = False
    # how a tree search asks for a holistic evaluation (strategies.treesearch.evaluator.STYLES):
    # a 0-10 score, or the paper's own verdict (CommonGen) or correctness check (Game of 24)
    evaluation_style: ClassVar[str] = "score"
    # metrics a model judge gives after the run (eval.judge: judge_prompts / read_judge), not score();
    # score() returns the others of ``metrics``
    judged_metrics: ClassVar[tuple[str, ...]] = ()
    # the JSON schema the model judge's replies are held to (eval.judge), or None: free text
    judge_schema: ClassVar[Mapping[str, Any] | None] = None
    # whether load() draws each length stratum to the paper's share of the file (HGOT §4; a suite's
    # ``strata = true`` sets it); read by the tasks whose files have strata
    draw_strata: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "primary_metric" in vars(cls) and "metrics" not in vars(cls):
            cls.metrics = (cls.primary_metric,)

    def demos(self) -> Sequence[Demo]:
        return ()

    def extract_answer(self, text: str) -> str | None:
        """The reply's short answer (:func:`.answers.short_answer`): the text after the last answer
        marker, else the first line after a chat model's lead-in, else the first non-empty line."""
        return short_answer(text)

    def normalize(self, answer: str) -> str:
        return normalize_text(answer)

    def score(self, prediction: str | None, gold: Any) -> dict[str, float]:
        return {"em": exact_match(prediction, gold), "f1": token_f1(prediction, gold)}

    def judge_prompts(self, gold: Any, answer: str) -> list[str]:
        """The model judge's prompts for ``answer`` (a task with ``judged_metrics``; eval.judge)."""
        return []

    def read_judge(self, replies: Sequence[str]) -> float | None:
        """The judged score from the replies to :meth:`judge_prompts`; None if none is readable."""
        return None

    def answered(self, prediction: Any) -> bool:
        """Whether ``prediction`` (a record's, as read back) holds an answer this task's
        scorer reads; a "no answer" count (the reproduction card) counts the others."""
        return isinstance(prediction, str) and bool(prediction.strip())

    def report(self, records: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """Task-specific aggregates over result records (e.g. per-stratum
        scores), stored under ``task_report`` in summary.json. Empty by default."""
        return {}

    def stratum(self, meta: Mapping[str, Any]) -> str | None:
        """The stratum an example's ``meta`` puts it in, for per-stratum figures
        (the HGOT tasks' length strata); None where the task has none."""
        value = meta.get("stratum")
        return None if value is None else str(value)

    def group(self, meta: Mapping[str, Any]) -> str | None:
        """The group an example's ``meta`` puts it in: examples of one group share a context (several
        questions over one passage), so a paired test resamples them together; None where each
        example stands alone."""
        value = meta.get("group")
        return None if value is None else str(value)

    def parse_gold(self, raw: str, where: str) -> Any:
        """A gold answer written as text (a demonstration's, a training file's; ``where`` names it in an
        error) as this task's scorer reads gold answers: the text itself by default."""
        return raw

    def settings(self) -> Mapping[str, Any] | None:
        """What a run's identity records of how this task was set up (``qa``: its fields and metric), or
        None: nothing (the identity then has no ``task_options``)."""
        return None

    def check_answer(self, problem: Problem, answer: str | None) -> tuple[bool | None, str] | None:
        """This task's own verdict on ``answer`` with no gold answer, ``(right, why)`` (right None: not
        decidable), for ``thoughtloom run``; None where it has no rule (:func:`.checks.check_answer`
        knows the packaged tasks' rules)."""
        return None

    def pool_with(self, extra: tuple[Path, ...], index: Mapping[str, Any] | None = None) -> None:
        """Pool more corpus files with the loaded data file's paragraphs (a suite's dataset ``corpus``),
        the pooled index built with ``index``'s settings (a dataset's ``index``); a task without a pooled
        corpus (:meth:`pooled_corpus`) takes none."""
        raise ConfigError(f"task {self.name!r} pools no corpus, so it takes no 'corpus'",
                          hint="only a task whose data files carry paragraphs (hotpotqa, 2wiki, musique, ...) pools them")

    def load(self, path: str | Path) -> list[Example]:
        raise ConfigError(f"task {self.name!r} has no dataset loader", hint="pick a benchmark task with --task")

    def pooled_corpus(self) -> CorpusFile | None:
        """The last loaded data file, when its paragraphs pooled form an
        open-domain corpus (DecomP §4.4); None for tasks without one. The eval
        runner indexes it with BM25 when it is given no retriever."""
        return None


def read_jsonl(path: str | Path) -> Iterator[tuple[int, dict]]:
    """(line number, record) for each non-blank line; bad JSON or UTF-8, a line over
    :data:`~thoughtloom.core.files.MAX_LINE_BYTES` or a field over
    :data:`~thoughtloom.core.files.MAX_FIELD_CHARS` names file:line (and the limit)."""
    path = Path(path)
    _must_exist(path)
    for line in jsonl_lines(path, "strict"):
        if line.value is not None:
            found = long_field(line.value)
            if found is not None:
                raise field_too_long(f"{path}:{line.number}", found)
            yield line.number, line.value


#: Largest JSON (not JSON-lines) data file read whole: 256 MiB (the benchmarks' largest is 3 MB).
MAX_JSON_BYTES = 256 << 20


def read_json(path: str | Path) -> Any:
    path = Path(path)
    _must_exist(path)
    size = path.stat().st_size
    if size > MAX_JSON_BYTES:
        raise DataError(f"{path}: {size:,} bytes, over the limit of {MAX_JSON_BYTES:,} for a JSON data file",
                        hint="write it as JSON lines (one record per line), which is read one record at a time")
    try:
        return json.loads(read_utf8(path))
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None


#: Most characters an example's question, gold answer (as JSON) and meta (as JSON) may hold; its
#: context may hold ``MAX_CONTEXT_CHARS``. A question this long is about 25k tokens, more than any
#: benchmark's (GSM8K's longest is 622 characters); what goes past is a data error, not a prompt.
MAX_QUESTION_CHARS = 100_000
MAX_GOLD_CHARS = 100_000
MAX_META_CHARS = 100_000
MAX_CONTEXT_CHARS = 1_000_000


def check_sizes(examples: Sequence[Example], path: str | Path) -> None:
    """A :class:`DataError` naming ``path``, the example and the limit for the first example with a
    field over its limit (question, context, gold, meta), whatever format it was read from."""
    for n, example in enumerate(examples, 1):
        p = example.problem
        sizes = (("question", len(p.question), MAX_QUESTION_CHARS), ("context", len(p.context), MAX_CONTEXT_CHARS),
                 ("gold answer", _json_chars(example.gold, MAX_GOLD_CHARS), MAX_GOLD_CHARS),
                 ("meta", _json_chars(dict(p.meta), MAX_META_CHARS), MAX_META_CHARS))
        for name, size, limit in sizes:
            if size > limit:
                raise DataError(f"{path}: example {p.id[:80]!r} (record {n}): its {name} is {size:,} characters, "
                                f"over the limit of {limit:,}", hint="shorten it, or leave the example out")


def _json_chars(value: Any, limit: int) -> int:
    """Characters of ``value`` as JSON, counted only as far as past ``limit``."""
    if isinstance(value, str):
        return len(value)
    size = 0
    for piece in json.JSONEncoder(ensure_ascii=False, default=str).iterencode(value):
        size += len(piece)
        if size > limit:
            break
    return size


def _must_exist(path: Path) -> None:
    if not path.is_file():
        raise ConfigError(f"data file not found: {path}",
                          hint="check --data; `thoughtloom data list` says what each task reads and where to get it")


__all__ = ["CorpusFile", "Example", "Task", "check_sizes", "read_json", "read_jsonl", "require"]
