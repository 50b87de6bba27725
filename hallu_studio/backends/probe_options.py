"""A probe model's options (``run --model probe:rate=0.3,mix=object+relation``): what ``backends.probe`` and the
caption and scene writers it uses (``probe_caption``, ``probe_scene``) all read, so it lives below the three.

>>> ProbeOptions.parse("rate=0.3,mix=object+relation,seed=1").label()
'probe rate=0.3 mix=object+relation seed=1 [synthetic]'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

INJECTION_TYPES: tuple[str, ...] = ("object", "attribute", "relation", "count")


@dataclass(frozen=True)
class ProbeOptions:
    rate: float = 0.0
    mix: tuple[str, ...] = INJECTION_TYPES
    seed: int = 0
    delay_ms: int = 0  # per item; lets tests kill a run part-way
    fail: float = 0.0  # probability that an item fails (exercises failure recording)

    def __post_init__(self) -> None:
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError(f"probe rate must be within [0, 1], got {self.rate}")
        if not 0.0 <= self.fail <= 1.0:
            raise ValueError(f"probe fail must be within [0, 1], got {self.fail}")
        unknown = set(self.mix) - set(INJECTION_TYPES)
        if unknown or not self.mix:
            raise ValueError(f"probe mix must be a '+'-joined subset of {INJECTION_TYPES}, got {self.mix}")

    @classmethod
    def parse(cls, text: str) -> "ProbeOptions":
        """``rate=0.3,mix=object+attribute,seed=1,delay_ms=50,fail=0.1`` (every part optional)."""
        kwargs: dict[str, Any] = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            key, sep, value = part.partition("=")
            if not sep:
                raise ValueError(f"probe option {part!r} is not key=value")
            key = key.strip()
            try:
                if key in ("rate", "fail"):
                    kwargs[key] = float(value)
                elif key in ("seed", "delay_ms"):
                    kwargs[key] = int(value)
                elif key == "mix":
                    kwargs[key] = tuple(m.strip() for m in value.split("+") if m.strip())
                else:
                    raise ValueError(f"unknown probe option {key!r}; known: rate, mix, seed, delay_ms, fail")
            except ValueError as exc:
                if "unknown probe option" in str(exc):
                    raise
                raise ValueError(f"probe option {key}={value!r} is not a valid value") from exc
        return cls(**kwargs)

    def label(self) -> str:
        """The model name of a probe run (delay is not part of it: it changes no output)."""
        fail = f",fail={self.fail:g}" if self.fail else ""
        return f"probe rate={self.rate:g} mix={'+'.join(self.mix)} seed={self.seed}{fail} [synthetic]"
