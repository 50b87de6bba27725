"""What every importer produces: a parsed benchmark (or recorded responses) plus the
problems it met, record by record. Importers are pure: they read files and return
these objects; ``pipelines.importing`` writes them to the store in one transaction.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..images import StoredImage
from ..model import Benchmark, Response, Run, Sample


@dataclass(frozen=True)
class ImportProblem:
    """A record that did not go through (or went through with a flag), and why."""

    record: str  # e.g. "YESNO.jsonl line 17" or "tri-he.json image 2374892"
    reason: str
    fatal: bool = True  # False: imported, but flagged (a missing image, say)

    def __str__(self) -> str:
        return f"{self.record}: {self.reason}"


@dataclass
class ParsedBenchmark:
    benchmark: Benchmark
    samples: list[Sample] = field(default_factory=list)
    images: dict[str, StoredImage] = field(default_factory=dict)  # by sha256
    problems: list[ImportProblem] = field(default_factory=list)
    label: str = ""  # how the import report names it (default: the benchmark's name)

    @property
    def records_failed(self) -> int:
        return sum(1 for p in self.problems if p.fatal)


@dataclass
class ParsedResponses:
    """Recorded responses of other toolkits: one run per model found in the file."""

    runs: list[Run] = field(default_factory=list)
    responses: list[Response] = field(default_factory=list)
    problems: list[ImportProblem] = field(default_factory=list)
    # response id -> original time, for responses re-imported from a HalluStudio export
    created_at: dict[str, str] = field(default_factory=dict)
    name: str = "responses"  # how the import report names them (the file, say)

    @property
    def records_failed(self) -> int:
        return sum(1 for p in self.problems if p.fatal)
