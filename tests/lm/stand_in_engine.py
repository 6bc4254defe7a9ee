"""A stepping stand-in for the embedded engine (no model), for the worker's tests.

``StepEngine`` has the real engine's stepping interface (``submit``, ``step``,
``cancel``, ``stats``, ...): up to ``max_parallel`` requests decode at once,
one word of their last message per step (``step_s`` seconds a step), and a
request that arrives while others decode is admitted at the next step. A word
containing ``crash_on`` kills the process with a real SIGSEGV when it is
decoded. The worker imports it by name in its own process, so the tests put
this folder on ``PYTHONPATH``.
"""

from __future__ import annotations

import ctypes
import os
import time
from typing import Any


class StepEngine:
    def __init__(self, model_path: str = "", *, max_parallel: int = 4, step_s: float = 0.02,
                 crash_on: str = "SEGFAULT", **options: Any) -> None:
        self.max_parallel = max_parallel
        self.step_s = step_s
        self.crash_on = crash_on
        self.waiting: list[dict[str, Any]] = []
        self.live: list[dict[str, Any]] = []
        self.done: list[tuple[Any, dict[str, Any]]] = []
        self.counters = {"decode_steps": 0, "peak_live": 0, "admitted": 0, "joined": 0, "cancelled": 0}

    @property
    def busy(self) -> bool:
        return bool(self.waiting or self.live or self.done)

    def submit(self, items: list[tuple[Any, dict[str, Any]]]) -> None:
        for key, req in items:
            words = req["messages"][-1]["content"].split()
            self.waiting.append({"key": key, "words": words, "n": 0, "t0": time.perf_counter()})

    def cancel(self, keys: list[Any]) -> None:
        before = len(self.waiting) + len(self.live)
        self.waiting = [s for s in self.waiting if s["key"] not in keys]
        self.live = [s for s in self.live if s["key"] not in keys]
        self.counters["cancelled"] += before - len(self.waiting) - len(self.live)

    def step(self) -> list[tuple[Any, dict[str, Any]]]:
        while self.waiting and len(self.live) < self.max_parallel:
            self.counters["admitted"] += 1
            self.counters["joined"] += bool(self.live)
            self.live.append(self.waiting.pop(0))
        if self.live:
            time.sleep(self.step_s)
            self.counters["decode_steps"] += 1
            self.counters["peak_live"] = max(self.counters["peak_live"], len(self.live))
        for s in self.live:
            word = s["words"][s["n"]] if s["words"] else ""
            if self.crash_on and self.crash_on in word:
                ctypes.string_at(0)  # SIGSEGV: the process dies here
            s["n"] += 1
        for s in [s for s in self.live if s["n"] >= len(s["words"])]:
            self.live.remove(s)
            self.done.append((s["key"], {
                "text": " ".join(s["words"]), "finish_reason": "stop", "prompt_tokens": len(s["words"]),
                "completion_tokens": s["n"], "latency_s": time.perf_counter() - s["t0"], "logprobs": None}))
        out, self.done = self.done, []
        return out

    def fail_all(self, message: str) -> list[tuple[Any, dict[str, Any]]]:
        out = [(s["key"], {"error": "error", "message": message}) for s in self.waiting + self.live]
        self.waiting, self.live = [], []
        return out

    def stats(self) -> dict[str, int]:
        return dict(self.counters)

    def count_tokens(self, requests: list[dict[str, Any]]) -> list[int | None]:
        return [len(r["messages"][-1]["content"].split()) for r in requests]

    def describe(self) -> dict[str, Any]:
        return {"engine": "step", "pid": os.getpid(), "repack": True, "max_parallel": self.max_parallel}

    def close(self) -> None:
        pass
