"""Write what the importers parsed into the store, one transaction per batch.

The importers have already validated every record (bad ones are problems, not
samples), so a write either stores the whole batch or, when it fails, nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..importers.base import ImportProblem, ParsedBenchmark, ParsedResponses
from ..model import HumanEvent
from ..store import Store


@dataclass
class ImportReport:
    """What one import did; ``summary()`` is the line the CLI prints."""

    name: str
    images: int = 0  # distinct image keys referenced by the samples
    images_found: int = 0
    records: int = 0  # samples, responses or events read successfully
    added: int = 0
    already_present: int = 0
    runs_added: int = 0
    problems: list[ImportProblem] = field(default_factory=list)
    kind: str = "questions"

    @property
    def images_missing(self) -> int:
        return self.images - self.images_found

    @property
    def failed(self) -> int:
        return sum(1 for p in self.problems if p.fatal)

    @property
    def ok(self) -> bool:
        return self.failed == 0

    def summary(self) -> str:
        head = f"{self.name}: "
        if self.kind == "questions":
            head += f"{self.images} images ({self.images_found} found), "
        elif self.runs_added:
            head += f"{self.runs_added} runs added, "
        return (f"{head}{self.records} {self.kind}; {self.added} added, {self.already_present} already present; "
                f"{self.failed} problems" + (f" (+{len(self.problems) - self.failed} warnings)"
                                             if len(self.problems) > self.failed else ""))


def import_benchmark(store: Store, parsed: ParsedBenchmark) -> ImportReport:
    """Store a parsed benchmark's samples and images in ONE ``add_samples`` call."""
    keys = {s.image_key for s in parsed.samples}
    found = {s.image_key for s in parsed.samples if s.image_sha256}
    used = {s.image_sha256 for s in parsed.samples if s.image_sha256}
    images = [(i.sha256, i.mime, i.width, i.height, i.data) for sha, i in parsed.images.items() if sha in used]
    added = store.add_samples(parsed.benchmark, parsed.samples, images)
    return ImportReport(parsed.benchmark.name, images=len(keys), images_found=len(found),
                        records=len(parsed.samples), added=added, already_present=len(parsed.samples) - added,
                        problems=list(parsed.problems))


def import_responses(store: Store, parsed: ParsedResponses, name: str = "responses") -> ImportReport:
    """Store recorded runs and their responses in ONE transaction."""
    runs_added, added = store.add_runs_and_responses(parsed.runs, parsed.responses, parsed.created_at or None)
    return ImportReport(name, records=len(parsed.responses), added=added,
                        already_present=len(parsed.responses) - added, runs_added=runs_added,
                        problems=list(parsed.problems), kind="responses")


def import_events(store: Store, events: list[HumanEvent], problems: list[ImportProblem],
                  name: str = "judgments") -> ImportReport:
    """Append exported human events, keeping their order and times (append-only: nothing is replaced)."""
    before = store.counts()["events"]
    store.add_imported_events(events)
    added = store.counts()["events"] - before
    return ImportReport(name, records=len(events), added=added, already_present=len(events) - added,
                        problems=list(problems), kind="events")
