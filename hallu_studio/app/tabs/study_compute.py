"""The Study tab's tables and scatter plot, from ``hallu_studio.studies`` (no statistics computed here).

Every table is of one source of human judgements (this studio's annotators, ``"app"``, or an outside
study imported under its name) and, for this studio's ratings, of all of them or of one study.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import gradio as gr
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from ... import annotation
from ...model import APP_SOURCE
from ...studies import collect
from ...studies.in_force import config_label
from ..context import AppContext
from ..render import records_table_html
from ..scoring_jobs import plan_for_runs, plan_table_html, run_labels
from ...pipelines.scoring_plan import MetricPlan, plan_metrics, plan_response_ids
from ...presentation import UNDEFINED, number, short_model_label, with_interval
from ..render.palette import esc
from ..render.tables import cell_text

SECTIONS: tuple[tuple[str, str], ...] = (
    ("studies", "studies: their design and progress (ratings made of those needed, agreement so far)"),
    ("imported", "the imported study against the scores: what is scored, AUROC and AP of its labels, rank "
                 "correlations, flagged spans against its marked spans, facts, group means"),
    ("correlations", "metric vs 1–5 human ratings (Pearson, Spearman, Kendall with bootstrap CIs by image)"),
    ("agreement", "agreement between annotators on 1–5 ratings (Krippendorff's alpha)"),
    ("judges", "judge accuracy and confusion against human corrections"),
    ("probes", "detection rate of each metric on the probes' injected hallucinations"),
    ("preferences", "pairwise A/B preferences with Bradley–Terry strengths"),
)

CORRELATION_NOTE = ("not defined: the metric's values (or the ratings) do not vary across these responses, "
                    "or too few responses are rated")
KAPPA_NOTE = "not defined: the judge or the people used only one verdict, so chance agreement is total"
ALPHA_NOTE = "not defined: fewer than two annotators rated the same response, or every rating is the same"
WARNING = "⚠"
# Kinds of human judgement the tables below read; an imported source's other kinds are listed as not shown here.
SHOWN_KINDS = {"rating": "correlations and agreement", "correction": "judge accuracy",
               "preference": "Bradley–Terry strengths", "label": "AUROC and AP of the labels",
               "span_label": "flagged spans against the marked ones", "fact_label": "judges on the labelled facts",
               "comparison": "rank correlation with the side-by-side ratings"}


def source_choices(ctx: AppContext) -> list[tuple[str, str]]:
    """Where the judgements come from: this studio's annotators first, then each imported source."""
    out = [("this studio's annotators", APP_SOURCE)]
    for s in ctx.store.event_sources():
        if s["source"] != APP_SOURCE:
            out.append((f"imported: {s['source']} ({s['events']:,} judgements)", s["source"]))
    return out


def study_choices(ctx: AppContext) -> list[tuple[str, str]]:
    return [("every rating of this studio's", "")] + [(s["id"], s["id"]) for s in ctx.store.list_studies()]


def _interval(value: float, low: float, high: float, images: int) -> str:
    """"0.412 [0.20, 0.58]": the estimate with its 95% bootstrap interval by image; marked ⚠ when it rests on fewer
    than ``MIN_IMAGES_FOR_INTERVAL`` images, and left out (said so) when on one image."""
    if isinstance(value, float) and math.isnan(value):
        return UNDEFINED
    if images < 2:
        return f"{number(value)} (no interval: one image)"
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        return cell_text(value)
    text = f"{number(value)} [{number(low)}, {number(high)}]"
    return f"{text} {WARNING}" if images < collect.MIN_IMAGES_FOR_INTERVAL else text


def _few_images_note(images: list[int]) -> str:
    few = [n for n in images if n < collect.MIN_IMAGES_FOR_INTERVAL]
    if not few:
        return ""
    return (f'<p class="hs-warn">{WARNING} {len(few)} of these rows rest on fewer than '
            f'{collect.MIN_IMAGES_FOR_INTERVAL} images (as few as {min(few)}): their intervals, resampled by image, '
            f'say little; rate responses of more images.</p>')


def _direction(metric: str, key: str | None = None) -> str:
    """"share of claims hallucinated (↑ = more hallucination)": what a row's number is, and which way is worse."""
    name = f"{metric} {key}" if key and key != "default" else collect.item_meaning(metric)
    note = collect.direction_note(metric, key)
    return f"{name} ({note})" if note else name


def _expected_sign(worse: bool | None, against: str) -> str:
    if worse is None:
        return "unknown"
    # people rate 5 = no hallucination; the probes' injected share grows with hallucination
    negative = worse if against == "people" else not worse
    return "negative" if negative else "positive"


def _left_out_text(reasons: dict[str, int]) -> str:
    return "; ".join(f"{n} {why}" for why, n in reasons.items()) or "none"


def correlations_html(ctx: AppContext, labels: dict[tuple[str, str], str], source: str = APP_SOURCE,
                      study: str | None = None) -> str:
    rows, images = [], []
    table = collect.correlation_table(ctx.store, source=source, study=study)
    for r in table:
        images.append(int(r["clusters"]))
        rows.append({"metric": r["metric"], "per-response number": _direction(r["metric"], r["value"]),
                     "agrees with people when": _expected_sign(r.get("higher_is_worse"), "people"),
                     "configuration": config_label(labels, r["metric"], r["config_key"]),
                     "responses used (of rated)": f"{int(r['n'])} of {int(r['rated'])}",
                     "left out, and why": _left_out_text(r.get("left_out") or {}),
                     "images": int(r["clusters"]),
                     **{name.capitalize() + " (95% CI)": _interval(r[name], r[f"{name}_low"], r[f"{name}_high"],
                                                                    int(r["clusters"]))
                        for name in ("pearson", "spearman", "kendall")}})
    whose = "these ratings" if source == APP_SOURCE else f"the ratings of {source}"
    empty = ("no human ratings yet (rate responses in the Annotate view)" if source == APP_SOURCE
             else f"no ratings from {source}")
    if study:
        empty = f"no ratings in study {study} yet"
    note = ('<p class="hs-note">Human ratings run 1–5, higher = less hallucination: a metric where higher is '
            'worse agrees with people when it correlates negatively (the column "agrees with people when" says '
            f'which sign agrees, row by row). {UNDEFINED}: {esc(CORRELATION_NOTE)}. Each row uses the responses of '
            f'{esc(whose)} that the metric scored with a number; the others are counted in "left out".</p>'
            if rows else "")
    return records_table_html(rows, empty=empty) + _few_images_note(images) + note


def agreement_html(ctx: AppContext, source: str = APP_SOURCE, study: str | None = None) -> str:
    a = collect.annotator_agreement(ctx.store, source=source, study=study)
    found = next((s for s in ctx.store.event_sources() if s["source"] == source), None)
    if source != APP_SOURCE and found is not None and not found["kinds"].get("rating"):
        # the source's annotators judged in other ways: α has no rating to compare, and says so instead of "0"
        return (f'<p class="hs-note">{esc(source)} holds no 1–5 ratings: α compares ratings only. Its '
                f'{_annotators(found["annotators"])} gave {esc(_kinds_text(found["kinds"]))} (read in the section '
                'above).</p>')
    row = {"ratings of": study and f"study {study}" or (source if source != APP_SOURCE else "this studio"),
           "Krippendorff's α": a.get("alpha"), "level": a.get("level"), "annotators who rated": a.get("annotators"),
           "responses rated": a.get("items"), "rated by two or more": a.get("items_rated_twice")}
    alpha = a.get("alpha")
    why = ""
    if isinstance(alpha, float) and math.isnan(alpha):
        why = f'<p class="hs-note">α is {UNDEFINED}: {esc(ALPHA_NOTE)}.</p>'
    return records_table_html([row], undefined_note=ALPHA_NOTE) + why


def _annotators(n: int) -> str:
    return f"{n:,} annotator{'s' if n != 1 else ''}"


def _kinds_text(kinds: dict[str, int]) -> str:
    """"363 label, 759 span_label": what a source's judgements are, kind by kind."""
    return ", ".join(f"{n:,} {kind}" for kind, n in kinds.items())


def studies_html(ctx: AppContext) -> str:
    """One row per study: its design, how far its ratings are, and its agreement so far."""
    rows = []
    models = {r["id"]: short_model_label(r["model"], r.get("synthetic"))
              for r in ctx.store.list_runs()}
    for s in ctx.store.list_studies():
        d = s["definition"]
        prog = annotation.study_progress(ctx.store, s["id"])
        a = collect.annotator_agreement(ctx.store, study=s["id"])
        rows.append({"study": s["id"], "mode": prog["mode"],
                     "models": ", ".join(models.get(r, r) for r in d.get("runs") or []),
                     "sample": d.get("drawn") or f"{int(prog['items'])} responses",
                     "seed": d.get("seed"), "ratings per response": prog["ratings_per_item"],
                     "annotators": ", ".join(d.get("annotators") or []) or "anyone",
                     "ratings made": f"{int(prog['done'])} of {int(prog['needed'])} ({int(prog['complete'])} of "
                                     f"{int(prog['items'])} responses complete)",
                     "by annotator": prog["annotators"] or "none yet",
                     "Krippendorff's α": a["alpha"], "pairable responses": a["items_rated_twice"]})
    return records_table_html(rows, empty="no study yet: design one below", undefined_note=ALPHA_NOTE)


def judges_html(ctx: AppContext, labels: dict[tuple[str, str], str], source: str = APP_SOURCE) -> str:
    table = collect.judge_accuracy_table(ctx.store, source)
    rows, confusions = [], []
    corrected = collect.corrected_metrics()
    for name, acc in table.items():
        judge, _, key = name.partition("@")
        metric = next((m for m in corrected if (m, key) in labels), corrected[0] if len(corrected) == 1 else None)
        title = f"{judge} ({config_label(labels, metric, key)})" if key and metric else judge
        rows.append({"judge": title, "triplets corrected": acc.n, "accuracy": acc.accuracy,
                     "binary accuracy": acc.binary_accuracy, "Cohen's κ": acc.kappa})
        used = [i for i, label in enumerate(acc.labels)
                if acc.confusion and (any(acc.confusion[i]) or any(row[i] for row in acc.confusion))]
        conf = [{"human ↓ · judge →": acc.labels[i], **{acc.labels[k]: acc.confusion[i][k] for k in used}}
                for i in used]
        confusions.append(f"<p><b>{esc(title)}</b>: confusion (rows: the people's verdict; verdicts no one "
                          "used are left out)</p>" + records_table_html(conf, empty="no triplet in common"))
    return (records_table_html(rows, empty="no human triplet corrections yet", undefined_note=KAPPA_NOTE)
            + "".join(confusions))


def probes_html(ctx: AppContext, labels: dict[tuple[str, str], str]) -> str:
    rows = []
    for r in collect.probe_detection_table(ctx.store):
        worse = collect.higher_is_worse(r.metric)
        sign = _expected_sign(worse, "probes")
        rho = r.spearman_with_injected_share
        agrees = "" if isinstance(rho, float) and math.isnan(rho) else (
            " (agrees)" if (rho < 0) == (sign == "negative") and rho != 0 else " (disagrees)")
        row = {"metric": r.metric, "per-response number": _direction(r.metric)}
        if r.config_key:
            row["configuration"] = config_label(labels, r.metric, r.config_key)
        row.update({"responses": r.responses, "injected": r.injected, "detected": r.detected,
                    "detection rate": r.detection_rate, "stated (clean)": r.stated, "false alarms": r.false_alarms,
                    "false-alarm rate": r.false_alarm_rate,
                    "Spearman vs injected share": f"{cell_text(rho)}{agrees}",
                    "agrees with the probes when": sign,
                    "by type (injected / detected)": r.by_type})
        rows.append(row)
    note = ('<p class="hs-note">Spearman of each response\'s number with the share of its concepts the probe '
            'injected: positive agrees for a metric where higher is worse, negative for one where higher is '
            'better (HalFscore F).</p>' if rows else "")
    return records_table_html(rows, empty="no probe runs with injected hallucinations") + note


def preferences_html(ctx: AppContext, source: str = APP_SOURCE) -> str:
    rows = []
    for aspect in ("overall", "precision", "recall"):
        for model, s in sorted(collect.preference_strengths(ctx.store, aspect, source).items(),
                               key=lambda kv: -kv[1].strength):
            rows.append({"aspect": aspect, "model": model, "Bradley–Terry strength (↑ = preferred)": s.strength,
                         "wins": s.wins, "losses": s.losses, "comparisons": s.comparisons})
    return records_table_html(rows, empty="no A/B preferences yet (use the `prefer` API or Inspect's compare)")


def source_note(ctx: AppContext, source: str) -> str:
    """For an imported source: what it holds, and which of its kinds these tables read."""
    found = next((s for s in ctx.store.event_sources() if s["source"] == source), None)
    if source == APP_SOURCE:
        return ('<p class="hs-note">Judgements of this studio\'s annotators (made in the Annotate view or through '
                'its API); imported human judgements are never mixed in: pick their source above.</p>')
    if found is None:
        return f'<p class="hs-note">no judgements from {esc(source)} in the store</p>'
    kinds = found["kinds"]
    shown = [f"{k} ({n:,}) → {SHOWN_KINDS[k]}" for k, n in kinds.items() if k in SHOWN_KINDS]
    other = [f"{k} ({n:,})" for k, n in kinds.items() if k not in SHOWN_KINDS]
    text = f"Imported from {esc(source)}: {_annotators(found['annotators'])} (any kind of judgement). "
    text += ("Shown here: " + esc("; ".join(shown)) + ". ") if shown else ""
    text += ("Kinds no table of this view reads yet: " + esc(", ".join(other)) + ".") if other else ""
    return f'<p class="hs-note">{text}</p>'


def scatter_figure(ctx: AppContext, source: str = APP_SOURCE, study: str | None = None) -> Figure:
    """Each metric's per-response number against the mean human rating, one panel per metric (three a row)."""
    human = collect.mean_human_ratings(ctx.store, source, study)
    points: dict[str, list[tuple[float, float]]] = defaultdict(list)
    if human:
        for row in ctx.store.score_stat_rows():
            if row["response_id"] in human and row["metric"] != "concepts":
                v = collect.item_value(row["metric"], row["values"])
                if v is not None:
                    points[row["metric"]].append((v, human[row["response_id"]]))
    metrics = sorted(points)
    columns = min(3, max(1, len(metrics)))
    n_rows = max(1, math.ceil(len(metrics) / columns))
    fig, axes = plt.subplots(n_rows, columns, figsize=(4.6 * columns, 3.6 * n_rows), squeeze=False)
    flat = [ax for row in axes for ax in row]
    if not metrics:
        flat[0].text(0.5, 0.5, "no human ratings yet", ha="center", va="center", color="#777")
        flat[0].set_axis_off()
    for ax, metric in zip(flat, metrics):
        xs, ys = zip(*points[metric])
        ax.scatter(xs, ys, s=14, alpha=0.6)
        ax.set_title(f"{metric} (n = {len(xs)})")
        ax.set_xlabel(_direction(metric))
        ax.set_ylabel("mean human rating (5 = none)")
        ax.set_yticks([1, 2, 3, 4, 5])
    for ax in flat[len(metrics) or 1:]:
        ax.set_axis_off()
    fig.tight_layout()
    return fig


def _ci_text(row: dict[str, Any], name: str) -> str:
    """ "0.64 [0.58, 0.69]" from a row's ``name``, ``name_low`` and ``name_high``."""
    return with_interval(row.get(name), row.get(name + "_low"), row.get(name + "_high"))


def imported_html(ctx: AppContext, source: str) -> str:
    """An imported outside study's tables (``studies.human_sources.human_agreement``): how well each score finds
    what its people called hallucinated, ranks as they rated, points at the spans they marked and settles the
    facts they labelled, with CHAIR and the naive similarity beside every metric."""
    from ...studies.human_sources import human_agreement
    from ..overview_cache import score_fingerprint

    # Judging the labelled facts reads and judges each one: kept while the scores and the source's events stay.
    events = next((s["events"] for s in ctx.store.event_sources() if s["source"] == source), 0)
    report = ctx.leaderboards.get(("imported study", source), (score_fingerprint(ctx.store), events),
                                  lambda: human_agreement(ctx.store, source, settings=ctx.settings))
    labels = ctx.in_force().labels
    parts = [f'<p class="hs-note">{report.judged:,} responses judged by {esc(source)}. Every score reads '
             '"higher = more hallucination"; 95% intervals resample images. CHAIR and the naive similarity '
             '(1 − MiniLM cosine to the references) are baselines: a metric that does not beat them measures '
             'little here.</p>']

    def config(r: dict[str, Any]) -> str:
        return config_label(labels, r["metric"], r["config_key"]) if r.get("metric") in collect_metrics() else \
            r["config_key"]

    if report.binary:
        parts.append(f"<h4>Finding what people called hallucinated ({esc(report.binary[0]['human'])}): AUROC "
                     "(0.5 = chance) and AP (chance = the prevalence)</h4>")
        parts.append(records_table_html([{"score": r["score"], "configuration": config(r), "n": r["n"],
                                          "AUROC (95% CI)": _ci_text(r, "auroc"), "AP (95% CI)": _ci_text(r, "ap"),
                                          "prevalence": number(r["prevalence"])} for r in report.binary]))
    for target in dict.fromkeys(r["human"] for r in report.rank):
        parts.append(f"<h4>Rank correlation with {esc(target)} (higher = less hallucination: a score that agrees "
                     "correlates negatively)</h4>")
        parts.append(records_table_html([{"score": r["score"], "configuration": config(r), "n": r["n"],
                                          "Spearman (95% CI)": _ci_text(r, "spearman"),
                                          "Kendall (95% CI)": _ci_text(r, "kendall")}
                                         for r in report.rank if r["human"] == target]))
    if report.spans:
        parts.append("<h4>Flagged spans against the spans people marked (precision: flagged spans overlapping a "
                     "marked one; recall: marked spans a flag overlaps)</h4>")
        parts.append(records_table_html([{"metric": r["metric"], "configuration": config(r),
                                          "flagged": r["flagged"], "precision (95% CI)": _ci_text(r, "precision"),
                                          "marked": r["marked"], "recall (95% CI)": _ci_text(r, "recall")}
                                         for r in report.spans]))
        parts.extend(f'<p class="hs-note">{esc(n)}</p>' for n in report.span_notes)
    if report.facts:
        parts.append("<h4>Judges on the facts people labelled (balanced accuracy on the facts each settles; the "
                     "others count in coverage, not as errors)</h4>")
        parts.append(records_table_html([{"judge": r["metric"] if r["judge"] == r["metric"] else
                                          f"{r['metric']} ({r['judge']})", "facts": r["facts"],
                                          "settled": r["settled"], "coverage (95% CI)": _ci_text(r, "coverage"),
                                          "balanced accuracy (95% CI)": _ci_text(r, "balanced_accuracy")}
                                         for r in report.facts]))
    if report.groups:
        parts.append("<h4>Mean score by group</h4>")
        parts.append(records_table_html([{"score": r["score"], "configuration": config(r), "split": r["split"],
                                          "group": r["group"], "n": r["n"], "mean (95% CI)": _ci_text(r, "mean")}
                                         for r in report.groups]))
    if report.notes:
        parts.append("<ul class='hs-note'>" + "".join(f"<li>{esc(n)}</li>" for n in report.notes) + "</ul>")
    return "".join(parts)


def collect_metrics() -> frozenset[str]:
    """The metrics whose configurations ``config_labels`` names (the naive baseline is none of them)."""
    from ...metrics.registry import METRIC_NAMES

    return frozenset(METRIC_NAMES)


def not_scored_plan(ctx: AppContext, source: str) -> list[MetricPlan]:
    """What scoring the responses imported ``source`` judged would do, with the metrics its tables read."""
    from ...studies.human_sources import metrics_read, responses_read

    ids = responses_read(ctx.store, source)
    runs = sorted({r.run_id for r in ctx.store.get_responses(sorted(ids)).values()})
    return plan_for_runs(ctx, runs, metrics_read(), ids)


def coverage_html(ctx: AppContext, source: str, plan: list[MetricPlan]) -> str:
    """What of the source's responses is not scored yet (by which metric, on which imported set), or that all is."""
    from ...metrics.registry import metric_spec

    left = [row for row in plan if row.to_score]
    labels = run_labels(ctx, counts=False)
    if not left:
        scored = sorted({metric_spec(r.metric).display_name for r in plan if r.applicable and not r.problem})
        return (f'<p class="hs-note">Scored under the current settings: {esc(", ".join(scored) or "no metric")} on '
                f'every response of {esc(source)} they apply to.</p>')
    by_run: dict[str, list[str]] = defaultdict(list)
    for r in left:
        by_run[r.run_id].append(f"{metric_spec(r.metric).display_name} ({r.to_score:,} of {r.applicable:,} left)")
    items = "; ".join(f"{labels.get(run, run)}: {', '.join(names)}" for run, names in by_run.items())
    return (f'<p class="hs-warn">Not scored yet under the current settings, responses of {esc(items)}. Until they '
            'are, the tables below hold only what is scored (the naive similarity baseline needs no scoring). The '
            'button below scores them (a job in the Run view\'s queue; these tables recompute when it ends).</p>'
            + plan_table_html(plan, None, labels))


def score_button(plan: list[MetricPlan]) -> dict[str, Any]:
    """The Study view's "score them" button: what it would score, hidden when nothing is left."""
    from ...metrics.registry import metric_spec

    n = len(plan_response_ids(plan))
    names = ", ".join(metric_spec(m).display_name for m in plan_metrics(plan))
    return gr.update(value=f"score {n:,} responses with {names}", visible=bool(n), interactive=True)


def all_tables_html(ctx: AppContext, source: str = APP_SOURCE, study: str | None = None,
                    coverage: bool = True) -> dict[str, str]:
    """Every section's HTML; ``coverage``: the imported section begins with what the source holds and what of it is
    not scored yet (the view shows those apart, above its button)."""
    labels = ctx.in_force().labels
    imported = ""
    if source != APP_SOURCE:
        imported = (source_note(ctx, source) + coverage_html(ctx, source, not_scored_plan(ctx, source))
                    if coverage else "") + imported_html(ctx, source)
    return {
        "studies": studies_html(ctx),
        "imported": imported,
        "correlations": (source_note(ctx, source) if source == APP_SOURCE else "")
                        + correlations_html(ctx, labels, source, study),
        "agreement": agreement_html(ctx, source, study),
        "judges": judges_html(ctx, labels, source),
        "probes": probes_html(ctx, labels),
        "preferences": preferences_html(ctx, source),
    }


def compute(ctx: AppContext, source: str | None = APP_SOURCE, study: str | None = None) -> list[Any]:
    """Every section's table, the scatter plot, then the imported section's visibility, what of it is not scored
    yet and its "score them" button."""
    source = source or APP_SOURCE
    study = (study or None) if source == APP_SOURCE else None
    plan = not_scored_plan(ctx, source) if source != APP_SOURCE else []
    tables = all_tables_html(ctx, source, study, coverage=False)
    fig = scatter_figure(ctx, source, study)
    plt.close(fig)
    imported = source != APP_SOURCE
    return [tables[key] for key, _ in SECTIONS] + [fig, gr.update(visible=imported),
                                                   source_note(ctx, source) + coverage_html(ctx, source, plan)
                                                   if imported else "",
                                                   score_button(plan)]
