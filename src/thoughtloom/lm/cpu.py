"""What the CPU can do and how busy it is, for the embedded engine (:mod:`.llamacpp_engine`).

Plain Linux facts (``/proc/cpuinfo``, ``/proc/stat``), no llama.cpp: which
CPUs must not use llama.cpp's weight repacking, and how many threads to run
while other processes use some of the cores.

Threads under load
------------------
llama.cpp's threads meet at a barrier after every operation, so a thread
that another process has pushed off its core stalls all the others. On a
2-core machine the embedded model made 86 tokens/s with 2 threads when
quiet, but 24 with 2 threads against one busy process, where 1 thread still
made 58 (benchmarks/threads_load.py). With ``threads=None`` (the default) the
engine therefore sizes its thread pool to the cores other processes leave
free: before each batch, and every second while it decodes, it reads how much
CPU time the rest of the machine used since the last look (``/proc/stat``
minus this process) and calls ``llama_set_n_threads`` with
:func:`threads_for`. A fixed ``threads`` turns this off.

Weight repacking
----------------
llama.cpp repacks weights into "extra buffer types" for faster CPU kernels.
On CPUs with AMX its AMX repack path crashes (llama.cpp issue 20824), so on
such CPUs (``amx_tile`` in ``/proc/cpuinfo``) the model is loaded with
``use_extra_bufts = False``; elsewhere the repack path stays on. ``repack``
overrides the choice.
"""

from __future__ import annotations

import os
import time
from pathlib import Path


def cpu_flags(cpuinfo: str | Path = "/proc/cpuinfo") -> set[str]:
    """The CPU feature flags the kernel reports (empty where it reports none)."""
    try:
        text = Path(cpuinfo).read_text(errors="replace")
    except OSError:
        return set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return set(value.split())
    return set()


def repack_safe(flags: set[str]) -> bool:
    """False on CPUs with AMX, where llama.cpp's AMX repack path crashes."""
    return not any(f.startswith("amx") for f in flags)


def threads_for(cores: int, others: float) -> int:
    """Threads to run when other processes keep ``others`` cores busy: the
    free cores, rounding a core that is more than a quarter busy down."""
    return max(1, min(cores, int(cores - others + 0.25)))


class LoadMeter:
    """CPU used by everything but this process, in cores, between two looks."""

    def __init__(self, stat: str | Path = "/proc/stat") -> None:
        self.stat = Path(stat)
        self.tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        self._last = self._sample()

    def _sample(self) -> tuple[float, float, float] | None:
        try:
            fields = self.stat.read_text().split("\n", 1)[0].split()[1:9]
            jiffies = [int(x) for x in fields]
        except (OSError, ValueError):
            return None  # not Linux: no adaptation
        busy = sum(jiffies) - jiffies[3] - jiffies[4]  # all but idle and iowait
        own = os.times()
        return time.monotonic(), busy / self.tick, own.user + own.system

    def others(self) -> float | None:
        """Cores other processes used on average since the last call."""
        now, last = self._sample(), self._last
        self._last = now
        if now is None or last is None or now[0] - last[0] <= 0:
            return None
        return max(0.0, ((now[1] - last[1]) - (now[2] - last[2])) / (now[0] - last[0]))
