"""The shared services a run hands to every question's context: retriever and entailment judge.

A run opens them from its spec's ``index`` and ``entail``
(:meth:`.assembly.RunSpec.open`, for the CLI, the library, reproduce and
Ray workers alike) with these factories (and so can scripts and
benchmarks: the same cache wrappers, the same errors). They live in the eval layer, which
may import retrieval and entail and is imported by the CLI.

Without ``--index``, an eval on a task whose data file carries paragraphs
(HotpotQA / 2Wiki / MuSiQue / IRCoT JSONL) retrieves from those paragraphs,
pooled and indexed with BM25 (:func:`pooled_retriever`): the eval runner
decides once per eval, so every strategy on the task sees the same
retriever.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core.errors import ConfigError
from ..core.protocols import LM, Entailment, Retriever
from ..tasks.base import CorpusFile


def open_retriever(index_dir: Path | None) -> Retriever | None:
    """The retriever for ``--index``: the opened index behind a retrieval cache."""
    if index_dir is None:
        return None
    from ..retrieval import CachedRetriever, open_index

    index = open_index(index_dir)
    return CachedRetriever(index, fingerprint=index.fingerprint)


def pooled_retriever(source: CorpusFile, settings: dict[str, Any] | None = None) -> Retriever:
    """BM25 over the paragraphs of a task's loaded data file (:meth:`Task.pooled_corpus`) and
    of any files pooled with it (``source.extra``, their formats detected), built on first search;
    ``settings``: the index's build settings (a suite dataset's ``index``, e.g. title links)."""
    from ..retrieval import TemporaryIndex

    return TemporaryIndex(list(source.paths), source.format if not source.extra else "auto", settings=settings)


def open_entail(spec: str, lm: LM, prompt_dir: Path | None = None) -> Entailment | None:
    """The judge for ``--entail``, behind a judgement cache."""
    from ..entail import CachedJudge, LexicalJudge, LLMJudge

    if spec == "none":
        return None
    if spec == "llm" or spec.startswith("llm:"):
        from ..entail import LLMJudgeConfig

        return CachedJudge(LLMJudge(lm, LLMJudgeConfig.from_spec(spec[4:]), prompt_dir=prompt_dir))
    if spec == "lexical":
        return CachedJudge(LexicalJudge())
    if spec.startswith("cross:"):
        from ..entail.crossencoder import CrossEncoderJudge

        return CachedJudge(CrossEncoderJudge(spec[len("cross:"):]))
    raise ConfigError(f"unknown --entail {spec!r}", hint="use llm, llm:KEY=V,..., lexical, cross:PATH or none")
