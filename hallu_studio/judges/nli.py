"""A Hugging Face NLI cross-encoder, and the Tri-HE judge built on it.

``NLIModel`` loads any sequence-classification checkpoint whose ``id2label`` names an
entailment class (``roberta-large-mnli``, ``microsoft/deberta-large-mnli``,
``cross-encoder/nli-deberta-v3-base`` ...) from a local path or the hub cache, and
gives entailment probabilities. Reefknot's VQA check uses its argmax in both
directions (bidirectional entailment).

``NLIJudge`` retrieves a premise per claim exactly like the embedding judge, then calls
a claim *supported* when P(entailment | premise, claim) ≥ ``nli_threshold`` (0.6).
"""

from __future__ import annotations

import threading
from typing import Any, Sequence

import numpy as np

from .base import JudgeReference, PhraseEncoder, Triplet, TripletJudgement, triplet_text
from .offline import GraphTyper, retrieve_premises, warm_encoder


class NLIModel:
    """Entailment probabilities from a local or cached NLI cross-encoder (CPU by default)."""

    def __init__(self, path: str, *, device: str = "cpu", batch_size: int = 16, max_length: int = 512) -> None:
        self.path = path
        self.device = device
        self.batch_size = batch_size
        self.max_length = max_length
        self._loaded: tuple[Any, Any] | None = None
        self._lock = threading.Lock()
        self.entailment_index: int | None = None

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._loaded is None:
                from transformers import AutoModelForSequenceClassification, AutoTokenizer

                try:
                    tokenizer = AutoTokenizer.from_pretrained(self.path)
                    model = AutoModelForSequenceClassification.from_pretrained(self.path)
                except OSError as exc:
                    raise ValueError(f"cannot load the NLI model {self.path!r} (a local path or a model in the "
                                     f"Hugging Face cache; downloads are off by default): {exc}") from exc
                self.entailment_index = entailment_label_index(model.config.id2label, self.path)
                model.eval().to(self.device)
                self._loaded = (tokenizer, model)
            return self._loaded

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Softmax class probabilities, one row per (premise, hypothesis)."""
        import torch

        tokenizer, model = self._load()
        rows = []
        for start in range(0, len(pairs), self.batch_size):
            chunk = pairs[start:start + self.batch_size]
            enc = tokenizer([p for p, _ in chunk], [h for _, h in chunk], return_tensors="pt", padding=True,
                            truncation=True, max_length=self.max_length).to(self.device)
            with torch.no_grad():
                logits = model(**enc).logits
            rows.append(torch.softmax(logits.float(), dim=-1).cpu().numpy())
        n_labels = int(model.config.num_labels)
        return np.concatenate(rows) if rows else np.zeros((0, n_labels))

    def entailment_probs(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        probs = self.probabilities(pairs)
        return probs[:, self.entailment_index] if len(probs) else np.zeros(0)

    def entails(self, pairs: Sequence[tuple[str, str]]) -> list[bool]:
        """Whether entailment is the most probable class (Reefknot's released check)."""
        probs = self.probabilities(pairs)
        return [int(np.argmax(row)) == self.entailment_index for row in probs]


def entailment_label_index(id2label: dict[Any, str], model: str) -> int:
    """The class index whose label starts with "entail"; a clear error when there is none."""
    found = [int(i) for i, label in id2label.items() if str(label).strip().lower().startswith("entail")]
    if len(found) != 1:
        raise ValueError(f"the model {model!r} is not an NLI classifier HalluStudio can read: its labels "
                         f"{dict(id2label)} do not name exactly one entailment class")
    return found[0]


class NLIJudge:
    name = "nli"

    def __init__(self, nli: NLIModel, encoder: PhraseEncoder, *, encoder_name: str = "",
                 reference_threshold: float = 0.5, nli_threshold: float = 0.6, top_k: int = 3,
                 object_threshold: float = 0.6) -> None:
        self.nli = nli
        self.encoder = encoder
        self.encoder_name = encoder_name or getattr(encoder, "model_name", type(encoder).__name__)
        self.reference_threshold = reference_threshold
        self.nli_threshold = nli_threshold
        self.top_k = top_k
        self.object_threshold = object_threshold
        self._typer = GraphTyper(encoder, object_threshold)

    def config(self) -> dict[str, Any]:
        return {"judge": self.name, "nli_model": self.nli.path, "encoder": self.encoder_name,
                "reference_threshold": self.reference_threshold, "nli_threshold": self.nli_threshold,
                "top_k": self.top_k, "object_threshold": self.object_threshold}

    def warm(self, batches: Sequence[tuple[Sequence[Triplet], JudgeReference]]) -> None:
        """Pre-encode the phrases of many items at once (see ``offline.warm_encoder``)."""
        warm_encoder(self.encoder, batches, self.reference_threshold, self.top_k)

    def judge(self, claims: Sequence[Triplet], reference: JudgeReference) -> list[TripletJudgement]:
        if not claims:
            return []
        premises = retrieve_premises(self.encoder, claims, reference, self.reference_threshold, self.top_k)
        probs = self.nli.entailment_probs([(p.text, triplet_text(c)) for p, c in zip(premises, claims)])
        supported = [bool(p >= self.nli_threshold) for p in probs]
        reasons = [f"P(entailment) {p:.2f} {'>=' if ok else '<'} {self.nli_threshold} from: {prem.text}"
                   for p, ok, prem in zip(probs, supported, premises)]
        return self._typer.verdicts(claims, reference, [float(p) for p in probs], supported, reasons)
