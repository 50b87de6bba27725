"""Settings: every setting in force with its help and the metrics whose scores it keys, the scores each
configuration produced, and a form for the scoring choices (labels, help and choices are config.py's)."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, Sequence

import gradio as gr

from ...config import Settings, load_settings, overriding_env, settings_path
from ...config_edit import SettingInfo, setting_infos, settings_problems, write_settings
from ...llm.endpoint import in_force
from ...metrics.keys import current_config_keys
from ...metrics.registry import EXTRACTOR_SETTINGS, metric_names, metric_spec, metrics_depending_on
from ...resources import lexical_resources
from ..context import AppContext
from ..render import records_table_html
from ..render.palette import md
from ..toasts import Mistake, toast_mistakes


def _shapes(name: str) -> str:
    """The metrics whose scores a setting keys, by display name ("" for none)."""
    metrics = metrics_depending_on(name)
    if name in EXTRACTOR_SETTINGS:
        return "every metric (the concept extractor's)"
    return ", ".join(metric_spec(m).display_name for m in metrics)


def settings_html(ctx: AppContext) -> str:
    """Every setting in force: its value, where it came from, the metrics whose scores it keys, what it does."""
    rows = [{"setting": "LLM endpoint and model in force", "value": in_force(ctx.settings), "from": "",
             "keys the scores of": "", "what it does": ""}]
    # The embedding model's row below says what it keys; WordNet and spaCy's model key every score.
    rows += [{"setting": f"{name} in force", "value": what, "from": "",
              "keys the scores of": "" if name == "embedding model" else "every metric",
              "what it does": "a lexical resource the scores read (hallu-studio info lists them too)"}
             for name, what in lexical_resources(ctx.settings)]
    for info in setting_infos(ctx.settings):
        rows.append({"setting": info.name, "value": "unset" if info.value is None else info.value,
                     "from": info.origin if info.source != "default" else "default",
                     "keys the scores of": _shapes(info.name), "what it does": info.help})
    rows.append({"setting": "settings file", "value": ctx.settings.source or "none yet (defaults and environment)",
                 "from": "", "keys the scores of": "", "what it does": ""})
    return records_table_html(rows)


def configs_html(ctx: AppContext) -> str:
    """The store's scoring configurations by name (the name Study uses), with their keys and counts, and whether
    the current settings produce each (``metrics.keys``)."""
    in_force = ctx.in_force()
    rows = [{"configuration": in_force.label(r["metric"], r["config_key"]), "key": r["config_key"],
             "scores": r["scores"], "last computed": str(r["computed_at"] or "")[:16],
             "made under the current settings": "yes" if in_force.shown[r["metric"]].current == r["config_key"]
             else "no", "shown by the views": "yes" if in_force.key(r["metric"]) == r["config_key"] else "no"}
            for r in ctx.store.score_configs()]
    return records_table_html(rows, empty="no scores yet")


# The settings a person edits here, in the form's order; their help, kind and choices are config.py's.
EDITABLE: tuple[str, ...] = (
    "llm.base_url", "llm.model", "scoring.trihe_judge", "scoring.vlm_judge_model", "scoring.vlm_judge_template",
    "scoring.vlm_judge_unsettled", "scoring.vlm_judge_concurrency", "scoring.trihe_extraction", "scoring.unverifiable",
    "scoring.unverifiable_weight", "scoring.extractor", "scoring.reviser", "scoring.halfscore_matcher", "scoring.emd_empty_side",
    "scoring.emd_ground_cost", "scoring.pope_reading", "scoring.accuracy_reading", "scoring.reefknot_reading",
    "decoding.entropy_reading",
    "scoring.chair_reading", "scoring.chair_vocabulary", "scoring.chair_ground_truth", "scoring.nli_model",
    "scoring.trihe_reference_threshold",
    "scoring.trihe_support_threshold", "scoring.trihe_top_k", "scoring.nli_threshold",
    "scoring.halfscore_match_threshold", "scoring.graph_grounding_threshold",
    "scoring.workers",  # keys no score: how many processes the Run view's and first start's scoring use
)


def editable_infos(settings: Settings) -> list[SettingInfo]:
    by_name = {info.name: info for info in setting_infos(settings)}
    return [by_name[name] for name in EDITABLE]


def form_label(info: SettingInfo) -> str:
    """A form field's label: the setting, and the metrics whose scores it keys ("scoring.unverifiable · Tri-HE,
    HalFscore")."""
    shapes = _shapes(info.name)
    return f"{info.name} · {shapes}" if shapes else info.name


def _part(name: str) -> tuple[str, str]:
    section, _, key = name.rpartition(".")
    return section, key


def form_values(settings: Settings) -> list[Any]:
    return [getattr(getattr(settings, section), key) for section, key in map(_part, EDITABLE)]


def edited_settings(current: Settings, values: Sequence[Any]) -> tuple[Settings, dict[str, Any]]:
    """A copy of ``current`` with the form's values, and the changes to write (blank text: unset)."""
    candidate = copy.deepcopy(current)
    changes: dict[str, Any] = {}
    for info, value in zip(editable_infos(current), values):
        section, key = _part(info.name)
        if isinstance(value, str):
            value = value.strip() or None
        if info.kind in ("integer", "number"):
            if value is None:
                raise Mistake(f"{info.name}: give a number")
            value = int(value) if info.kind == "integer" and float(value).is_integer() else float(value)
        elif value is None and not info.optional:
            raise Mistake(f"{info.name}: choose one")
        setattr(getattr(candidate, section), key, value)
        changes[info.name] = value
    return candidate, changes


def check_buildable(candidate: Settings, store: Any) -> None:
    """Build the judge the settings name: an unknown kind or a missing model is refused here, not mid-run."""
    from ...components import Components

    problems = settings_problems(candidate)
    if problems:
        raise Mistake("; ".join(problems))
    try:
        Components(candidate, store.cache).triplet_judge()
    except (ValueError, ImportError, OSError, NotImplementedError) as exc:
        raise Mistake(f"Tri-HE judge {candidate.scoring.trihe_judge!r}: {exc}") from exc


def save(ctx: AppContext, values: Sequence[Any]) -> str:
    """Validate the form, write it to the settings file, and use it for every later score; say which metrics the
    change rescores (those whose configuration, hence config key, it changed)."""
    candidate, changes = edited_settings(ctx.settings, values)
    check_buildable(candidate, ctx.store)
    path = settings_path(ctx.settings.source)
    write_settings(path, changes)
    fresh = load_settings(path)
    before = current_config_keys(ctx.settings)
    for section in ("llm", "scoring", "decoding"):
        setattr(ctx.settings, section, getattr(fresh, section))  # the one Settings every view and job reads
    ctx.settings.source, ctx.settings.origins = fresh.source, fresh.origins
    after = current_config_keys(ctx.settings)
    overridden = [md(f"{k} (${v})") for k, v in overriding_env().items() if k in EDITABLE]
    lines = [f"saved to {md(path)}."]
    changed = [m for m in metric_names() if before.get(m) != after.get(m)]
    if changed:
        names = ", ".join(metric_spec(m).display_name for m in changed)
        lines.append(f"The scores of {md(names)} now carry a new configuration: the next scoring pass computes "
                     "them anew, beside the earlier ones, which stay in the store; every other metric keeps its "
                     "scores.")
    if overridden:
        lines.append("Still overridden by the environment: " + md(", ".join(overridden)) + ".")
    return " ".join(lines)


def build(ctx: AppContext) -> None:
    gr.Markdown("Settings are read from `hallu-studio.toml` (or `$HALLU_STUDIO_CONFIG`) and the environment "
                "(see `docs/app.md`). A score carries the key of its metric's own configuration and the concept "
                "extractor's, so scores made under different settings never mix: changing a setting here scores "
                "the metrics it shapes anew, beside the old, and leaves the others' scores in force.")
    with gr.Accordion("edit the scoring choices and the LLM endpoint", open=True, elem_id="settings-edit"):
        fields = []
        with gr.Row():
            for info in editable_infos(ctx.settings):
                section, key = _part(info.name)
                elem_id = f"setting-{section}-{key}"
                label = form_label(info)
                if info.choices:
                    fields.append(gr.Dropdown(list(info.choices), value=info.value, label=label, info=info.help,
                                              elem_id=elem_id, min_width=260))
                elif info.kind in ("integer", "number"):
                    fields.append(gr.Number(value=info.value, label=label, info=info.help, elem_id=elem_id,
                                            min_width=260, precision=0 if info.kind == "integer" else None))
                else:
                    fields.append(gr.Textbox(value=info.value or "", label=label, info=info.help, elem_id=elem_id,
                                             min_width=260))
        save_btn = gr.Button("validate and save", variant="primary", elem_id="settings-save")
        saved = gr.Markdown(elem_id="settings-saved")
    table = gr.HTML(elem_id="settings-table")
    gr.Markdown("**Scores in the store, by configuration**")
    configs = gr.HTML(elem_id="settings-configs")

    @toast_mistakes(3 + len(fields))
    def on_save(*values: Any) -> list[Any]:
        message = save(ctx, values)
        return [message, settings_html(ctx), configs_html(ctx), *form_values(ctx.settings)]

    save_btn.click(on_save, fields, [saved, table, configs, *fields], api_visibility="private")
    with gr.Accordion("all settings (JSON)", open=False):
        every = gr.JSON()
    # Filled on page load, not by callable values: Gradio makes those public, unnamed API endpoints.
    gr.on(None, lambda: (settings_html(ctx), configs_html(ctx), dataclasses.asdict(ctx.settings)), None,
          [table, configs, every], api_visibility="private")
