"""Import formats by name: what each reads and how. The CLI, the app, Python callers and ``docs/formats.md``
read this registry; none of them lists formats again.

A format is one module under ``hallu_studio/importers/formats/`` that calls :func:`register` at import time
(datasette's habit: plugins register themselves). Its ``read`` is a generator: it yields what it parsed
(benchmarks, recorded responses, human events or studies), and ``pipelines.importing.import_format`` writes
each one in its own transaction *before* asking for the next, so a reader of responses that first yields the
benchmark they answer sees that benchmark's samples when it asks the store for them.

>>> [f.name for f in formats()][:4]
['sample', 'tri-he', 'reefknot', 'vg']
>>> import_format("lmms-eval").options
('path', 'benchmark', 'model')
>>> import_format("vlmevalkt")
Traceback (most recent call last):
...
ValueError: unknown import format 'vlmevalkt' (did you mean 'vlmevalkit'?); formats: sample, tri-he, reefknot, vg, gqa, halfscore, coco, pope, amber, lmms-eval, vlmevalkit, mme-eval-tool, llava, jsonl, human-judgements, image-folder
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Protocol, Union

from ..model import HumanEvent, Sample
from ..names import unknown_name
from .base import ImportProblem, ParsedBenchmark, ParsedResponses

if TYPE_CHECKING:
    from .human import ParsedHumanStudy

# The options a format may read, as the CLI names them (PATH is positional).
OPTIONS: tuple[str, ...] = ("path", "images", "regions", "benchmark", "model", "responses")


@dataclass(frozen=True)
class ImportRequest:
    """What the user gave: the file or folder and the options (None where not given)."""

    path: Path | None = None
    images: Path | None = None
    regions: Path | None = None
    benchmark: str | None = None
    model: str | None = None
    responses: Path | None = None  # a file of responses to the images a format reads (image-folder)


class StoredCorpus(Protocol):
    """What a reader may ask of the store it imports into (``Store`` is one); readers never write."""

    def sample_ids(self, benchmark: str | None = None) -> set[str]: ...

    def get_samples(self, sample_ids: list[str]) -> dict[str, Sample]: ...

    def benchmark_names(self) -> list[str]: ...


@dataclass
class ParsedEvents:
    """Human events exported by HalluStudio (``export --table judgments``), to append as they were."""

    name: str
    events: list[HumanEvent]
    problems: list[ImportProblem]


Parsed = Union[ParsedBenchmark, ParsedResponses, ParsedEvents, "ParsedHumanStudy"]
Reader = Callable[[ImportRequest, StoredCorpus], Iterable[Parsed]]


@dataclass(frozen=True)
class ImportFormat:
    """One ``--format``: its name, one line saying what it reads, the options it reads (any other given is
    refused, not dropped), and its reader. ``path_help`` says what PATH is for this format."""

    name: str
    summary: str
    options: tuple[str, ...]
    read: Reader
    path_help: str = ""

    def __post_init__(self) -> None:
        unknown = set(self.options) - set(OPTIONS)
        if unknown:
            raise ValueError(f"import format {self.name}: unknown options {sorted(unknown)}; known: {OPTIONS}")


_FORMATS: dict[str, ImportFormat] = {}
# The order formats are listed in (help, docs): a module may say where it goes; the others follow by name.
ORDER: tuple[str, ...] = ("sample", "tri-he", "reefknot", "vg", "gqa", "halfscore", "coco", "pope", "amber",
                          "lmms-eval", "vlmevalkit", "mme-eval-tool", "llava", "jsonl", "human-judgements")


def register(fmt: ImportFormat) -> ImportFormat:
    """Add ``fmt`` to the registry (called by each module of ``importers/formats`` when imported)."""
    if fmt.name in _FORMATS and _FORMATS[fmt.name] is not fmt:
        raise ValueError(f"import format {fmt.name!r} is registered twice")
    _FORMATS[fmt.name] = fmt
    return fmt


# Whether every module of importers/formats has been imported: importing one of them by hand registers that one
# alone, so a non-empty registry is not a loaded one.
_loaded = False


def _load() -> None:
    global _loaded
    from . import formats as package

    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{info.name}")
    _loaded = True


def formats() -> list[ImportFormat]:
    """Every registered format, in listing order."""
    if not _loaded:
        _load()
    rank = {name: i for i, name in enumerate(ORDER)}
    return sorted(_FORMATS.values(), key=lambda f: (rank.get(f.name, len(ORDER)), f.name))


def format_names() -> list[str]:
    return [f.name for f in formats()]


def import_format(name: str) -> ImportFormat:
    """The format called ``name``; a typo names the closest and lists them all."""
    for fmt in formats():
        if fmt.name == name:
            return fmt
    raise ValueError(unknown_name("import format", name, format_names(), listing="formats"))


def refuse_unread_options(fmt: ImportFormat, request: ImportRequest) -> None:
    """Name the first option given that ``fmt`` does not read (it would be dropped silently), and the formats
    that do read it."""
    for option in OPTIONS:
        if getattr(request, option) is not None and option not in fmt.options:
            flag = "a PATH" if option == "path" else f"--{option}"
            readers = [f.name for f in formats() if option in f.options]
            raise ValueError(f"--format {fmt.name} does not take {flag} (formats that do: {', '.join(readers)})")
    if "path" in fmt.options and request.path is None:
        raise ValueError(f"--format {fmt.name} needs a PATH")
