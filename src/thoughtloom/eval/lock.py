"""An exclusive lock on an output folder: one eval writes it at a time.

Two runs on one ``--out`` would both run every example, and one rewriting
``results.jsonl`` (``--retry-errors``, a resume that drops a partial line)
while the other appends loses records. :class:`OutputLock` takes an
``fcntl.flock`` on ``OUT/.lock`` for the whole run; the file records who
holds it (pid, host, start time) so a second run can say so and exit.

The kernel drops a ``flock`` when its holder dies, however it dies, so a
lock left by a killed run (``kill -9``, a crash, a reboot) is simply taken
over: no stale-pid guessing. (``flock`` is advisory and local: two machines
writing one folder over NFS are not protected.)
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from typing import Any

from ..core.errors import ConfigError

LOCK = ".lock"

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no flock; runs are not protected there
    fcntl = None  # type: ignore[assignment]


class OutputLocked(ConfigError):
    """Another live run holds the output folder."""


def prepare_dir(out_dir: Path) -> None:
    """Create ``out_dir`` (and parents), or say in one line why it cannot be."""
    if out_dir.exists() and not out_dir.is_dir():
        raise ConfigError(f"output folder {out_dir} is a file", hint="choose another --out")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create output folder {out_dir}: {exc.strerror or exc}",
                          hint="choose another --out") from None


class OutputLock:
    """``with OutputLock(out_dir):`` — held until the block ends (or the process dies)."""

    def __init__(self, out_dir: str | Path) -> None:
        self.dir = Path(out_dir)
        self.path = self.dir / LOCK
        self._fd: int | None = None

    def acquire(self) -> None:
        prepare_dir(self.dir)
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise ConfigError(f"cannot lock output folder {self.dir}: {exc.strerror or exc}",
                              hint="choose another --out") from None
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _describe(_read_holder(fd))
                os.close(fd)
                raise OutputLocked(f"output folder {self.dir} is in use by another run ({holder})",
                                   hint="wait for it to finish, or choose another --out") from None
        info = {"pid": os.getpid(), "host": socket.gethostname(),
                "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(info) + "\n").encode(), 0)
        self._fd = fd

    def release(self) -> None:
        # The file stays: unlinking a flock file lets a waiter lock a deleted inode.
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # closing drops the flock

    def __enter__(self) -> "OutputLock":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _read_holder(fd: int) -> dict[str, Any]:
    try:
        raw = os.pread(fd, 4096, 0)
        info = json.loads(raw)
        return info if isinstance(info, dict) else {}
    except (OSError, ValueError):
        return {}


def _describe(info: dict[str, Any]) -> str:
    if not info:
        return "it is starting up"
    return f"pid {info.get('pid', '?')} on {info.get('host', '?')}, started {info.get('started', '?')}"
