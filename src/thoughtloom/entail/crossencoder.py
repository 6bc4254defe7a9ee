"""Entailment from a sentence-transformers ``CrossEncoder`` NLI model in a local folder.

The model reads (premise, hypothesis) together. With several labels (an NLI
head: contradiction / entailment / neutral) the judge returns the softmax
probability of the label whose name contains "entail" (or ``label``); with a
single output it returns the sigmoid of the logit. Nothing is downloaded:
``model_path`` must be a local folder (loaded with ``local_files_only``).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..core.errors import ConfigError
from .base import Judgement, Pair


@dataclass(frozen=True)
class CrossEncoderConfig:
    batch_size: int = 32
    max_length: int = 512
    label: str | int | None = None  # entailment label name or index; None = find "entail"


class CrossEncoderJudge:
    def __init__(self, model_path: str | Path, config: CrossEncoderConfig = CrossEncoderConfig(),
                 *, device: str = "cpu") -> None:
        path = Path(model_path).expanduser()
        if not path.is_dir():
            raise ConfigError(f"cross-encoder model folder not found: {path}",
                              hint="give a local folder with a sentence-transformers CrossEncoder / NLI model")
        try:
            from sentence_transformers import CrossEncoder
        except ImportError as exc:  # pragma: no cover - depends on install
            raise ConfigError("CrossEncoderJudge needs sentence-transformers",
                              hint='pip install "thoughtloom[dense]"') from exc
        self.config = config
        self.model: Any = CrossEncoder(str(path), device=device, max_length=config.max_length,
                                       local_files_only=True)
        self.judge_id = f"cross:{path.resolve()}"
        self.num_labels = int(self.model.model.config.num_labels)
        self.label_index = self._entail_index(config.label)

    def _entail_index(self, label: str | int | None) -> int | None:
        if self.num_labels == 1:
            return None
        id2label = {int(k): str(v).lower() for k, v in (self.model.model.config.id2label or {}).items()}
        if isinstance(label, int):
            if not 0 <= label < self.num_labels:
                raise ConfigError(f"label index {label} out of range for {self.num_labels} labels")
            return label
        wanted = (label or "entail").lower()
        found = [i for i, name in id2label.items() if wanted in name]
        if len(found) != 1:
            raise ConfigError(f"cannot tell which of the labels {id2label} is entailment",
                              hint="pass label=NAME or label=INDEX")
        return found[0]

    def scores(self, pairs: Sequence[Pair]) -> np.ndarray:
        if not pairs:
            return np.zeros(0)
        logits = np.asarray(self.model.predict([list(p) for p in pairs], batch_size=self.config.batch_size,
                                               activation_fn=_identity(), convert_to_numpy=True,
                                               show_progress_bar=False), dtype=np.float64)
        if self.label_index is None:
            return 1.0 / (1.0 + np.exp(-logits.reshape(-1)))
        logits = logits - logits.max(axis=1, keepdims=True)
        probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        return probs[:, self.label_index]

    def judge_detailed(self, pairs: Sequence[Pair]) -> list[Judgement]:
        return [Judgement(float(p), "model") for p in self.scores(pairs)]

    async def judge(self, pairs: Sequence[Pair]) -> list[float]:
        scores = await asyncio.to_thread(self.scores, list(pairs))
        return [float(s) for s in scores]


def _identity():
    import torch

    return torch.nn.Identity()
