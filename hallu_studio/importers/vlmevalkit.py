"""VLMEvalKit's files: the benchmark a prediction table answers, built from the table's own columns, and the
model's run.

Shapes read (``docs/formats.md``):

* prediction tables ``<model>_<DATASET>.xlsx`` (or ``.tsv`` / ``.csv``): the dataset's columns (``index``,
  ``question``, ``answer``, ``category``, ``l2-category``, ``image_path``, option columns ``A`` ``B`` …,
  ``hint`` …) plus ``prediction``; the evaluation's copies ``_auxmatch`` (adds ``extracted``, ``score``) and
  ``_openai_result`` (adds ``hit``, ``log``), whose added columns go to each response's ``signals["vlmevalkit"]``;
* dataset TSVs ``<DATASET>.tsv`` with the image itself in base64 (``image``; a short value there is the
  ``index`` of the row whose image it shares, as VLMEvalKit reads it): the benchmark alone, images stored.

The dataset is the file name's last part that is one of VLMEvalKit's dataset names (``DATASET_TASKS``); the
model, what comes before it (VLMEvalKit's model key, e.g. ``vila_8b``), named by the hub checkpoint VLMEvalKit
loads for that key (``vlmevalkit_models``: ``Efficient-Large-Model/Llama-3-VILA1.5-8b``; the key itself when it
is not one of VLMEvalKit's) unless ``--model``; the benchmark is
named after the dataset unless ``--benchmark``. Sample ids are ``<benchmark>/<index>``.

Where the store already holds a sample of that id, the row must agree with it (question, whitespace
normalised; gold answer; options; reference captions; image where both have one): a row that does not is a
problem naming the row and what differs, and neither it nor its prediction goes in. A benchmark not made from
VLMEvalKit's dataset (another format's COCO, say) gets no new samples from a VLMEvalKit file: a row naming none
of its samples is refused, never paired by its bare ``index``.
"""

from __future__ import annotations

import ast
import base64
import binascii
import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from ..images import ImageRejected, image_from_bytes, read_image
from ..model import Benchmark, Response, Sample
from .base import ImportProblem, ParsedBenchmark, ParsedResponses, StoredImage
from .coco import coco_sample
from .reading import FatalImportError
from .recorded import RecordedRuns, same_text
from .vlmevalkit_models import hub_id

TOOLKIT = "vlmevalkit"
YES_NO, MCQ, CAPTION, VQA = "yes_no", "mcq", "caption", "vqa"
# VLMEvalKit's dataset names (as its ``--data`` takes them) and the task each asks. Names not listed still import
# with --benchmark; their task is read from the columns.
DATASET_TASKS: dict[str, str] = {
    **dict.fromkeys("POPE MME HallusionBench AMBER VSR-zeroshot".split(), YES_NO),
    "COCO_VAL": CAPTION,
    **dict.fromkeys("""MMBench_DEV_EN MMBench_TEST_EN MMBench_DEV_CN MMBench_TEST_CN MMBench MMBench_CN MMBench_DEV_EN_V11
        MMBench_TEST_EN_V11 MMBench_DEV_CN_V11 MMBench_TEST_CN_V11 MMBench_V11 MMBench_CN_V11 CCBench SEEDBench_IMG
        SEEDBench2 SEEDBench2_Plus ScienceQA_VAL ScienceQA_TEST AI2D_TEST AI2D_TEST_NO_MASK MMStar RealWorldQA
        MMMU_DEV_VAL MMMU_TEST MMT-Bench_VAL MMT-Bench_ALL BLINK A-OKVQA MMVP NaturalBench""".split(), MCQ),
    **dict.fromkeys("""TextVQA_VAL DocVQA_VAL DocVQA_TEST InfoVQA_VAL InfoVQA_TEST ChartQA_TEST OCRVQA_TEST OCRVQA_TESTCORE
        OCRBench GQA_TestDev_Balanced VizWiz MMVet LLaVABench MathVista_MINI MathVision MathVerse_MINI CRPE_EXIST
        CRPE_RELATION""".split(), VQA),
}
# What VLMEvalKit appends to a prediction file's name when it writes the evaluation's copies of it.
INTERMEDIATE = ("_auxmatch", "_openai_result", "_gpt-4-turbo", "_exact_matching")
# Columns a model's run added: the response and its evaluation, not the benchmark.
RUN_COLUMNS = ("prediction", "extracted", "score", "hit", "log", "pred", "opt", "match")
POPE_SPLITS = ("random", "popular", "adversarial")
COCO_DATASETS = ("COCO_VAL",)  # caption datasets of COCO images (``answer``: the image's reference captions)
_OPTION = re.compile(r"^[A-Z]$")


@dataclass(frozen=True)
class FileName:
    """What a VLMEvalKit file name says: the dataset, the model key (None for a dataset TSV), the stem."""

    dataset: str
    model: str | None
    stem: str  # the name without extension and intermediate suffix: "vila_8b_MME"


def parse_file_name(path: Path, benchmark: str | None = None) -> FileName:
    """``vila_8b_MME_auxmatch.xlsx`` -> dataset ``MME``, model ``vila_8b``.

    >>> parse_file_name(Path("vila_8b_HallusionBench_auxmatch.xlsx"))
    FileName(dataset='HallusionBench', model='vila_8b', stem='vila_8b_HallusionBench')
    >>> parse_file_name(Path("MMBench_DEV_EN.tsv")).model is None
    True
    >>> parse_file_name(Path("run7_MyBench.xlsx"), benchmark="MyBench").model
    'run7'
    """
    stem = path.name.split(".")[0] if path.suffix else path.name
    for suffix in INTERMEDIATE:
        stem = stem.removesuffix(suffix)
    names = sorted(DATASET_TASKS, key=len, reverse=True)
    if benchmark:
        names = [benchmark, *names]
    for fold in (False, True):
        for name in names:
            a, b = (stem.lower(), name.lower()) if fold else (stem, name)
            if a == b:
                return FileName(name, None, stem)
            if a.endswith("_" + b):
                return FileName(name, stem[:len(stem) - len(name) - 1], stem)
    if benchmark:
        return FileName(benchmark, None, stem)
    raise FatalImportError(f"{path.name}: the file name does not end in one of VLMEvalKit's dataset names "
                           f"(<model>_<DATASET>, e.g. vila_8b_MME.xlsx); give --benchmark NAME (and --model)")


def read_table(path: Path) -> list[dict[str, str]]:
    """The table's rows, every cell as text ("" where empty)."""
    import pandas as pd

    suffix = path.suffix.lower()
    try:
        if suffix in (".xlsx", ".xls"):
            frame = pd.read_excel(path, dtype=str, keep_default_na=False)
        elif suffix in (".tsv", ".csv"):
            frame = pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",", dtype=str, keep_default_na=False)
        else:
            raise FatalImportError(f"{path.name}: VLMEvalKit tables are .xlsx, .tsv or .csv")
    except FatalImportError:
        raise
    except Exception as exc:  # noqa: BLE001 - pandas raises many kinds; all mean "cannot read this table"
        raise FatalImportError(f"{path.name}: cannot read the table ({exc})") from exc
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame.to_dict("records")


def task_of(dataset: str, columns: list[str], rows: list[dict[str, str]]) -> str:
    """The task a dataset asks: VLMEvalKit's kind where the name is known, else read from the columns (option
    columns A, B: multiple choice; every answer yes or no: yes/no; else open VQA)."""
    if dataset in DATASET_TASKS:
        return DATASET_TASKS[dataset]
    if {"A", "B"} <= set(columns):
        return MCQ
    answers = {r.get("answer", "").strip().lower() for r in rows}
    return YES_NO if answers and answers <= {"yes", "no"} else VQA


def reference_captions(text: str) -> list[str]:
    """COCO_VAL's ``answer``: the image's reference captions, written as a Python list.

    >>> reference_captions("['A cat.', 'A cat on a mat.']")
    ['A cat.', 'A cat on a mat.']
    """
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError) as exc:
        raise ValueError(f"answer is not a list of reference captions ({exc.__class__.__name__})") from exc
    if not isinstance(value, (list, tuple)) or not all(isinstance(c, str) for c in value):
        raise ValueError("answer is not a list of reference captions")
    return [c.strip() for c in value if c.strip()]


def image_path_key(path: str, dataset: str) -> str:
    """The image's identity in VLMEvalKit's ``image_path``, without the machine's own folders: what follows
    ``images/<dataset>/`` when the path has it (VLMEvalKit writes a dataset's images there).

    >>> image_path_key("/home/x/LMUData/images/POPE/12.jpg", "POPE"), image_path_key("OCR/0001.jpg", "MME")
    ('12.jpg', 'OCR/0001.jpg')
    """
    marker = f"images/{dataset}/"
    at = path.replace("\\", "/").rfind(marker)
    return path[at + len(marker):] if at >= 0 else path


def _options(row: dict[str, str]) -> list[str]:
    """The option texts in letter order (A, B, …) up to the last one given; a gap stays an empty text, so that
    letters keep their place (MMStar has rows whose option A was lost as an empty cell, the answer still "A").

    >>> _options({"A": "", "B": "Two", "C": "One", "D": "", "E": ""})
    ['', 'Two', 'One']
    """
    texts = [row.get(letter, "").strip() for letter in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"]
    while texts and not texts[-1]:
        texts.pop()
    return texts


class _Images:
    """A row's image: decoded from base64 (each distinct image once), a row number naming another row's image,
    or only named by ``image_path`` (read from ``--images`` when given)."""

    def __init__(self, rows: list[dict[str, str]], dataset: str, folder: Path | None) -> None:
        self.by_index = {r.get("index", "").strip(): r for r in rows}
        self.dataset, self.folder = dataset, folder
        self.decoded: dict[str, StoredImage | ImageRejected] = {}

    def _embedded(self, row: dict[str, str]) -> StoredImage | None:
        raw, seen = row.get("image", "").strip(), set()
        while raw and len(raw) <= 64:  # no picture is that short: the index of the row whose image this is
            if raw in seen or raw not in self.by_index:
                raise ValueError(f"image {raw!r} names no row with an image")
            seen.add(raw)
            raw = self.by_index[raw].get("image", "").strip()
        if not raw:
            return None
        if raw.startswith("["):
            raise ValueError("several images in one row are not supported yet")
        if raw not in self.decoded:
            try:
                self.decoded[raw] = image_from_bytes(base64.b64decode(raw, validate=True), "image")
            except ImageRejected as exc:
                self.decoded[raw] = exc
            except (binascii.Error, ValueError) as exc:
                self.decoded[raw] = ImageRejected(f"image: not base64 ({exc})")
        found = self.decoded[raw]
        if isinstance(found, ImageRejected):
            raise ValueError(str(found))
        return found

    def of(self, row: dict[str, str], problems: list[ImportProblem], where: str) -> tuple[str | None,
                                                                                          StoredImage | None]:
        """(image_key, image): the path's key if the row names one, else the embedded image's sha256."""
        image = self._embedded(row)
        path = row.get("image_path", "").strip()
        key = image_path_key(path, self.dataset) if path else (image.sha256 if image else None)
        if image is None and key and self.folder is not None:
            try:
                image = read_image(key, self.folder)
            except ImageRejected as exc:
                problems.append(ImportProblem(where, str(exc), fatal=False))
        return key, image


def row_sample(row: dict[str, str], benchmark: str, dataset: str, task: str) -> Sample:
    """The sample a row describes (without its image); ValueError naming what is wrong with the row."""
    index, question, answer = (row.get(k, "").strip() for k in ("index", "question", "answer"))
    if not index:
        raise ValueError("no index")
    if not question:
        raise ValueError("no question")
    meta: dict[str, Any] = {k: v for k, v in row.items() if v.strip() and k not in RUN_COLUMNS
                            and k not in ("index", "question", "answer", "image") and not _OPTION.match(k)}
    meta["vlmevalkit_dataset"] = dataset
    gold: str | None = answer or None
    options, captions = [], None
    if task == YES_NO:
        if answer.lower() not in ("yes", "no"):
            raise ValueError(f"answer {answer!r} is not Yes or No")
        gold = answer.lower()
        splits = [p.strip().lower() for p in row.get("category", "").split(",") if p.strip()]
        if splits and all(p in POPE_SPLITS for p in splits):
            meta["splits"] = splits
    elif task == MCQ:
        options = _options(row)
        letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[:len(options)]
        if len(answer) != 1 or answer not in letters:
            raise ValueError(f"answer {answer!r} is none of the option letters {', '.join(letters) or '(no options)'}")
    elif task == CAPTION:
        captions, gold = (reference_captions(answer) if answer else None), None
    if row.get("l2-category") and len(index.split("_")) >= 6:
        # HallusionBench's index packs its set, figure and question ids, as VLMEvalKit reads them.
        meta.update(zip(("set_id", "figure_id", "question_id"), index.split("_")[3:6]))
        # fAcc and qAcc group a set's figures and questions: the bootstrap resamples whole sets.
        meta["cluster"] = f"{row['l2-category']}_{meta['set_id']}"
    if task == CAPTION and dataset in COCO_DATASETS:
        # COCO images with their reference captions: a COCO-based sample, which CHAIR reads over COCO-80.
        return coco_sample(f"{benchmark}/{index}", benchmark, f"{dataset}#{index}", captions, question=question,
                           meta=meta)
    return Sample(id=f"{benchmark}/{index}", benchmark=benchmark, image_key=f"{dataset}#{index}", task=task,
                  question=question, options=options, answer=gold, reference_text=captions,
                  reference_kind="captions", meta=meta)  # a toolkit's gold captions: short, open-world


def _group_sizes(samples: list[Sample]) -> None:
    """Each question's group sizes, which MME's acc+ and HallusionBench's fAcc / qAcc divide by: questions per
    image (MME: two), per HallusionBench figure and per HallusionBench question."""
    def count(key: Any) -> Counter:
        return Counter(key(s) for s in samples)

    per_image = count(lambda s: (s.meta.get("category"), s.image_key))
    figure = count(lambda s: (s.meta.get("l2-category"), s.meta.get("set_id"), s.meta.get("figure_id")))
    question = count(lambda s: (s.meta.get("l2-category"), s.meta.get("set_id"), s.meta.get("question_id")))
    for s in samples:
        if s.task == YES_NO and s.meta.get("category") and not s.image_key.startswith(f"{s.meta['vlmevalkit_dataset']}#"):
            s.meta["questions_of_image"] = per_image[(s.meta.get("category"), s.image_key)]
        if "set_id" in s.meta:
            s.meta["figure_questions"] = figure[(s.meta["l2-category"], s.meta["set_id"], s.meta["figure_id"])]
            s.meta["question_figures"] = question[(s.meta["l2-category"], s.meta["set_id"], s.meta["question_id"])]


def conflict(new: Sample, old: Sample) -> str | None:
    """How a file's row differs from the stored sample of its id, or None when they agree."""
    def short(text: Any) -> str:
        text = " ".join(str(text or "").split())
        return repr(text if len(text) <= 60 else text[:57] + "…")

    if not same_text(new.question, old.question):
        return f"its question {short(new.question)} differs from stored sample {old.id}'s {short(old.question)}"
    if new.answer and old.answer and new.answer.lower() != (old.answer or "").lower():
        return f"its answer {new.answer!r} differs from stored sample {old.id}'s {old.answer!r}"
    if new.options and old.options and new.options != old.options:
        return f"its options differ from stored sample {old.id}'s"
    if new.reference_captions and old.reference_captions and new.reference_captions != old.reference_captions:
        return (f"its reference captions ({short(new.reference_captions[0])} …) differ from stored sample "
                f"{old.id}'s ({short(old.reference_captions[0])} …)")
    if new.image_sha256 and old.image_sha256 and new.image_sha256 != old.image_sha256:
        return f"its image (sha256 {new.image_sha256[:12]}…) differs from stored sample {old.id}'s"
    if not new.image_sha256 and not old.image_sha256 and new.image_key != old.image_key:
        return f"its image {new.image_key!r} differs from stored sample {old.id}'s {old.image_key!r}"
    return None


def results_file(path: Path, name: FileName) -> Path | None:
    """The score file VLMEvalKit wrote beside the predictions (``<model>_<DATASET>_score.csv`` / ``_acc.csv`` /
    ``_score.json``), if there is one."""
    for suffix in ("_score.csv", "_acc.csv", "_score.json", "_score.xlsx", "_acc.xlsx"):
        candidate = path.with_name(name.stem + suffix)
        if candidate.is_file():
            return candidate
    return None


def _samples(rows: list[dict[str, str]], path: Path, benchmark: str, name: FileName, task: str,
             images: _Images, problems: list[ImportProblem]) -> tuple[dict[str, tuple[str, Sample]],
                                                                      dict[str, StoredImage]]:
    """The good rows' samples by id (with where each row is), and their images by sha256."""
    out: dict[str, tuple[str, Sample]] = {}
    stored_images: dict[str, StoredImage] = {}
    for i, row in enumerate(rows):
        where = f"{path.name} row {i + 2}"  # +2: spreadsheet rows count from 1 and the header is row 1
        try:
            sample = row_sample(row, benchmark, name.dataset, task)
            if sample.id in out:
                raise ValueError(f"index {row['index'].strip()!r} repeats {out[sample.id][0]}")
            key, image = images.of(row, problems, where)
            if key:
                sample.image_key = key
            if image is not None:
                sample.image_sha256 = image.sha256
                stored_images.setdefault(image.sha256, image)
            out[sample.id] = (where, sample)
        except ValueError as exc:
            problems.append(ImportProblem(where, str(exc)))
    _group_sizes([s for _, s in out.values()])
    return out, stored_images


def _against_store(samples: dict[str, tuple[str, Sample]], stored: Any, benchmark: str, dataset: str,
                   problems: list[ImportProblem]) -> list[Sample]:
    """Drop the rows that disagree with the stored benchmark (each a problem); the new samples to add."""
    held = stored.sample_ids(benchmark) if benchmark in stored.benchmark_names() else set()
    if not held:
        return [s for _, s in samples.values()]
    old = stored.get_samples(sorted(set(samples) & held))
    probe = next(iter(old.values()), None) or next(iter(stored.get_samples([min(held)]).values()), None)
    ours = probe is not None and probe.meta.get("vlmevalkit_dataset") == dataset
    new = []
    for sid, (where, sample) in list(samples.items()):
        reason = None
        if sid in old:
            reason = conflict(sample, old[sid])
        elif not ours:
            reason = (f"index {sid.split('/', 1)[1]!r} names no sample of the stored benchmark {benchmark!r}, which "
                      f"was not made from VLMEvalKit's {dataset}; a row is never paired with a sample by its index "
                      "alone (import under another --benchmark name)")
        else:
            new.append(sample)
        if reason:
            problems.append(ImportProblem(where, f"refused: {reason}"))
            del samples[sid]
    return new


def read_vlmevalkit(path: str | os.PathLike[str], stored: Any, *, benchmark: str | None = None,
                    model: str | None = None, images: str | os.PathLike[str] | None = None,
                    ) -> Iterator[ParsedBenchmark | ParsedResponses]:
    """Yield the benchmark part (when the store lacks some of the file's samples), then the model's responses.

    ``stored`` is what the reader may ask of the store (``importers.registry.StoredCorpus``).
    """
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{p} does not exist")
    name = parse_file_name(p, benchmark)
    rows = read_table(p)
    columns = list(rows[0]) if rows else []
    missing = [c for c in ("index", "question") if c not in columns]
    if not rows or missing:
        raise FatalImportError(f"{p.name}: " + ("no rows" if not rows else f"no {' / '.join(missing)} column; "
                               f"found {', '.join(columns)}"))
    predictions = "prediction" in columns
    if not predictions and "image" not in columns:
        raise FatalImportError(f"{p.name}: neither a prediction column (a prediction table) nor an image column (a "
                               "dataset TSV)")
    run_model = model or (name.model and (hub_id(name.model) or name.model))
    if predictions and not run_model:
        raise FatalImportError(f"{p.name}: no model name (the file name is not <model>_<DATASET>); give --model")
    bench = benchmark or name.dataset
    task = task_of(name.dataset, columns, rows)
    problems: list[ImportProblem] = []
    samples, stored_images = _samples(rows, p, bench, name, task, _Images(rows, name.dataset, images and Path(images)),
                                      problems)
    new = _against_store(samples, stored, bench, name.dataset, problems)
    if new or bench not in stored.benchmark_names():
        meta = {"toolkit": TOOLKIT, "vlmevalkit_dataset": name.dataset, "source_file": p.name, "task": task}
        used = {s.image_sha256 for s in new}
        yield ParsedBenchmark(Benchmark(bench, f"VLMEvalKit's {name.dataset}", str(p), meta), new,
                              {k: v for k, v in stored_images.items() if k in used}, problems,
                              label=f"{bench} (VLMEvalKit {name.dataset}, {p.name})")
        problems = []
    if predictions:
        yield _responses(rows, p, samples, name, bench, str(run_model), problems)
    elif problems:  # a dataset TSV whose samples were all stored already: its refused rows still get reported
        yield ParsedResponses(problems=problems, name=p.name)


def _responses(rows: list[dict[str, str]], path: Path, samples: dict[str, tuple[str, Sample]], name: FileName,
               benchmark: str, model: str, problems: list[ImportProblem]) -> ParsedResponses:
    out = ParsedResponses(problems=problems, name=f"{model} on {benchmark} ({path.name})")
    results = results_file(path, name)
    meta = {"toolkit": TOOLKIT, "source_file": path.name, "vlmevalkit_dataset": name.dataset,
            **({"vlmevalkit_model": name.model} if name.model else {}),
            **({"results_file": results.name} if results else {})}
    run = RecordedRuns(f"{TOOLKIT}:{name.stem}").run_for(benchmark, model, meta)
    extra = [c for c in RUN_COLUMNS[1:] if c in (rows[0] if rows else {})]
    for i, row in enumerate(rows):
        sid = f"{benchmark}/{row.get('index', '').strip()}"
        if sid not in samples:
            continue  # the row's problem is already reported
        text = row.get("prediction", "")
        if not text.strip():
            out.problems.append(ImportProblem(f"{path.name} row {i + 2}", "empty prediction (imported as an empty "
                                              "answer, as VLMEvalKit scores it)", fatal=False))
        signals = {"vlmevalkit": {c: row.get(c, "") for c in extra}} if extra else {}
        out.responses.append(Response(run.id, sid, text, signals))
    out.runs = [run]
    return out
