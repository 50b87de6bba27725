"""Judges of response triplets against a reference (scene graph + gold triplets), for Tri-HE.

- ``SceneGraphAlignmentJudge``: claims checked on the graph's nodes and edges (offline default).
- ``EmbeddingSimilarityJudge``: Tri-HE's released check (cosine similarity, no NLI model).
- ``NLIJudge``: a real NLI cross-encoder's entailment probability.
- ``LLMJudge``: the paper's two questions to an LLM.
"""

from .base import HALLUCINATION_VERDICTS, VERDICTS, JudgeReference, TripletJudge, TripletJudgement
from .embedding_judge import EmbeddingSimilarityJudge
from .factory import build_triplet_judge
from .graph_judge import SceneGraphAlignmentJudge
from .llm_judge import LLMJudge
from .nli import NLIJudge, NLIModel

__all__ = ["HALLUCINATION_VERDICTS", "VERDICTS", "JudgeReference", "TripletJudge", "TripletJudgement",
           "EmbeddingSimilarityJudge", "LLMJudge", "SceneGraphAlignmentJudge", "build_triplet_judge", "NLIJudge", "NLIModel"]
