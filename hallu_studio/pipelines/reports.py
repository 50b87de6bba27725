"""What a scoring pass did: ``ScoreReport`` (the store's pass) and the LLM usage both kinds of pass report
(``LLMUsage``; the stateless JSONL pass's ``JsonlReport`` lives with it in ``scoring_jsonl``)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

_MAX_REPORTED_FAILURES = 20


@dataclass
class LLMUsage:
    """What the LLM calls of a scoring pass did (``hallu_studio.llm.dispatch.stats_since``): calls,
    retried, failed, seconds, and parse failures and answers per call kind. Empty: no LLM was asked."""

    llm: dict[str, Any] = field(default_factory=dict)

    def llm_summary(self) -> str:
        """``LLM 12 calls (3 retried, 0 failed), 0.80 s per answer; parse failures: trihe.supported 1``."""
        s = self.llm
        if not s or not (s.get("calls") or s.get("parse_failures")):
            return ""
        text = f"LLM {s['calls']} calls ({s['retried']} retried, {s['failed']} failed)"
        if s.get("done"):
            text += f", {s['seconds'] / s['done']:.2f} s per answer"
        if s.get("parse_failures"):
            text += "; parse failures: " + ", ".join(f"{k} {v}" for k, v in sorted(s["parse_failures"].items()))
        return text


@dataclass
class ScoreReport(LLMUsage):
    """What one scoring pass did, per metric."""

    scored: Counter[str] = field(default_factory=Counter)
    undefined: Counter[str] = field(default_factory=Counter)  # scored, but the value is undefined
    not_applicable: Counter[str] = field(default_factory=Counter)
    failed: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)  # the first few, "response: stage: error"
    concepts_extracted: int = 0
    responses_seen: int = 0
    stopped_early: bool = False  # cancelled between batches; the rest is scored by a later pass
    warnings: list[str] = field(default_factory=list)  # what shaped the scores unusually (no WordNet)

    def note_failure(self, stage: str, where: str, error: str) -> None:
        self.failed[stage] += 1
        if len(self.failures) < _MAX_REPORTED_FAILURES:
            self.failures.append(f"{where}: {stage}: {error}")

    def add(self, other: "ScoreReport") -> None:
        """Count in what another pass (one batch's, computed elsewhere) did."""
        for mine, theirs in ((self.scored, other.scored), (self.undefined, other.undefined),
                             (self.not_applicable, other.not_applicable), (self.failed, other.failed)):
            mine.update(theirs)
        self.failures.extend(other.failures[:max(0, _MAX_REPORTED_FAILURES - len(self.failures))])
        self.concepts_extracted += other.concepts_extracted
        self.responses_seen += other.responses_seen

    def summary(self) -> str:
        parts = [f"{m} {n}" for m, n in sorted(self.scored.items())]
        detail = ", ".join(parts) or ("" if self.failed else "nothing missing")  # a failure is missing (retried)
        text = f"scored {sum(self.scored.values())}" + (f" ({detail})" if detail else "")
        if self.concepts_extracted:
            text += f"; concepts extracted for {self.concepts_extracted}"
        if self.undefined:
            text += f"; undefined {sum(self.undefined.values())}"
        if self.not_applicable:
            text += f"; not applicable {sum(self.not_applicable.values())}"
        if self.failed:
            stages = ", ".join(f"{k} {v}" for k, v in sorted(self.failed.items()))
            text += f"; FAILED {sum(self.failed.values())} ({stages})"
        if self.stopped_early:
            text += "; stopped early (cancelled): the rest is scored by the next scoring pass"
        if self.llm_summary():
            text += f"; {self.llm_summary()}"
        return text
