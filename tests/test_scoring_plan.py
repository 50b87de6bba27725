"""Scoring stored responses from the app: the plan (what each metric applies to, what is scored under the current
settings, why the others do not apply), the one scoring job the Run and Study views start, and what the Study view
says before and after it (pipelines.scoring_plan, app.scoring_jobs, app.tabs.study_compute)."""

import json
from pathlib import Path

import pytest

from hallu_studio.config import Settings
from hallu_studio.metrics.keys import current_config_keys
from hallu_studio.model import Score
from hallu_studio.importers.registry import ImportRequest
from hallu_studio.pipelines.importing import import_format
from hallu_studio.pipelines.scoring_plan import (MetricPlan, plan_metrics, plan_response_ids, scoring_plan,
                                                 why_not_applicable)
from hallu_studio.studies.human_sources import same_flags_notes

TEXTS = {"img-1": ("A dog on the grass.", "accurate", []),
         "img-2": ("A dog and a cat on the grass.", "hallucinated", [(12, 15)]),
         "img-3": ("A cat on a sofa.", "hallucinated", [(2, 5)])}


def _imported(store, tmp_path, rating=False):
    """An imported human study of three captions (labels and spans; 1-5 ratings only when asked)."""
    lines = [{"source": "pilot", "sample_id": sid, "reference_text": ["A dog on the grass."], "model": "m1",
              "response": text, "label": label, **({"rating": 5 if label == "accurate" else 2} if rating else {}),
              "spans": [{"start": a, "end": b, "label": "hallucinated"} for a, b in spans]}
             for sid, (text, label, spans) in TEXTS.items()]
    path = tmp_path / "pilot.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    import_format(store, "human-judgements", ImportRequest(path=Path(path)))
    (run,) = store.list_runs()
    return run["id"]


def test_the_plan_counts_what_applies_what_is_scored_and_why_not(store, tmp_path):
    run_id = _imported(store, tmp_path)
    plan = {row.metric: row for row in scoring_plan(store, Settings(), [run_id], ["chair", "pope"])}
    assert (plan["chair"].responses, plan["chair"].applicable, plan["chair"].scored, plan["chair"].to_score) == \
        (3, 3, 0, 3)
    assert plan["pope"].applicable == 0 and plan["pope"].to_score == 0
    assert plan["pope"].status() == "does not apply: pope does not score caption samples (3)"
    assert why_not_applicable(list(plan.values())) == {"chair": None, "pope": "pope does not score caption samples"}

    # A score under another configuration is not "scored": the next pass would compute the current one.
    rid = sorted(store.response_ids(run_id))[0]
    store.put_score_batch([Score(rid, "chair", "another-config", {"chair_i_item": 0.0}, {})], [None])
    assert scoring_plan(store, Settings(), [run_id], ["chair"])[0].scored == 0
    key = current_config_keys(Settings()).get("chair")
    store.put_score_batch([Score(rid, "chair", key, {"chair_i_item": 0.0}, {})], [None])
    row = scoring_plan(store, Settings(), [run_id], ["chair"])[0]
    assert (row.scored, row.to_score, row.status()) == (1, 2, "1 of 3 scored; 2 to score")
    assert rid not in row.todo and len(row.todo) == 2
    # only some of the run's responses asked about (an imported study's judged ones)
    assert scoring_plan(store, Settings(), [run_id], ["chair"], response_ids={rid})[0].to_score == 0


def test_the_job_scores_only_what_the_plan_leaves():
    plan = [MetricPlan("r", "chair", 3, 3, 1, todo=("b", "c")), MetricPlan("r", "pope", 3, 0, 0, {"no": 3}),
            MetricPlan("r", "trihe", 3, 3, 3), MetricPlan("r", "emd", 3, 3, 0, problem="no encoder", todo=("a",))]
    assert plan_metrics(plan) == ["chair"] and plan_response_ids(plan) == ["b", "c"]
    assert plan[3].to_score == 0 and plan[3].status().startswith("cannot be scored")


def test_identical_flags_are_told_and_different_ones_are_not():
    flags = {("chair", "k"): {"r1": [(0, 3)], "r2": []}, ("halfscore", "k"): {"r1": [(0, 3)], "r2": []},
             ("trihe", "k"): {"r1": [(0, 3)], "r2": [(5, 7)]}}
    (note,) = same_flags_notes(flags, [])
    assert note.startswith("CHAIR and HalFscore flag the same spans on each of the 2 responses")
    assert "object list" not in note  # no samples: no reason claimed
    flags[("halfscore", "k")]["r2"] = [(5, 6)]
    assert same_flags_notes(flags, []) == []


def test_the_study_says_what_is_not_scored_then_scores_it_with_the_run_views_job(store, tmp_path):
    from hallu_studio.app.context import AppContext
    from hallu_studio.app.scoring_jobs import submit_scoring
    from hallu_studio.app.tabs import study_compute

    _imported(store, tmp_path)
    ctx = AppContext(store)
    plan = [row for row in study_compute.not_scored_plan(ctx, "pilot") if row.metric == "chair"]
    before = study_compute.coverage_html(ctx, "pilot", plan)
    assert "Not scored yet under the current settings, responses of m1 · pilot: CHAIR (3 of 3 left)" in before
    assert "naive similarity baseline" in before
    job = submit_scoring(ctx, plan, "pilot's judged responses")
    assert job.title == "score 3 responses of pilot's judged responses with CHAIR"
    done = ctx.jobs.wait(job.id, timeout=300)
    assert done.status == "completed", done.message
    assert done.message.startswith("scored 3 (chair 3)") and (done.done, done.total) == (3, 3)
    plan = [row for row in study_compute.not_scored_plan(ctx, "pilot") if row.metric == "chair"]
    assert "Scored under the current settings: CHAIR" in study_compute.coverage_html(ctx, "pilot", plan)
    with pytest.raises(ValueError, match="nothing left to score"):
        submit_scoring(ctx, plan, "again")


def test_annotator_counts_agree_with_the_agreement_table(store, tmp_path):
    from hallu_studio.app.context import AppContext
    from hallu_studio.app.tabs import study_compute

    _imported(store, tmp_path)
    ctx = AppContext(store)
    note = study_compute.source_note(ctx, "pilot")
    assert "Imported from pilot: 1 annotator (any kind of judgement)" in note
    alpha = study_compute.agreement_html(ctx, "pilot")
    assert "pilot holds no 1–5 ratings: α compares ratings only" in alpha and "annotators who rated" not in alpha
    titles = dict(study_compute.SECTIONS)
    assert "AUROC" in titles["imported"] and "AUROC" not in titles["correlations"]


def test_chair_and_halfscore_flag_the_same_words_on_mhaldetect_and_the_study_says_why(store):
    """M-HalDetect's only reference is a COCO-80 object list: HalFscore can call hallucinated only the objects of
    COCO-80 the list lacks, which is CHAIR's rule, so their span rows coincide (true of the data, compared
    response by response), and the spans table says so."""
    from hallu_studio.pipelines.scoring import score_store
    from hallu_studio.studies.human_sources import human_agreement
    from hallu_studio.studies.probe_detection import flagged_spans
    from conftest import shared_dataset

    import_format(store, "human-judgements", ImportRequest(path=Path(shared_dataset("human", "mhaldetect"))))
    some = sorted(store.response_ids())[:40]
    score_store(store, Settings(), ["chair", "halfscore"], only=some, progress=False)
    flags = {}
    for metric in ("chair", "halfscore"):
        concepts = {r.id: s.evidence.get("concepts") for r, s in store.iter_scores("concepts", with_evidence=True)}
        flags[metric] = {r.id: flagged_spans(metric, s.values, s.evidence, r.text, concepts.get(r.id))
                         for r, s in store.iter_scores(metric, with_evidence=True)}
    assert len(flags["chair"]) == 40 and flags["chair"] == flags["halfscore"]
    assert sum(map(len, flags["chair"].values())) > 0  # they do flag something
    report = human_agreement(store, "mhaldetect", metrics=["chair", "halfscore"], baseline=False, judge_facts=False,
                             n_boot=20)
    rows = {r["metric"]: (r["flagged"], r["precision"], r["recall"]) for r in report.spans}
    assert rows["chair"] == rows["halfscore"]
    (note,) = report.span_notes
    assert note.startswith("HalFscore and CHAIR flag the same spans on each of the 40 responses")
    assert "object list complete within coco-80" in note


def test_the_run_views_job_line_follows_the_job_even_when_the_runs_box_is_emptied(store, tmp_path):
    """The Run view follows the job it started; a runs box emptied after the start (by the person, or by a page
    load's answer that came late) changes the plan shown, not whether the job's line says how it went."""
    from hallu_studio.app.context import AppContext
    from hallu_studio.app.scoring_jobs import submit_scoring
    from hallu_studio.app.tabs.run import follow_scoring

    run_id = _imported(store, tmp_path)
    ctx = AppContext(store)
    job = submit_scoring(ctx, scoring_plan(store, ctx.settings, [run_id], ["chair"]), "m1")
    assert ctx.jobs.wait(job.id, timeout=300).status == "completed"
    line, plan, still_followed = follow_scoring(ctx, job.id, [], [])
    line = line.replace("\\", "")  # Markdown escapes
    assert f"job {job.id}: **completed** 3/3" in line and "scored 3 (chair 3)" in line
    assert plan == {"__type__": "update"} and still_followed == 0  # nothing chosen: the plan is left as it was
    line, plan, _ = follow_scoring(ctx, job.id, [run_id], ["chair"])
    assert "all 3 scored" in plan
    assert follow_scoring(ctx, job.id + 99, [run_id], []) == [{"__type__": "update"}] * 3  # not this view's job
