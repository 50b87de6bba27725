"""Build the configured Tri-HE judge from ``Settings`` (``scoring.trihe_judge``: graph | embedding | nli | llm)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..config import Settings
from .base import PhraseEncoder, TripletJudge

if TYPE_CHECKING:
    from ..llm import LLMClient
    from ..caching import ScoringCache


def build_triplet_judge(settings: Settings, *, cache: "ScoringCache | None" = None, encoder: PhraseEncoder | None = None,
                        llm_client: "LLMClient | None" = None) -> TripletJudge:
    sc = settings.scoring
    kind = sc.trihe_judge
    if kind in ("embedding", "nli", "graph") and encoder is None:
        from ..embedding import Embedder

        encoder = Embedder(sc.embedding_model, cache=cache, batch_size=sc.batch_size)
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
        from ..llm import LLMClient
        from .llm_judge import LLMJudge

        return LLMJudge(llm_client or LLMClient(settings.llm, cache))
    raise ValueError(f"unknown scoring.trihe_judge {kind!r}; choose graph, embedding, nli or llm")
