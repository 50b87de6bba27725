"""Build the configured Tri-HE judge from ``Settings`` (``scoring.trihe_judge``: graph | embedding | nli | llm | vlm),
and the image judge (``scoring.vlm_judge_model``) that takes what a reference judge leaves unverifiable."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from ..config import Settings
from .base import PhraseEncoder, TripletJudge

if TYPE_CHECKING:
    from ..caching import ScoringCache
    from ..llm import LLMClient


class JudgeParts(Protocol):
    """What a judge is built from, asked of the caller: ``components.Components`` (a layer above the judges, so
    named here by what it does, not imported)."""

    def encoder(self) -> PhraseEncoder: ...

    def llm_client(self) -> "LLMClient": ...

    def image_judge(self) -> Any: ...

    def unsettled_image_judge(self) -> Any: ...


def build_image_judge(settings: Settings, *, cache: "ScoringCache | None" = None) -> Any:
    """The image judge ``scoring.vlm_judge_model`` names (``judges.vlm_judge.VLMJudge``), or None when unset; the
    backend is the one ``run --model`` builds for the same spec (nothing loads until the first question)."""
    sc = settings.scoring
    spec = (sc.vlm_judge_model or "").strip()
    if not spec:
        return None
    if spec.startswith("probe:"):
        raise ValueError("scoring.vlm_judge_model: a probe model describes scenes it is given; it cannot look at an "
                         "image to judge a claim. Name an LVLM: transformers:<id or path> or openai:<model>@<url>")
    from ..backends import make_backend
    from .vlm_judge import VLMJudge, model_identity

    backend = make_backend(spec, batch_size=sc.vlm_judge_concurrency, concurrency=sc.vlm_judge_concurrency)
    return VLMJudge(backend, model_identity(spec), template=sc.vlm_judge_template, cache=cache)


def build_triplet_judge(settings: Settings, parts: JudgeParts) -> TripletJudge:
    """The judge ``scoring.trihe_judge`` names, its encoder, LLM client and image judge asked of ``parts`` (a
    ``JudgeParts``: ``components.Components``, built once there and shared; a judge that needs none builds none);
    with an image judge configured for unsettled claims, that judge first and the image judge for what it leaves
    unverifiable (``vlm_judge.ReferenceThenImage``)."""
    sc = settings.scoring
    if sc.trihe_judge == "vlm":
        judge = parts.image_judge()
        if judge is None:
            raise ValueError("trihe_judge = 'vlm' needs scoring.vlm_judge_model (an LVLM as run --model takes it: "
                             "transformers:<id or path> or openai:<model>@<url>)")
        return judge  # type: ignore[no-any-return]
    judge = _reference_judge(settings, parts)
    image = parts.unsettled_image_judge()
    if image is None:
        return judge
    from .vlm_judge import ReferenceThenImage

    return ReferenceThenImage(judge, image)  # type: ignore[return-value]


def _reference_judge(settings: Settings, parts: JudgeParts) -> TripletJudge:
    """The reference judge ``scoring.trihe_judge`` names (graph, embedding, nli, llm)."""
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
    raise ValueError(f"unknown scoring.trihe_judge {kind!r}; choose graph, embedding, nli, llm or vlm")
