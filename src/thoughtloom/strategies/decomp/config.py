"""``DecompConfig``: the options of ``decomp`` and its baselines (``--set key=value``).

The controller reads them directly; ``k`` = 0 is resolved to the program's
own default by the strategy before the controller starts.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.options import Options, option

#: ``decomposer``: the model writes the program, or the task's reference program runs.
DECOMPOSERS = ("lm", "reference")
#: ``handlers``: every handler with a prompt is a model call, or exact Python functions win.
HANDLER_MODES = ("lm", "symbolic")


@dataclass(frozen=True)
class DecompConfig(Options):
    program: str = ""  # empty: the task's default program for this strategy
    decomposer: str = option("lm", choices=DECOMPOSERS)  # lm | reference
    handlers: str = option("lm", choices=HANDLER_MODES)  # lm: every handler with a prompt is a model call (the paper) | symbolic: exact Python functions win (the controller check)
    max_steps: int = option(10, min=1)  # steps one program may run
    max_depth: int = option(12, min=1)  # nesting of sub-programs (a handler that decomposes again)
    # re-asks of the decomposer after a malformed step; 0: the paper's greedy protocol (one greedy
    # ask per turn, as every baseline's one greedy call); > 0 is our option, each sampled re-ask
    # counted in the result's ``resampled``
    max_retries: int = option(0, min=0)
    retry_temperature: float = option(0.7, min=0)  # sampling temperature of those re-asks
    decomposer_max_tokens: int = option(96, min=1)  # cap on each decomposer step
    k: int = option(0, min=0)  # passages per retrieval; 0: the program's default
    structured: bool = False  # decomposer steps as schema-constrained JSON
    max_calls: int = option(300, min=1)  # finite bound on model calls per question (a runaway program ends)
    bind: str = ""  # handler names answered by a registered strategy or function: NAME=STRATEGY [KEY=V ...], several separated by ';'
