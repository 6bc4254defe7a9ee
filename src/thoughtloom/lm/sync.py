"""A small blocking facade for scripts and notebooks-free use.

    lm = SyncLM(open_lm("embedded"))
    print(lm.complete("What is 2 + 2?"))
"""

from __future__ import annotations

import asyncio
from typing import Any, Sequence

from ..core.protocols import LM
from ..core.types import Completion, Message, Request


class SyncLM:
    """Runs an async :class:`LM` on a private event loop that lives with this object."""

    def __init__(self, lm: LM) -> None:
        self.lm = lm
        self._runner = asyncio.Runner()

    def generate(self, requests: Sequence[Request]) -> list[Completion]:
        return self._runner.run(self.lm.generate(list(requests)))

    def complete(self, prompt: str | Sequence[Message], **request_kw: Any) -> str:
        return self.generate([Request.of(prompt, **request_kw)])[0].text

    def close(self) -> None:
        try:
            self._runner.run(self.lm.aclose())
        finally:
            self._runner.close()

    def __enter__(self) -> "SyncLM":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
