"""A stand-in for the embedded engine, to test the worker process without a model.

``LlamaCppLM(path, engine="thoughtloom.testing.engine:EchoEngine")`` runs it
in the model worker exactly as the real engine runs: each request's reply is
its last message, and a last message that contains ``crash_on`` makes the
worker die of a real SIGSEGV (a read of address 0), as a native llama.cpp
crash would. ``delay_s`` makes each batch take that long (to kill a worker
mid-call). Every batch's size is recorded in ``batches`` and reported by
``describe()`` (in this process only).
"""

from __future__ import annotations

import ctypes
import os
import time
from typing import Any


class EchoEngine:
    def __init__(self, model_path: str = "", *, crash_on: str = "SEGFAULT", delay_s: float = 0.0,
                 **options: Any) -> None:
        self.crash_on = crash_on
        self.delay_s = delay_s
        self.options = options
        self.batches: list[int] = []

    def describe(self) -> dict[str, Any]:
        return {"engine": "echo", "pid": os.getpid(), "repack": True, **self.options}

    def generate(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        self.batches.append(len(requests))
        if self.delay_s:
            time.sleep(self.delay_s)
        out = []
        for req in requests:
            text = req["messages"][-1]["content"]
            if self.crash_on and self.crash_on in text:
                ctypes.string_at(0)  # SIGSEGV: the process dies here
            if text == "TOO LONG":
                out.append({"error": "prompt_too_long", "message": "Requested tokens exceed context window"})
                continue
            out.append({"text": text, "finish_reason": "stop", "prompt_tokens": len(text.split()),
                        "completion_tokens": len(text.split()), "latency_s": 0.0, "logprobs": None})
        return out

    def count_tokens(self, requests: list[dict[str, Any]]) -> list[int | None]:
        """A word count per request, the stand-in's "tokenizer" (the same count generate reports)."""
        return [len(req["messages"][-1]["content"].split()) for req in requests]

    def close(self) -> None:
        pass
