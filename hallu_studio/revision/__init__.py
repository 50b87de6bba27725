"""VISCON Evaluate-by-Edit revision: a scene-graph database and the revisers that query it.

``SceneGraphRuleReviser`` is the offline default (deterministic rules); ``LLMReviser`` follows
VISCON's Figure 12 query-and-revise prompts through an OpenAI-compatible chat client.
"""

from .database import KEEP, NONE, QueryResult, SceneGraphDatabase
from .matching import ObjectMatcher, normalize_name
from .rule_reviser import Revision, SceneGraphRuleReviser

__all__ = ["KEEP", "NONE", "ObjectMatcher", "QueryResult", "Revision", "SceneGraphDatabase",
           "SceneGraphRuleReviser", "normalize_name"]
