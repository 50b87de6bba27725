"""``study`` and ``study --analysis`` as table, JSONL and CSV; probe detection per metric and type with CIs."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hallu_studio.cli import main
from hallu_studio.model import Benchmark, Response, Run, Sample, Score
from hallu_studio.store import Store
from hallu_studio.studies.collect import probe_detection_records
from hallu_studio.studies.probe_detection import DETECTION_COLUMNS, ProbeItem, detection_records

REPO = Path(__file__).resolve().parent.parent

# "dog near red cat": an injected object (dog), relation (near) and attribute (red); a clean object (cat).
TEXT = "dog near red cat"
INJECTED = [{"type": "object", "concept": ["dog"], "span": [0, 3]},
            {"type": "relation", "concept": ["dog", "near", "cat"], "span": [4, 8]},
            {"type": "attribute", "concept": ["cat", "red"], "span": [9, 12]}]
STATED = [{"type": "object", "concept": ["cat"], "span": [13, 16]}]


def _item(hallucinated, image):
    return ProbeItem(TEXT, INJECTED, STATED, {"chair_i_item": float(len(hallucinated))},
                     {"hallucinated": hallucinated}, float(len(hallucinated)), None, image)


def test_detection_records_count_each_type_and_repeat_the_metrics_false_alarms():
    # Six responses on three images: CHAIR names the dog in four, the (clean) cat in one.
    items = [_item(["dog"], "i0"), _item(["dog"], "i0"), _item(["dog", "cat"], "i1"), _item([], "i1"),
             _item(["dog"], "i2"), _item([], "i2")]
    rows = {r["type"]: r for r in detection_records("chair", items, "k", ("object", "attribute", "relation", "count"),
                                                    n_boot=200)}
    assert list(rows) == ["all", "object", "attribute", "relation", "count"]
    assert all(list(r) == DETECTION_COLUMNS for r in rows.values())
    assert (rows["object"]["injected"], rows["object"]["detected"]) == (6, 4)
    assert rows["object"]["detection_rate"] == pytest.approx(4 / 6)
    assert (rows["relation"]["detected"], rows["attribute"]["detected"]) == (0, 0)
    assert (rows["all"]["injected"], rows["all"]["detected"]) == (18, 4)
    assert rows["count"]["injected"] == 0 and math.isnan(rows["count"]["detection_rate"])
    # False alarms have no type: every row says the metric's 1 of 6.
    assert {(r["false_alarms"], r["stated"], r["false_alarm_rate"]) for r in rows.values()} == {(1, 6, 1 / 6)}
    assert {(r["responses"], r["images"]) for r in rows.values()} == {(6, 3)}
    obj = rows["object"]
    assert obj["detection_rate_low"] <= obj["detection_rate"] <= obj["detection_rate_high"]
    assert obj["detection_rate_low"] < obj["detection_rate_high"], "the images differ, so the interval has width"
    assert rows["relation"]["detection_rate_low"] == rows["relation"]["detection_rate_high"] == 0.0
    assert math.isnan(rows["object"]["spearman_vs_injected_share"]), "a per-response correlation has no type"


def test_intervals_resample_whole_images():
    # Within an image the responses agree; across images they differ. Drawing two images, a replicate holds
    # one image twice half the time (rate 0 or 1); drawing twelve responses, almost never.
    by_image = [_item(["dog"], "a")] * 6 + [_item([], "b")] * 6
    by_response = [ProbeItem(i.text, i.injected, i.stated, i.values, i.evidence, i.item_value) for i in by_image]
    [_, grouped] = detection_records("chair", by_image, types=("object",), n_boot=300)
    [_, single] = detection_records("chair", by_response, types=("object",), n_boot=300)
    assert grouped["images"] == 2 and single["images"] == 12
    assert grouped["detection_rate"] == single["detection_rate"] == 0.5
    assert (grouped["detection_rate_low"], grouped["detection_rate_high"]) == (0.0, 1.0)
    assert 0.1 < single["detection_rate_low"] < 0.5 < single["detection_rate_high"] < 0.9


@pytest.fixture()
def probe_db(tmp_path):
    """A probe run over four images (two questions each), scored by CHAIR and Reefknot-like whole-answer flags."""
    db = tmp_path / "probe.duckdb"
    with Store(db) as st:
        samples = [Sample(id=f"b/{i}", benchmark="b", image_key=f"img{i // 2}") for i in range(8)]
        st.add_samples(Benchmark("b"), samples)
        st.add_run(Run(id="run-probe", benchmark="b", model="probe rate=0.5 mix=object seed=0 [synthetic]",
                       backend="probe", synthetic=True))
        responses = [Response("run-probe", s.id, TEXT, signals={"injected": INJECTED, "stated": STATED})
                     for s in samples]
        st.add_responses(responses)
        scores = [Score(r.id, "chair", "k", {"chair_i_item": float(i % 2)},
                        {"hallucinated": ["dog"] if i % 2 else []}) for i, r in enumerate(responses)]
        scores += [Score(r.id, "reefknot", "k2", {"hallucinated": i < 2}, {}) for i, r in enumerate(responses)]
        st.put_scores(scores)
    return db


def test_probe_detection_records_from_a_store_group_by_image(probe_db):
    with Store(probe_db, read_only=True) as st:
        rows = probe_detection_records(st, n_boot=100)
    assert [(r["metric"], r["type"]) for r in rows] == [(m, t) for m in ("chair", "reefknot")
                                                        for t in ("all", "object", "attribute", "relation")]
    chair = {r["type"]: r for r in rows if r["metric"] == "chair"}
    assert chair["object"]["detected"] == 4 and chair["object"]["images"] == 4 and chair["all"]["responses"] == 8
    reef = {r["type"]: r for r in rows if r["metric"] == "reefknot"}
    assert reef["relation"]["detected"] == 2 and reef["object"]["false_alarms"] == 2


def test_analysis_as_jsonl_has_only_rows_on_stdout_and_writes_no_plot_unasked(probe_db, tmp_path, monkeypatch,
                                                                               capsys):
    monkeypatch.chdir(tmp_path)
    code = main(["study", "--db", str(probe_db), "--analysis", "probe-validity", "--format", "jsonl",
                 "--n-boot", "50"])
    captured = capsys.readouterr()
    assert code == 0
    rows = [json.loads(line) for line in captured.out.splitlines()]
    assert len(rows) == 8 and {(r["metric"], r["type"]) for r in rows} >= {("chair", "object"),
                                                                            ("reefknot", "relation")}
    chair = next(r for r in rows if r["metric"] == "chair" and r["type"] == "object")
    assert chair["injected"] == 8 and chair["detected"] == 4 and chair["detection_rate"] == 0.5
    assert chair["detection_rate_low"] <= 0.5 <= chair["detection_rate_high"]
    assert chair["false_alarms"] == 0 and chair["spearman_vs_run_rate"] is None, "NaN is written as null"
    assert "Metric detection of injected hallucinations" in captured.err and "note:" in captured.err
    assert not list(tmp_path.glob("*.png"))


def test_analysis_as_csv_has_a_header_and_empty_cells_for_missing_numbers(probe_db, tmp_path, capsys):
    code = main(["study", "--db", str(probe_db), "--analysis", "probe-validity", "--format", "csv",
                 "--n-boot", "50", "--output-dir", str(tmp_path / "plots")])
    out = capsys.readouterr().out
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert out.splitlines()[0].startswith("metric,config_key,type,responses,images,injected,detected")
    assert len(rows) == 8
    count_free = next(r for r in rows if r["metric"] == "chair" and r["type"] == "relation")
    assert count_free["detected"] == "0" and count_free["spearman_vs_injected_share"] == ""
    assert (tmp_path / "plots" / "probe-validity.png").stat().st_size > 1000, "an explicit --output-dir still plots"


def test_analysis_as_a_table_still_prints_and_plots(probe_db, tmp_path, capsys):
    code = main(["study", "--db", str(probe_db), "--analysis", "probe-validity", "--n-boot", "50",
                 "--output-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0
    assert out.splitlines()[0] == "Metric detection of injected hallucinations (probe runs)"
    assert "detection_rate_low" in out and "note: false alarms have no hallucination type" in out
    assert (tmp_path / "probe-validity.png").exists()


def test_study_without_analysis_writes_every_table_as_rows(probe_db, capsys):
    assert main(["study", "--db", str(probe_db), "--format", "jsonl", "--n-boot", "50"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    tables = [r["table"] for r in rows]
    assert tables.count("agreement") == 1 and tables.count("probe_detection") == 8
    assert "correlation" not in tables, "no human ratings in this store"
    probe = next(r for r in rows if r["table"] == "probe_detection" and r["metric"] == "chair"
                 and r["type"] == "object")
    assert probe["detected"] == 4 and probe["detection_rate_low"] is not None
    assert main(["study", "--db", str(probe_db), "--format", "csv", "--n-boot", "20"]) == 0
    parsed = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert parsed[0]["table"] == "agreement" and {r["table"] for r in parsed} == {"agreement", "probe_detection"}
    assert main(["study", "--db", str(probe_db), "--n-boot", "20"]) == 0
    assert "Probe detection (synthetic runs" in capsys.readouterr().out, "the table format is unchanged"


def test_the_installed_command_pipes_jsonl(probe_db):
    env = {**os.environ, "PYTHONPATH": str(REPO), "GRADIO_ANALYTICS_ENABLED": "False", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-m", "hallu_studio", "study", "--db", str(probe_db), "--analysis",
                           "probe-validity", "--metrics", "chair", "--format", "jsonl", "--n-boot", "20"],
                          capture_output=True, text=True, env=env, timeout=300, check=True)
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert {r["metric"] for r in rows} == {"chair"} and len(rows) == 4


@pytest.mark.parametrize("module", ["hallu_studio.cli.output", "hallu_studio.studies.probe_detection"])
def test_worked_examples_in_the_docstrings(module):
    import doctest
    import importlib

    assert doctest.testmod(importlib.import_module(module)).failed == 0
