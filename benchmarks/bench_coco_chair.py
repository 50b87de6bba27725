"""CHAIR on a toolkit's COCO caption predictions: VLMEvalKit's ``COCO_VAL`` table (issue 26, lane coco-chair).

VLMEvalKit's ``<model>_COCO_VAL.xlsx`` holds, per row, ``index``, ``question``, ``answer`` (the image's five
reference captions, written as a Python list) and ``prediction`` (the model's caption). No instance annotations
come with it, so published CHAIR's ground truth is the COCO-80 objects the captions mention.

Through the product path, as a user would run it: the rows become caption samples made by
``importers.coco.coco_sample`` (the function VLMEvalKit's importer calls for ``COCO_VAL``), written as
HalluStudio's JSONL samples and responses, ``hallu-studio import --format jsonl`` into an empty store,
``hallu-studio score --metrics chair`` under each reading asked for (the other settings their defaults), and
``hallu-studio leaderboard``'s CHAIRs and CHAIRi. "before" are the same rows as samples without the COCO
marker (benchmark ``COCO_VAL_before``: reference captions only, what the landed code makes of them), in the
same store, so that each caption's concepts are extracted once.

    python benchmarks/bench_coco_chair.py [--file XLSX] [--limit N] [--readings studio,released] [--keep DIR]

Prints, per run: responses, CHAIR_i defined (share), the undefined ones' reasons, CHAIRs, CHAIRi.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import io
import json
import os
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hallu_studio.cli import main  # noqa: E402
from hallu_studio.config import Settings  # noqa: E402
from hallu_studio.importers.coco import coco_sample  # noqa: E402
from hallu_studio.metrics.keys import current_config_keys  # noqa: E402
from hallu_studio.model import Sample  # noqa: E402
from hallu_studio.store import Store  # noqa: E402

SHARED = Path(os.environ.get("HALLU_STUDIO_SHARED", Path(__file__).resolve().parents[2] / "shared"))
DEFAULT_FILE = SHARED / "datasets/toolkits/vlmevalkit-vila_8b/vila_8b_COCO_VAL.xlsx"
BENCHMARK = "COCO_VAL"
BEFORE = "COCO_VAL_before"  # the same rows without the COCO marker


def read_rows(path: Path, limit: int | None) -> list[dict[str, str]]:
    """The table's rows as text, header names as keys."""
    from openpyxl import load_workbook

    sheet = load_workbook(path, read_only=True).active
    rows = sheet.iter_rows(values_only=True)
    header = [str(h) for h in next(rows)]
    out = [{h: "" if v is None else str(v) for h, v in zip(header, row)} for row in rows]
    return out[:limit] if limit else out


def samples_of(rows: list[dict[str, str]], benchmark: str, marked: bool) -> list[Sample]:
    out = []
    for row in rows:
        captions = [c.strip() for c in ast.literal_eval(row["answer"]) if c.strip()]
        sid, key = f"{benchmark}/{row['index']}", f"{BENCHMARK}#{row['index']}"
        if marked:
            out.append(coco_sample(sid, benchmark, key, captions, question=row["question"]))
        else:
            out.append(Sample(id=sid, benchmark=benchmark, image_key=key, task="caption", question=row["question"],
                              reference_text=captions))
    return out


def quiet(args: list[str]) -> tuple[int, str]:
    """``hallu-studio ARGS`` in this process, its stdout returned (progress bars and warnings dropped)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(args)
    return code, out.getvalue()


def cli(*args: str) -> str:
    code, out = quiet(list(args))
    if code not in (0, 1):
        raise SystemExit(f"hallu-studio {' '.join(args)} exited {code}")
    return out


def write_inputs(rows: list[dict[str, str]], model: str, folder: Path) -> tuple[Path, Path]:
    """The samples twice, before (benchmark ``COCO_VAL_before``, captions only) and after (``COCO_VAL``, made by
    ``coco_sample``), and the model's captions for each: one store, so each caption's concepts are extracted once."""
    samples, responses = folder / "samples.jsonl", folder / "responses.jsonl"
    with samples.open("w", encoding="utf-8") as s, responses.open("w", encoding="utf-8") as r:
        for benchmark, marked in ((BEFORE, False), (BENCHMARK, True)):
            s.writelines(json.dumps(x.to_dict()) + "\n" for x in samples_of(rows, benchmark, marked))
            r.writelines(json.dumps({"sample_id": f"{benchmark}/{row['index']}", "model": model,
                                     "response": row["prediction"]}) + "\n" for row in rows)
    return samples, responses


def summary(db: Path, benchmark: str, reading: str) -> dict[str, object]:
    """CHAIRs and CHAIRi as ``leaderboard`` prints them, and each score's undefined reason and ground truth."""
    settings = Settings()
    settings.scoring.chair_reading = reading
    key = current_config_keys(settings).get("chair")
    board = cli("leaderboard", "--benchmark", benchmark, "--metrics", "chair", "--format", "jsonl", "--n-boot",
                "200", "--db", str(db))
    numbers = {r["key"]: r["value"] for r in map(json.loads, board.splitlines()) if r.get("metric") == "chair"}
    with Store(db) as store:
        scores = [score for response, score in store.iter_scores("chair", with_evidence=True)
                  if score.config_key == key and response.sample_id.startswith(f"{benchmark}/")]
    return {"responses": len(scores), "defined": sum(not s.undefined_reason for s in scores),
            "reasons": Counter(re.sub(r"^sample \S+ ", "", s.undefined_reason) for s in scores if s.undefined_reason),
            "truth": Counter(s.evidence.get("ground_truth_from", "").split(":")[0] for s in scores),
            "chair_s": numbers.get("chair_s"), "chair_i": numbers.get("chair_i")}


def main_() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--file", type=Path, default=DEFAULT_FILE)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--readings", default="studio,released")
    ap.add_argument("--keep", type=Path, default=None, help="a folder to keep the inputs and the store in")
    args = ap.parse_args()
    if not args.file.is_file():
        raise SystemExit(f"{args.file} is not there (set HALLU_STUDIO_SHARED or --file)")
    rows = read_rows(args.file, args.limit)
    model = args.file.stem.removesuffix(f"_{BENCHMARK}")
    print(f"{args.file.name}: {len(rows)} rows, model {model}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        db = folder / "store.duckdb"
        for path in write_inputs(rows, model, folder):
            cli("import", "--format", "jsonl", str(path), "--db", str(db))
        for reading in [r.strip() for r in args.readings.split(",") if r.strip()]:
            os.environ["HALLU_STUDIO_CHAIR_READING"] = reading
            start = time.perf_counter()
            cli("score", "--metrics", "chair", "--db", str(db))
            print(f"\nchair_reading = {reading}: scored in {time.perf_counter() - start:.0f} s")
            for name, benchmark in (("before", BEFORE), ("after", BENCHMARK)):
                r = summary(db, benchmark, reading)
                share = r["defined"] / r["responses"] if r["responses"] else 0.0  # type: ignore[operator]
                fmt = lambda v: "undefined" if v is None else f"{v:.2f}"  # noqa: E731
                print(f"  {name}: {r['responses']} responses, CHAIR_i defined on {r['defined']} ({100 * share:.1f} %); "
                      f"CHAIRs {fmt(r['chair_s'])}, CHAIRi {fmt(r['chair_i'])}")
                for why, n in r["reasons"].most_common():  # type: ignore[attr-defined]
                    print(f"    undefined, {n}: {why}")
                for basis, n in r["truth"].most_common():  # type: ignore[attr-defined]
                    print(f"    ground truth, {n}: {basis or '(not named)'}")


if __name__ == "__main__":
    main_()
