"""How numbers and models look to people, in every view: the Overview, Browse, Inspect, Study, the analyses'
plots, the report and the command line.

One number formatter (``number``; ``UNDEFINED`` for a number that is not defined), one interval format
(``interval``), one short model name (``display_name``; ``model_label`` for the full one), one name per run that
tells it from the other runs of its model on its benchmark (``run_names``: the model's short name, plus the
settings that differ between them, as the store names metric configurations by what differs), and one colour per
model (``model_colour``). Plain text: HTML views escape it themselves.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from typing import Any, Iterable, Mapping

# The one mark for a number that is not defined (None, NaN): every table, cell, plot label and line prints it.
UNDEFINED = "—"


def number(value: Any, digits: int = 3) -> str:
    """A number for a person: ``digits`` significant digits at most, never scientific notation; whole numbers stay
    whole; float noise of an exact zero (1e-14) reads 0; booleans read yes / no; None and NaN read ``UNDEFINED``.

    >>> [number(v) for v in (96.39007275803542, 191.0, 0.123456, 1234.6, 0.000123456, -2.5, 7, 2.0, 0.091, 3e-15)]
    ['96.4', '191', '0.123', '1235', '0.000123', '-2.5', '7', '2', '0.091', '0']
    >>> number(None), number(float("nan")), number(True), number(float("inf"))
    ('—', '—', 'yes', '∞')
    """
    if value is None:
        return UNDEFINED
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if not isinstance(value, float):
        try:
            value = float(value)  # a numpy scalar
        except (TypeError, ValueError):
            return str(value)
    if math.isnan(value):
        return UNDEFINED
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    if abs(value) < 1e-9:
        return "0"
    if value.is_integer():
        return str(int(value))
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    text = f"{value:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def interval(low: Any, high: Any) -> str:
    """A confidence interval: ``[10, 14]``; ``""`` when either end is undefined.

    >>> interval(10.04, 14.0), interval(None, 3.0)
    ('[10, 14]', '')
    """
    if low is None or high is None or (isinstance(low, float) and math.isnan(low)) \
            or (isinstance(high, float) and math.isnan(high)):
        return ""
    return f"[{number(low)}, {number(high)}]"


def with_interval(value: Any, low: Any = None, high: Any = None) -> str:
    """``12 [10, 14]``; the value alone without an interval.

    >>> with_interval(12.0, 10.0, 14.0), with_interval(None), with_interval(0.5)
    ('12 [10, 14]', '—', '0.5')
    """
    span = interval(low, high) if value is not None else ""
    return f"{number(value)} {span}" if span else number(value)


# --------------------------------------------------------------------------- models

_SYNTHETIC_MARK = " [synthetic]"
_PROBE = re.compile(r"^probe rate=(?P<rate>\S+)(?: mix=(?P<mix>\S+))?(?: seed=(?P<seed>\S+))?(?P<rest>.*)$")


def model_label(model: Any, synthetic: Any) -> str:
    """The model's full name, marked "[synthetic]" once when the run is a probe.

    >>> model_label("probe rate=0.1 [synthetic]", True), model_label("probe-a", True), model_label("llava", False)
    ('probe rate=0.1 [synthetic]', 'probe-a [synthetic]', 'llava')
    """
    name = str(model)
    return f"{name}{_SYNTHETIC_MARK}" if synthetic and _SYNTHETIC_MARK.strip() not in name else name


def display_name(model: Any, width: int = 22) -> str:
    """The short name of a model for tables, legends and sentences (the full spec goes in a tooltip or a list).

    Probe specs keep their rate (and a seed or extra option when not the default); backend
    prefixes, organisations, endpoints and a trailing "-hf" go.

    >>> display_name("probe rate=0.3 mix=object+attribute+relation+count seed=0 [synthetic]")
    'probe 0.3'
    >>> display_name("transformers:llava-hf/llava-1.5-7b-hf"), display_name("openai:Qwen/Qwen2-VL-7B@http://h:8000/v1")
    ('llava-1.5-7b', 'Qwen2-VL-7B')
    """
    name = str(model).replace(_SYNTHETIC_MARK, "").strip()
    probe = _PROBE.match(name)
    if probe:
        extra = [f"seed {probe['seed']}"] if probe["seed"] not in (None, "0") else []
        extra += [probe["rest"].strip()] if probe["rest"].strip() else []
        name = " ".join([f"probe {probe['rate']}", *extra])
    else:
        name = name.split("@", 1)[0]
        backend, sep, rest = name.partition(":")
        if sep and re.fullmatch(r"[a-z][a-z0-9_-]*", backend) and rest:
            name = rest
        name = re.sub(r"-hf$", "", name.rstrip("/").rsplit("/", 1)[-1]) or name
    return name if len(name) <= width else name[: width - 1] + "…"


def short_model_label(model: Any, synthetic: Any, width: int = 22, name: str | None = None) -> str:
    """``display_name`` (or the run's ``name`` from ``run_names``), marked "(synthetic)" for probe runs: legends
    and table cells.

    >>> short_model_label("probe rate=0.3 mix=object+attribute+relation+count seed=0 [synthetic]", True)
    'probe 0.3 (synthetic)'
    """
    marked = synthetic or _SYNTHETIC_MARK in str(model)
    return (name or display_name(model, width)) + (" (synthetic)" if marked else "")


# --------------------------------------------------------------------------- what sets settings apart

def leaves(config: Any, prefix: str = "") -> dict[str, Any]:
    """A nested configuration as ``{"judge": "llm", "grounding.matcher": "graph", ...}``.

    >>> leaves({"judge": "llm", "grounding": {"matcher": "graph"}})
    {'judge': 'llm', 'grounding.matcher': 'graph'}
    """
    if not isinstance(config, dict):
        return {prefix: config}
    out: dict[str, Any] = {}
    for k, v in config.items():
        out.update(leaves(v, f"{prefix}.{k}" if prefix else str(k)))
    return out


def short_value(value: Any, width: int = 24) -> str:
    """A setting's value cut to ``width`` characters (the cut marked "…")."""
    text = str(value)
    return text if len(text) <= width else text[:width - 1].rstrip() + "…"


# A run's settings beyond its model, in the order a name lists what differs (generation's own keys after these).
_RUN_FIELDS = ("rate", "mix", "seed", "prompt", "mitigation", "checkpoint")


def _field(run: Any, name: str, default: Any = None) -> Any:
    return run.get(name, default) if isinstance(run, Mapping) else getattr(run, name, default)


def run_settings(run: Any) -> dict[str, Any]:
    """What a run (a ``Run`` or a ``Store.list_runs`` dict) was made with, flat: a probe's rate, mix and seed
    (from its spec), the prompt, the mitigation, the seed, the checkpoint and each generation setting; and the
    model spec itself where it is not a probe's (two endpoints, two organisations' copies).

    >>> run_settings({"model": "probe rate=0.3 mix=object+relation seed=1 [synthetic]", "seed": 0,
    ...               "generation": {"preset": "greedy", "signals": {"token_logprobs": True}}})
    {'rate': '0.3', 'mix': 'object+relation', 'seed': '1', 'preset': 'greedy', 'token_logprobs': True}
    """
    model = str(_field(run, "model", "")).replace(_SYNTHETIC_MARK, "").strip()
    probe = _PROBE.match(model)
    out: dict[str, Any] = {"model": model} if probe is None else {
        "rate": probe["rate"], "mix": probe["mix"], "seed": probe["seed"], "options": probe["rest"].strip() or None}
    for name in ("seed", "prompt", "mitigation", "checkpoint"):
        if out.get(name) is None:
            out[name] = _field(run, name)
    for key, value in leaves(_field(run, "generation") or {}).items():
        out.setdefault(key.rsplit(".", 1)[-1], value)
    order = {k: i for i, k in enumerate(_RUN_FIELDS)}
    return {k: out[k] for k in sorted(out, key=lambda k: order.get(k, len(order))) if out[k] is not None}


def run_names(runs: Iterable[Any], width: int = 22) -> dict[str, str]:
    """``{run id: name}``: the model's ``display_name``, and where several runs of one model on one benchmark
    would share it, the settings in which each differs from the others' usual ones ("probe 0.3 seed 1 (mix
    object+relation)", "llava-1.5-7b (prompt viscon)"), so that no two runs of a benchmark share a name. A run
    whose settings are the usual ones, or whose model's name no other run shares, keeps the short name, so the
    names people know stay as they are.

    >>> spec = "probe rate=0.3 mix={} seed=1 [synthetic]"
    >>> runs = [{"id": "a", "benchmark": "b", "model": spec.format("object+attribute+relation+count")},
    ...         {"id": "b", "benchmark": "b", "model": spec.format("object+relation")},
    ...         {"id": "c", "benchmark": "b", "model": "probe rate=0.5 mix=object seed=1 [synthetic]"}]
    >>> run_names(runs)["a"], run_names(runs)["b"], run_names(runs)["c"]
    ('probe 0.3 seed 1 (mix object+attribute+relation+count)', 'probe 0.3 seed 1 (mix object+relation)', 'probe 0.5 seed 1')
    >>> llava = {"benchmark": "b", "model": "transformers:llava-hf/llava-1.5-7b-hf", "prompt": ""}
    >>> run_names([{**llava, "id": "x"}, {**llava, "id": "y", "prompt": "viscon"}, {**llava, "id": "z", "seed": 1},
    ...            {**llava, "id": "w", "generation": {"preset": "sampling"}}])
    {'x': 'llava-1.5-7b', 'y': 'llava-1.5-7b (prompt viscon)', 'z': 'llava-1.5-7b (seed 1)', 'w': 'llava-1.5-7b (preset sampling)'}
    """
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for run in runs:
        base = display_name(_field(run, "model", ""), width)
        groups.setdefault((str(_field(run, "benchmark", "")), base), {})[str(_field(run, "id"))] = run
    names: dict[tuple[str, str], str] = {}
    for (benchmark, base), members in groups.items():
        flat = {rid: run_settings(run) for rid, run in members.items()}
        usual: dict[str, str | None] = {}  # per setting, the value most runs share (None: no one value does)
        for key in dict.fromkeys(k for f in flat.values() for k in f):
            counts = Counter(repr(f.get(key, _ABSENT)) for f in flat.values()).most_common()
            if len(counts) > 1:
                usual[key] = counts[0][0] if counts[0][1] > counts[1][1] else None
        for rid, f in flat.items():
            parts = [(f"{k} {short_value(f[k], 32) if f[k] != '' else 'default'}" if k in f else f"no {k}")
                     for k, most in usual.items() if repr(f.get(k, _ABSENT)) != most]
            names[(benchmark, rid)] = f"{base} ({', '.join(parts)})" if parts else base
    # Still shared (alike in every setting a name shows, or cut alike): the run's id says which is which.
    shared = Counter((b, n) for (b, _), n in names.items())
    return {rid: f"{name} · {rid}" if shared[(b, name)] > 1 else name for (b, rid), name in names.items()}


_ABSENT = object()


# Model colours: one per model name, the same in every plot and view whatever else is in the store
# (a hash of the name, never its position in a list): 16 well-separated hues, so two models share
# one about once in 16 pairs; their names (and the full spec on hover) still tell them apart.
MODEL_COLOURS: tuple[str, ...] = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
                                  "#ff9da7", "#9c755f", "#2f4b7c", "#a05195", "#d45087", "#665191", "#008080",
                                  "#8c6d31", "#7f7f7f")
# Probe models are coloured by their injected hallucination rate on viridis (light: few, dark: many),
# so that the demo's probes never share a colour and their order reads off the colour.
_VIRIDIS = ("#440154", "#482878", "#3e4989", "#31688e", "#26828e", "#1f9e89", "#35b779", "#6ece58", "#b5de2b")


def _ramp(position: float) -> str:
    """Viridis at ``position`` in [0, 1], interpolated between the anchors above."""
    x = min(1.0, max(0.0, position)) * (len(_VIRIDIS) - 1)
    i = min(int(x), len(_VIRIDIS) - 2)
    a, b = (tuple(int(c[k:k + 2], 16) for k in (1, 3, 5)) for c in _VIRIDIS[i:i + 2])
    return "#" + "".join(f"{round(u + (v - u) * (x - i)):02x}" for u, v in zip(a, b))


def model_colour(model: Any) -> str:
    """The model's colour (hex), a function of its name alone; the "[synthetic]" mark does not count.

    >>> model_colour("llava") == model_colour("llava [synthetic]"), model_colour("llava") in MODEL_COLOURS
    (True, True)
    >>> [model_colour(f"probe rate={r} seed=0") for r in (0, 0.1, 0.5)]
    ['#b5de2b', '#24a386', '#404285']
    """
    name = str(model).replace(_SYNTHETIC_MARK, "").strip()
    probe = _PROBE.match(name)
    if probe:
        try:
            return _ramp(1.0 - min(1.0, float(probe["rate"])) ** 0.5 * 1.1)
        except ValueError:
            pass  # an unreadable rate: coloured like any other name
    digest = hashlib.blake2b(name.encode("utf-8"), digest_size=8).digest()
    return MODEL_COLOURS[int.from_bytes(digest, "big") % len(MODEL_COLOURS)]
