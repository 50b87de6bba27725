"""HalluStudio: a workbench for measuring and inspecting hallucination in vision-language models."""

__version__ = "0.1.0"
