"""Write what the importers parsed into the store, one transaction per batch.

The importers have already validated every record (bad ones are problems, not
samples), so a write either stores the whole batch or, when it fails, nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..importers.base import ImportProblem, ParsedBenchmark, ParsedResponses
from ..model import HumanEvent
from ..store import Store

if TYPE_CHECKING:
    from ..importers.human import ParsedHumanStudy
    from ..importers.registry import ImportRequest, Parsed


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
    return ImportReport(parsed.label or parsed.benchmark.name, images=len(keys), images_found=len(found),
                        records=len(parsed.samples), added=added, already_present=len(parsed.samples) - added,
                        problems=list(parsed.problems))


def import_responses(store: Store, parsed: ParsedResponses, name: str | None = None) -> ImportReport:
    """Store recorded runs and their responses in ONE transaction."""
    name = name or parsed.name
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


def import_human_study(store: Store, study: "ParsedHumanStudy") -> list[ImportReport]:
    """Store a human study read by ``importers.human``: its samples, its judged responses (recorded runs) and
    its judgements (events of the study's source), in that order, one transaction each.

    Re-importing adds nothing twice: samples, runs and responses have stable ids, and a judgement identical
    to a stored one of the same source is left out (``Store.append_events_once``). A judgement of a response
    that is neither in the study nor in the store is a problem naming it.
    """
    reports = [import_benchmark(store, study.benchmark)]
    if study.responses.responses or study.responses.problems:
        reports.append(import_responses(store, study.responses, f"{study.benchmark.benchmark.name} responses"))
    problems = list(study.problems)
    known = {r.id for r in study.responses.responses}
    elsewhere = sorted({e.response_id for e in study.events if e.response_id not in known})  # type: ignore[misc]
    stored = set(store.get_responses(elsewhere)) if elsewhere else set()
    events = []
    for event in study.events:
        if event.response_id in known or event.response_id in stored:
            events.append(event)
        else:
            problems.append(ImportProblem(f"{study.source} judgement of {event.response_id}",
                                          "no such response in the study or the store"))
    added = store.append_events_once(events)
    reports.append(ImportReport(f"{study.source} judgements", records=len(events), added=added,
                                already_present=len(events) - added, problems=problems, kind="judgements"))
    return reports


def import_parsed(store: Store, parsed: "Parsed") -> list[ImportReport]:
    """Store one thing a reader parsed, by its kind."""
    from ..importers.human import ParsedHumanStudy
    from ..importers.registry import ParsedEvents

    if isinstance(parsed, ParsedBenchmark):
        return [import_benchmark(store, parsed)]
    if isinstance(parsed, ParsedResponses):
        return [import_responses(store, parsed)]
    if isinstance(parsed, ParsedEvents):
        return [import_events(store, parsed.events, parsed.problems, parsed.name)]
    if isinstance(parsed, ParsedHumanStudy):
        return import_human_study(store, parsed)
    raise TypeError(f"an importer yielded {type(parsed).__name__}, which the store cannot hold")


def import_format(store: Store, name: str, request: "ImportRequest") -> list[ImportReport]:
    """Read ``request`` with the registered format ``name`` (``importers.registry``) and store what it yields,
    each part in its own transaction before the reader goes on (so responses can answer the benchmark the same
    file brought in).

    >>> from hallu_studio.importers.registry import ImportRequest    # doctest: +SKIP
    >>> with Store("studio.duckdb") as store:                         # doctest: +SKIP
    ...     import_format(store, "sample", ImportRequest())
    """
    from ..importers.registry import import_format as registered, refuse_unread_options

    fmt = registered(name)
    refuse_unread_options(fmt, request)
    reports: list[ImportReport] = []
    for parsed in fmt.read(request, store):
        reports.extend(import_parsed(store, parsed))
    return reports
