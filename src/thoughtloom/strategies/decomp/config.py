"""``DecompConfig``: the options of ``decomp`` and its baselines (``--set key=value``).

The controller reads them directly; ``k`` = 0 is resolved to the program's
own default by the strategy before the controller starts.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DecompConfig:
    program: str = ""  # empty: the task's default program for this strategy
    decomposer: str = "lm"  # lm | reference
    handlers: str = "lm"  # lm: every handler with a prompt is a model call (the paper) | symbolic: exact Python functions win (the controller check)
    max_steps: int = 10  # steps one program may run
    max_depth: int = 12  # nesting of sub-programs (a handler that decomposes again)
    max_retries: int = 2  # re-asks of the decomposer after a malformed step
    retry_temperature: float = 0.7  # sampling temperature of those re-asks
    decomposer_max_tokens: int = 96  # cap on each decomposer step
    k: int = 0  # passages per retrieval; 0: the program's default
    structured: bool = False  # decomposer steps as schema-constrained JSON
    max_calls: int = 300  # finite bound on model calls per question (a runaway program ends)
