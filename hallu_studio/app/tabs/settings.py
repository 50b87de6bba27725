"""Settings: the endpoint, models and judge thresholds in force, with the scores each configuration produced."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, Sequence

import gradio as gr

from ...config import (CHAIR_VOCABULARIES, EMD_EMPTY_SIDE_POLICIES, EMD_GROUND_COSTS, EXTRACTORS,
                       HALFSCORE_MATCHERS, READINGS, REVISERS, TRIHE_EXTRACTIONS, TRIHE_JUDGES,
                       UNVERIFIABLE_POLICIES, Settings, load_settings, overriding_env, settings_path,
                       settings_problems, write_settings)
from ...llm.endpoint import in_force
from ..config_names import config_label, config_labels
from ..context import AppContext
from ..render import records_table_html
from ..render.palette import md
from ..toasts import Mistake, toast_mistakes


def settings_html(ctx: AppContext) -> str:
    s = ctx.settings
    rows = [
        {"setting": "LLM endpoint and model, and where each came from", "value": in_force(s)},
        {"setting": "embedding model", "value": s.scoring.embedding_model},
        {"setting": "NLI model", "value": s.scoring.nli_model or "none"},
        {"setting": "extractor / reviser / Tri-HE judge / HalFscore matcher",
         "value": f"{s.scoring.extractor} / {s.scoring.reviser} / {s.scoring.trihe_judge} / "
                  f"{s.scoring.halfscore_matcher}"},
        {"setting": "Tri-HE reference threshold", "value": s.scoring.trihe_reference_threshold},
        {"setting": "Tri-HE support threshold", "value": s.scoring.trihe_support_threshold},
        {"setting": "Tri-HE top-k", "value": s.scoring.trihe_top_k},
        {"setting": "NLI threshold", "value": s.scoring.nli_threshold},
        {"setting": "HalFscore matching threshold", "value": s.scoring.halfscore_match_threshold},
        {"setting": "EMD ground cost / empty side", "value": f"{s.scoring.emd_ground_cost} / {s.scoring.emd_empty_side}"},
        {"setting": "unverifiable claims (Tri-HE, HalFscore)", "value": s.scoring.unverifiable},
        {"setting": "readings: POPE / Reefknot / Reefknot entropy / CHAIR (studio; released: the papers' code)",
         "value": f"{s.scoring.pope_reading} / {s.scoring.reefknot_reading} / {s.decoding.entropy_reading} / "
                  f"{s.scoring.chair_reading}"},
        {"setting": "CHAIR vocabulary (a sample's own reference_vocabulary comes first)",
         "value": s.scoring.chair_vocabulary},
        {"setting": "Detect-then-Calibrate α / λ / γ",
         "value": f"{s.decoding.dtc_alpha} / {s.decoding.dtc_lambda} / {s.decoding.dtc_gamma}"},
        {"setting": "scoring key of these settings", "value": s.scoring_key()},
        {"setting": "settings file", "value": s.source or "none yet (defaults and environment)"},
    ]
    return records_table_html(rows)


def current_config_keys(ctx: AppContext) -> dict[str, str]:
    """The config key each metric's scores get under the settings in force (builds the metrics: slow)."""
    from ...metrics.registry import make_extractor, make_metric
    from ...pipelines.scoring import concepts_config_key, metric_config_key

    extractor = make_extractor(ctx.settings, ctx.store.cache)
    keys = {"concepts": concepts_config_key(ctx.settings, extractor)}
    for metric in {c["metric"] for c in ctx.store.score_configs()} - {"concepts"}:
        try:
            keys[metric] = metric_config_key(ctx.settings, make_metric(metric, ctx.settings, ctx.store.cache), extractor)
        except (ValueError, ImportError, OSError):
            continue  # a metric this installation cannot build: its rows stay unmarked
    return keys


def configs_html(ctx: AppContext, mark_current: bool) -> str:
    """The store's scoring configurations by name (the name Study uses), with their keys and counts."""
    labels = config_labels(ctx.store)
    rows = [{"configuration": config_label(labels, r["metric"], r["config_key"]), "key": r["config_key"],
             "scores": r["scores"], "last computed": str(r["computed_at"] or "")[:16]}
            for r in ctx.store.score_configs()]
    if mark_current:
        current = current_config_keys(ctx)
        for row, r in zip(rows, ctx.store.score_configs()):
            row["made under the current settings"] = "yes" if current.get(r["metric"]) == r["config_key"] else "no"
    return records_table_html(rows, empty="no scores yet")


# The settings a person edits here: (section, key, label); the form follows this order.
EDITABLE: tuple[tuple[str, str, str], ...] = (
    ("llm", "base_url", "LLM endpoint (OpenAI-compatible base URL; empty: offline methods only)"),
    ("llm", "model", "LLM model name"),
    ("scoring", "trihe_judge", "Tri-HE judge"),
    ("scoring", "trihe_extraction", "Tri-HE extraction style"),
    ("scoring", "unverifiable", "unverifiable claims (Tri-HE, HalFscore): what the reference cannot settle"),
    ("scoring", "extractor", "concept extractor"),
    ("scoring", "reviser", "Evaluate-by-Edit reviser"),
    ("scoring", "halfscore_matcher", "HalFscore matcher"),
    ("scoring", "emd_empty_side", "EMD when one side has no concept of a type"),
    ("scoring", "emd_ground_cost", "EMD ground cost (grounded; cosine: VISCON as published)"),
    ("scoring", "pope_reading", "POPE answer reading (released: POPE's evaluate.py)"),
    ("scoring", "reefknot_reading", "Reefknot yes/no and MCQ reading (released: Reefknot's code)"),
    ("decoding", "entropy_reading", "Reefknot entropy (released: raw probabilities, as Reefknot's code)"),
    ("scoring", "chair_reading", "CHAIR reading (released: CHAIR's code and synonyms)"),
    ("scoring", "chair_vocabulary", "CHAIR vocabulary where a sample names none"),
    ("scoring", "nli_model", "NLI model (for the nli judge and Reefknot; empty: none)"),
    ("scoring", "trihe_reference_threshold", "Tri-HE reference threshold (0–1)"),
    ("scoring", "trihe_support_threshold", "Tri-HE support threshold (0–1)"),
    ("scoring", "trihe_top_k", "Tri-HE top-k (≥ 1)"),
    ("scoring", "nli_threshold", "NLI threshold (0–1)"),
    ("scoring", "halfscore_match_threshold", "HalFscore matching threshold (0–1)"),
    ("scoring", "graph_grounding_threshold", "graph grounding: embedding threshold (0–1)"),
)
# The allowed values live with the settings (config.py); the form lists them in that order.
CHOICES = {"trihe_judge": list(TRIHE_JUDGES), "trihe_extraction": list(TRIHE_EXTRACTIONS),
           "unverifiable": list(UNVERIFIABLE_POLICIES), "extractor": list(EXTRACTORS),
           "reviser": list(REVISERS), "halfscore_matcher": list(HALFSCORE_MATCHERS),
           "emd_empty_side": list(EMD_EMPTY_SIDE_POLICIES), "emd_ground_cost": list(EMD_GROUND_COSTS),
           "pope_reading": list(READINGS), "reefknot_reading": list(READINGS), "entropy_reading": list(READINGS),
           "chair_reading": list(READINGS), "chair_vocabulary": list(CHAIR_VOCABULARIES)}
NUMBERS = {"trihe_reference_threshold", "trihe_support_threshold", "trihe_top_k", "nli_threshold",
           "halfscore_match_threshold", "graph_grounding_threshold"}


def form_values(settings: Settings) -> list[Any]:
    return [getattr(getattr(settings, section), key) for section, key, _ in EDITABLE]


def edited_settings(current: Settings, values: Sequence[Any]) -> tuple[Settings, dict[str, dict[str, Any]]]:
    """A copy of ``current`` with the form's values, and the changes to write (blank text: the default)."""
    candidate = copy.deepcopy(current)
    changes: dict[str, dict[str, Any]] = {}
    for (section, key, label), value in zip(EDITABLE, values):
        if isinstance(value, str):
            value = value.strip() or None
        if key in NUMBERS:
            if value is None:
                raise Mistake(f"{label}: give a number")
            value = int(value) if key == "trihe_top_k" and float(value).is_integer() else float(value)
        elif value is None and key not in ("base_url", "model", "nli_model"):
            raise Mistake(f"{label}: choose one")
        setattr(getattr(candidate, section), key, value)
        changes.setdefault(section, {})[key] = value
    return candidate, changes


def check_buildable(candidate: Settings, store: Any) -> None:
    """Build the judge the settings name: an unknown kind or a missing model is refused here, not mid-run."""
    from ...judges.factory import build_triplet_judge

    problems = settings_problems(candidate)
    if problems:
        raise Mistake("; ".join(problems))
    try:
        build_triplet_judge(candidate, cache=store.cache)
    except (ValueError, ImportError, OSError, NotImplementedError) as exc:
        raise Mistake(f"Tri-HE judge {candidate.scoring.trihe_judge!r}: {exc}") from exc


def save(ctx: AppContext, values: Sequence[Any]) -> str:
    """Validate the form, write it to the settings file, and use it for every later score."""
    candidate, changes = edited_settings(ctx.settings, values)
    check_buildable(candidate, ctx.store)
    path = settings_path(ctx.settings.source)
    write_settings(path, {f"{section}.{key}": value for section, values in changes.items()
                          for key, value in values.items()})
    fresh = load_settings(path)
    before = ctx.settings.scoring_key()
    for section in ("llm", "scoring", "decoding"):
        setattr(ctx.settings, section, getattr(fresh, section))  # the one Settings every view and job reads
    ctx.settings.source, ctx.settings.origins = fresh.source, fresh.origins
    editable = {f"{section}.{key}" for section, key, _ in EDITABLE}
    overridden = [md(f"{k} (${v})") for k, v in overriding_env().items() if k in editable]
    lines = [f"saved to {md(path)}."]
    if ctx.settings.scoring_key() != before:
        lines.append("Scores computed from now on carry the key of these settings; scores made under the "
                     "earlier settings stay in the store, apart from them.")
    if overridden:
        lines.append("Still overridden by the environment: " + md(", ".join(overridden)) + ".")
    return " ".join(lines)


def build(ctx: AppContext) -> None:
    gr.Markdown("Settings are read from `hallu-studio.toml` (or `$HALLU_STUDIO_CONFIG`) and the environment "
                "(see `docs/app.md`). Every score carries the key of the settings that produced it, so scores "
                "made under different settings never mix: changing a setting here scores anew, beside the old.")
    with gr.Accordion("edit the scoring choices and the LLM endpoint", open=True, elem_id="settings-edit"):
        fields = []
        with gr.Row():
            for section, key, label in EDITABLE:
                elem_id = f"setting-{section}-{key}"
                value = getattr(getattr(ctx.settings, section), key)
                if key in CHOICES:
                    fields.append(gr.Dropdown(CHOICES[key], value=value, label=label, elem_id=elem_id,
                                              allow_custom_value=key == "trihe_judge", min_width=220))
                elif key in NUMBERS:
                    fields.append(gr.Number(value=value, label=label, elem_id=elem_id, min_width=220,
                                            precision=0 if key == "trihe_top_k" else None))
                else:
                    fields.append(gr.Textbox(value=value or "", label=label, elem_id=elem_id, min_width=220))
        save_btn = gr.Button("validate and save", variant="primary", elem_id="settings-save")
        saved = gr.Markdown(elem_id="settings-saved")
    table = gr.HTML(elem_id="settings-table")
    gr.Markdown("**Scores in the store, by configuration**")
    configs = gr.HTML(elem_id="settings-configs")
    refresh = gr.Button("show which of these scores the current settings produce (builds the metrics: slow)",
                        size="sm", elem_id="settings-mark")
    refresh.click(toast_mistakes(1)(lambda: configs_html(ctx, True)), None, [configs], api_visibility="private")

    @toast_mistakes(3 + len(fields))
    def on_save(*values: Any) -> list[Any]:
        message = save(ctx, values)
        return [message, settings_html(ctx), configs_html(ctx, False), *form_values(ctx.settings)]

    save_btn.click(on_save, fields, [saved, table, configs, *fields], api_visibility="private")
    with gr.Accordion("all settings (JSON)", open=False):
        every = gr.JSON()
    # Filled on page load, not by callable values: Gradio makes those public, unnamed API endpoints.
    gr.on(None, lambda: (settings_html(ctx), configs_html(ctx, False), dataclasses.asdict(ctx.settings)), None,
          [table, configs, every], api_visibility="private")
