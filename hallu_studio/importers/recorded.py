"""Shared by the importers of recorded responses: matching rows to stored samples and
making one ``recorded`` run per model.

Id-mapping rule (also in ``docs/formats.md``): a row's candidate keys are tried in order;
the first that names a stored sample wins:

1. the key itself, when it is already a full sample id (``reefknot/vqa/12``);
2. ``<benchmark>/<key>`` (``--benchmark reefknot`` and key ``vqa/12``);
3. the ONE sample of the benchmark whose id ends in ``/<key>`` (``tri-he/2374892/q0`` for key
   ``2374892/q0``; for key ``12`` in Reefknot this is ambiguous, three tasks have a 12th
   record, and the row becomes a problem naming the candidates).

>>> r = SampleIdResolver("reefknot", {"reefknot/vqa/12", "reefknot/mcq/12", "reefknot/vqa/7"})
>>> r.resolve(["vqa/12"]), r.resolve(["7"])
('reefknot/vqa/12', 'reefknot/vqa/7')
>>> r.resolve(["12"])
Traceback (most recent call last):
...
ValueError: key '12' matches 2 samples of reefknot (reefknot/mcq/12, reefknot/vqa/12); give a unique id
"""

from __future__ import annotations

from typing import Any, Iterable

from ..model import Run

RECORDED_BACKEND = "recorded"


class SampleIdResolver:
    def __init__(self, benchmark: str | None, known_ids: Iterable[str]) -> None:
        self.benchmark = benchmark
        self.known = set(known_ids)
        self._by_suffix: dict[str, list[str]] | None = None

    def _suffixes(self) -> dict[str, list[str]]:
        if self._by_suffix is None:
            index: dict[str, list[str]] = {}
            prefix = f"{self.benchmark}/" if self.benchmark else ""
            for sid in self.known:
                if not sid.startswith(prefix):
                    continue
                parts = sid.split("/")
                for i in range(1, len(parts)):
                    index.setdefault("/".join(parts[i:]), []).append(sid)
            self._by_suffix = index
        return self._by_suffix

    def resolve(self, keys: Iterable[Any]) -> str:
        """The sample id for the first usable key; ValueError saying why none matched."""
        tried = [str(k).strip() for k in keys if k is not None and str(k).strip()]
        if not tried:
            raise ValueError("the row names no sample (no id field)")
        for key in tried:
            if key in self.known:
                return key
            if self.benchmark and f"{self.benchmark}/{key}" in self.known:
                return f"{self.benchmark}/{key}"
        for key in tried:
            hits = sorted(self._suffixes().get(key, []))
            if len(hits) == 1:
                return hits[0]
            if len(hits) > 1:
                raise ValueError(f"key {key!r} matches {len(hits)} samples of {self.benchmark} "
                                 f"({', '.join(hits[:3])}); give a unique id")
        where = f" of benchmark {self.benchmark}" if self.benchmark else ""
        raise ValueError(f"no stored sample{where} matches {' / '.join(repr(k) for k in tried)}")


class RecordedRuns:
    """One ``recorded`` run per (benchmark, model), with a stable id so re-imports add nothing twice.

    The source (format and file name) is part of the run's settings: two different
    files of the same model are two runs.
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self._runs: dict[tuple[str, str], Run] = {}

    def run_for(self, benchmark: str, model: str, meta: dict[str, Any] | None = None) -> Run:
        key = (benchmark, model)
        if key not in self._runs:
            gen = {"recorded_from": self.source}
            self._runs[key] = Run(id=Run.make_id(benchmark, model, RECORDED_BACKEND, "", gen, "none", 0),
                                  benchmark=benchmark, model=model, backend=RECORDED_BACKEND, generation=gen,
                                  meta=dict(meta or {}))
        return self._runs[key]

    def runs(self) -> list[Run]:
        return list(self._runs.values())


def same_text(a: str | None, b: str | None) -> bool:
    """Whether a row's question (or prompt) is the stored sample's: equal once white space is normalised.

    >>> same_text("Is there a dog?\\n", "Is there  a dog?"), same_text("Is there a dog?", "Is there a cat?")
    (True, False)
    """
    return " ".join((a or "").split()) == " ".join((b or "").split())


def benchmark_of(sample_id: str) -> str:
    return sample_id.split("/", 1)[0]
