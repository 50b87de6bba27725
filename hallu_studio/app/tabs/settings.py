"""Settings: the endpoint, models and judge thresholds in force, with the scores each configuration produced."""

from __future__ import annotations

import dataclasses

import gradio as gr

from ..context import AppContext
from ..render import records_table_html


def settings_html(ctx: AppContext) -> str:
    s = ctx.settings
    rows = [
        {"setting": "LLM endpoint", "value": ", ".join(s.llm.base_urls) or "none (offline methods)"},
        {"setting": "LLM model", "value": s.llm.model or "—"},
        {"setting": "embedding model", "value": s.scoring.embedding_model},
        {"setting": "NLI model", "value": s.scoring.nli_model or "none"},
        {"setting": "extractor / reviser / Tri-HE judge",
         "value": f"{s.scoring.extractor} / {s.scoring.reviser} / {s.scoring.trihe_judge}"},
        {"setting": "Tri-HE reference threshold", "value": s.scoring.trihe_reference_threshold},
        {"setting": "Tri-HE support threshold", "value": s.scoring.trihe_support_threshold},
        {"setting": "Tri-HE top-k", "value": s.scoring.trihe_top_k},
        {"setting": "NLI threshold", "value": s.scoring.nli_threshold},
        {"setting": "HalFscore matching threshold", "value": s.scoring.halfscore_match_threshold},
        {"setting": "Detect-then-Calibrate α / λ / γ",
         "value": f"{s.decoding.dtc_alpha} / {s.decoding.dtc_lambda} / {s.decoding.dtc_gamma}"},
        {"setting": "scoring key of these settings", "value": s.scoring_key()},
    ]
    return records_table_html(rows)


def current_config_keys(ctx: AppContext) -> dict[str, str]:
    """The config key each metric's scores get under the settings in force (builds the metrics: slow)."""
    from ...metrics.registry import make_extractor, make_metric
    from ...pipelines.scoring import concepts_config_key, metric_config_key

    extractor = make_extractor(ctx.settings, ctx.store)
    keys = {"concepts": concepts_config_key(ctx.settings, extractor)}
    for metric in {c["metric"] for c in ctx.store.score_configs()} - {"concepts"}:
        try:
            keys[metric] = metric_config_key(ctx.settings, make_metric(metric, ctx.settings, ctx.store), extractor)
        except (ValueError, ImportError, OSError):
            continue  # a metric this installation cannot build: its rows stay unmarked
    return keys


def configs_html(ctx: AppContext, mark_current: bool) -> str:
    rows = ctx.store.score_configs()
    if mark_current:
        current = current_config_keys(ctx)
        for r in rows:
            r["under these settings"] = "yes" if current.get(r["metric"]) == r["config_key"] else "no"
    return records_table_html(rows, empty="no scores yet")


def build(ctx: AppContext) -> None:
    gr.Markdown("Settings come from `hallu-studio.toml` and the environment (see `docs/app.md`); "
                "a score carries the key of the settings that produced it, so scores under different "
                "settings never mix. Change the file and restart to score under new settings.")
    gr.HTML(settings_html(ctx), elem_id="settings-table")
    gr.Markdown("**Scores in the store, by configuration**")
    configs = gr.HTML(lambda: configs_html(ctx, False), elem_id="settings-configs")
    refresh = gr.Button("mark the configurations these settings produce (builds the metrics)", size="sm",
                        elem_id="settings-mark")
    refresh.click(lambda: configs_html(ctx, True), None, [configs], api_visibility="private")
    with gr.Accordion("all settings (JSON)", open=False):
        gr.JSON(dataclasses.asdict(ctx.settings))
