"""Build the configured Tri-HE judge from ``Settings`` (``scoring.trihe_judge``: graph | embedding | nli | llm)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..config import Settings
from .base import PhraseEncoder, TripletJudge

if TYPE_CHECKING:
    from ..components import Components


def build_triplet_judge(settings: Settings, parts: "Components") -> TripletJudge:
    """The judge ``settings`` name, its encoder and LLM client asked of ``parts`` (``components.Components``:
    built once there and shared; a judge that needs neither builds neither)."""
    sc = settings.scoring
    kind = sc.trihe_judge
    encoder: PhraseEncoder | None = parts.encoder() if kind in ("embedding", "nli", "graph") else None
    if kind == "graph":
        from .graph_judge import SceneGraphAlignmentJudge

        return SceneGraphAlignmentJudge(encoder, model_name=sc.embedding_identity,
                                        grounding_threshold=sc.graph_grounding_threshold,
                                        unverifiable=sc.unverifiable,
                                        unverifiable_weight=sc.unverifiable_weight)
    if kind == "embedding":
        from .embedding_judge import EmbeddingSimilarityJudge

        return EmbeddingSimilarityJudge(encoder, model_name=sc.embedding_identity,  # type: ignore[arg-type]
                                        reference_threshold=sc.trihe_reference_threshold,
                                        support_threshold=sc.trihe_support_threshold, top_k=sc.trihe_top_k)
    if kind == "nli":
        if not sc.nli_model:
            raise ValueError("trihe_judge = 'nli' needs scoring.nli_model (a local path or cached Hugging Face "
                             "NLI cross-encoder, e.g. microsoft/deberta-large-mnli)")
        from .nli import NLIJudge, NLIModel

        return NLIJudge(NLIModel(sc.nli_model), encoder, encoder_name=sc.embedding_identity,  # type: ignore[arg-type]
                        reference_threshold=sc.trihe_reference_threshold, nli_threshold=sc.nli_threshold,
                        top_k=sc.trihe_top_k, object_threshold=sc.trihe_support_threshold)
    if kind == "llm":
        from .llm_judge import LLMJudge

        return LLMJudge(parts.llm_client())
    raise ValueError(f"unknown scoring.trihe_judge {kind!r}; choose graph, embedding, nli or llm")
