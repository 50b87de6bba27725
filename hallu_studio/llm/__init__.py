"""LLM access: an OpenAI-compatible chat client with a content-addressed cache and retries."""

from .client import LLMAnswerError, LLMClient, LLMError, LLMRequest
from .parsing import parse_json_tolerant

__all__ = ["LLMAnswerError", "LLMClient", "LLMError", "LLMRequest", "parse_json_tolerant"]
