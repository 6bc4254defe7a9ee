"""HGOT's options: one frozen dataclass whose fields declare their bounds and choices
(:mod:`thoughtloom.core.options`), checked when it is built.

Every function of the recursion (:mod:`.levels`, :mod:`.infer`) takes it typed, so a
misspelt option is a type error, not an ``AttributeError`` deep in a run.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.options import Options, option
from ..interface import DEFAULT_MAX_CALLS
from .similarity import STOP_RULES
from .thought import THOUGHT_FORMATS

#: plan_stages' choices: 1, one plan call; 3, plan, self-reflection and formalization (appendix C.1-C.3)
PLAN_STAGES = (1, 3)

DEMO_VARIANTS = ("none", "knn", "sampling")
KNN_ENCODERS = ("minilm", "bow")


@dataclass(frozen=True)
class HGOTConfig(Options):
    # hierarchy
    max_depth: int = option(2, min=1)  # levels of questions; 1 = no planning (retrieve, cite, vote)
    max_steps: int = option(4, min=0)  # sub-questions one plan may hold (0: no cap, the paper's; safety bound plan.MAX_PLAN_STEPS)
    plan_retries: int = option(1, min=0)  # re-asks after an unusable plan, then a single-step plan
    plan_stages: int = option(1, choices=PLAN_STAGES)  # 1: one plan call; 3: plan, self-reflection, formalization (paper appendix C)
    stop_similarity: float = option(0.7, min=0)  # single-step plan this close to its question stops recursion
    stop_rule: str = option("f1", choices=STOP_RULES)  # that closeness: f1 (content words, no model) | cosine (packaged MiniLM, dense extra)
    # retrieval and passages
    k: int = option(3, min=1)  # passages probed per (sub-)question
    top_k: int = option(5, min=1)  # passages shown to Infer (K)
    hints: bool = False  # the second Infer also sees the steps' answers (§3.1 and the authors' code: passages only)
    clip: int = option(7, min=1)  # pool size after merging a level's passages
    parent_weight: float = option(0.8, min=0)  # a parent's passage scores are scaled by this when merged
    plan_context: int = option(3, min=0)  # passages shown to Plan
    passage_words: int = option(0, min=0)  # clip each passage to this many words in prompts (0 = whole)
    # thoughts: json (schema-constrained object) | lines (the paper's "Rationale/Answer" text)
    thought_format: str = option("json", choices=THOUGHT_FORMATS)
    samples: int = option(5, min=1)  # thoughts per Infer, one batch
    temperature: float = option(0.7, min=0)  # sampling temperature of the thoughts
    max_tokens: int = option(200, min=1)  # a JSON thought of 3 statements runs to ~150 tokens
    thought_cap: int = option(3, min=0)  # statements per thought, and citations per statement (0: no cap, as C.5)
    plan_max_tokens: int = option(160, min=1)  # cap on each plan
    rewrite_max_tokens: int = option(48, min=1)  # cap on each rewrite of a dependent sub-question
    # thought quality (alpha, beta, gamma) and passage quality (w1, w2, w3)
    alpha: float = option(0.2, min=0)  # thought quality q = alpha + beta * recall + gamma * precision
    beta: float = option(0.4, min=0)  # weight of citation recall in thought quality
    gamma: float = option(0.4, min=0)  # weight of citation precision in thought quality
    w1: float = option(0.2, min=0)  # passage quality s' = w1 * score + w2 * citation frequency + w3 * confidence
    w2: float = option(0.55, min=0)  # weight of a passage's quality-weighted citation frequency
    w3: float = option(0.25, min=0)  # weight of the vote's confidence in passage quality
    entail_threshold: float = option(0.5, min=0)  # a statement is supported by a passage at this entailment probability
    expand_citations: bool = True  # a passage that alone entails a statement counts as cited
    # demonstrations (appendix D): none (HGOT), knn (HGOT+KNN: the annotated demos nearest the
    # question) or sampling (HGOT+Sampling: balanced over answer classes, random under the seed)
    demos: str = option("none", choices=DEMO_VARIANTS, hint="a file of annotated demos goes in demo_file=PATH")
    demo_file: str | None = None  # annotated demos (authors' CSV columns; several files: comma-separated); None: built on the fly by an eval
    knn_encoder: str = option("minilm", choices=KNN_ENCODERS)  # knn similarity: minilm (packaged all-MiniLM-L6-v2, dense extra) | bow (no model)
    n_demos: int = option(2, min=0)  # demos per prompt
    annotate_n: int = option(8, min=0)  # questions an eval annotates when demos != none and demo_file is unset
    train_file: str | None = None  # training set those questions come from: its pool of 7 (strategies.demo_pool), as every method's; None: the task's own demos
    max_calls: int = option(DEFAULT_MAX_CALLS, min=1)  # finite bound on model calls per question
    infer: str = "cited"  # the Infer step (infer_steps.py): cited (the paper's) | a registered strategy and its options, e.g. "cot-sc n=5"


#: ``--set preset=paper``: the paper's settings where it (or, where its text is silent, the
#: authors' public code, fangyihao/hgot ``pipeline.py``) states them. The defaults above are
#: cheaper; ``thoughtloom strategies hgot`` and a reproduction card say which values ran.
PAPER = {
    "samples": 20,  # Infer: 20 sampled thoughts ...
    "temperature": 0.7,  # ... at temperature 0.7 (the authors' predict: n=20, temperature=0.7)
    "k": 3,  # passages probed per (sub-)question (the authors' retrieve(..., k=3))
    "clip": 7,  # a merged pool keeps the best 7 ("the magical number seven", the authors' clip)
    "top_k": 7,  # K: Infer sees the whole pool, as the authors' prompts show every context passage
    "max_depth": 3,  # 3 levels of questions (the authors' depth=3)
    "parent_weight": 0.9,  # a parent's passage scores times 0.9 when merged (the authors' B[2])
    "stop_similarity": 0.7,  # the single-step stop threshold (the authors' B[1]) ...
    "stop_rule": "cosine",  # ... on sentence-embedding cosine (the authors' BERT; ours the packaged MiniLM)
    "alpha": 0.2, "beta": 0.4, "gamma": 0.4,  # §6: the best (alpha, beta, gamma) ...
    "w1": 0.2, "w2": 0.55, "w3": 0.25,  # ... and (w1, w2, w3) on Open-SQuAD medium
    "demos": "knn",  # HGOT+KNN (Table 2's variant for HotpotQA and Open-SQuAD; sampling: FEVER's best)
    "plan_stages": 3,  # Plan, Self-reflection, Formalization as three calls (Appendix C.1-C.3)
    "hints": False,  # the second Infer sees passages only (§3.1; the authors' predict(hints=False))
    "max_steps": 0,  # no cap on a plan's steps (C.1 sets none); a safety bound of 16 refuses a runaway list
    "thought_cap": 0,  # no cap on a thought's statements or citations (C.5 sets none) ...
    "max_tokens": 320,  # ... so a thought gets room for more than three (our choice)
    "plan_max_tokens": 400,  # room for a plan longer than 4 steps (our choice; the paper is silent)
}
PRESETS = {"paper": PAPER}
