"""LLM access: an OpenAI-compatible chat client with a content-addressed cache and retries."""

from .client import LLMAnswerError, LLMClient, LLMError, LLMRequest, strict_json
from .parsing import parse_json_tolerant

__all__ = ["LLMAnswerError", "LLMClient", "LLMError", "LLMRequest", "parse_json_tolerant", "strict_json"]
