"""One pool of training demonstrations for every method of a comparison.

The HGOT authors give each baseline ``dsp.sample(train, k=7)``: 7 training examples drawn at
random under a fixed seed, the same 7 for every question; DSP's Demonstrate starts from 7
(``train_sel_func(train, k=7)``). A strategy option ``demo_file`` (CSV files, comma-separated,
columns ``Question`` and ``Answer``, optional ``Rationale`` -- the paper's
``hgot_train_{short,medium,long}.csv``) names the training set; :func:`read_pool` draws the
pool from it, :data:`POOL_SIZE` examples under :data:`POOL_SEED`, so Retrieve-then-Read, DSP,
the Vanilla LM and HGOT's on-the-fly annotation all see the same 7. Without a file a
strategy uses its task's own demos.
"""

from __future__ import annotations

import ast
import csv
import io
import random
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from ..core.errors import ConfigError, DataError
from ..core.files import read_utf8
from ..core.types import Demo
from .context import Context

POOL_SIZE = 7  # the authors' dsp.sample(train, k=7)
POOL_SEED = 0  # one draw for every method and question


def _answer(raw: str) -> str:
    """An answer cell: a list literal (Open-SQuAD's "['Denver Broncos', 'Broncos']") gives its first."""
    text = raw.strip()
    if text.startswith("["):
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            return text
        if isinstance(value, (list, tuple)) and value and isinstance(value[0], str):
            return value[0].strip()
    return text


def _rows(path: Path) -> list[Demo]:
    if not path.is_file():
        raise ConfigError(f"demo file not found: {path}", hint="demo_file=PATH[,PATH...] (CSV: Question, Answer)")
    reader = csv.DictReader(io.StringIO(read_utf8(path), newline=""))
    if not reader.fieldnames or not {"Question", "Answer"} <= set(reader.fieldnames):
        raise DataError(f"{path}:1: a demo file needs the columns Question, Answer")
    out = []
    for row in reader:
        question, answer = (row.get("Question") or "").strip(), _answer(row.get("Answer") or "")
        if question and answer:
            out.append(Demo(question, answer, (row.get("Rationale") or "").strip()))
    return out


@lru_cache(maxsize=8)
def read_pool(files: str, n: int = POOL_SIZE) -> tuple[Demo, ...]:
    """``n`` demos drawn at random under :data:`POOL_SEED` from the rows of ``files`` (paths,
    comma-separated, read in order); every row when there are at most ``n``."""
    rows = [d for f in files.split(",") if f.strip() for d in _rows(Path(f.strip()).expanduser())]
    if not rows:
        raise DataError(f"{files}: no demonstrations (rows with a Question and an Answer)")
    if len(rows) <= n:
        return tuple(rows)
    return tuple(random.Random(POOL_SEED).sample(rows, n))


def pool_demos(ctx: Context, demo_file: str | None) -> Sequence[Demo]:
    """The comparison's training pool when ``demo_file`` names one, else the task's demos."""
    return read_pool(demo_file) if demo_file else ctx.task.demos()
