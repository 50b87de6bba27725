"""AMBER (github.com/junyangwang0410/AMBER): its annotations and queries as benchmark ``amber``, and responses in
AMBER's own format.

The data folder (AMBER's ``data/``, or the repository root above it) holds ``annotations.json`` (a list of
``{"id", "type", "truth"[, "hallu"]}``: ``type`` "generative" for ids 1–1,004 with ``truth`` and ``hallu`` object
lists, else a yes/no question type with ``truth`` "yes" / "no"), ``relation.json`` (each object word -> the
words AMBER counts as naming it too), ``safe_words.txt`` (words never counted as hallucinated) and ``query/``
(``query_all.json`` or the per-task files: lists of ``{"id", "image", "query"}``).

Samples: ``amber/<id>``, ``image_key`` the image file name (``AMBER_1.jpg``), ``question`` the query. Generative
ids are ``caption`` samples whose ``reference_objects`` are the truth objects, complete within AMBER's vocabulary
(``reference_vocabulary``: the object names ``relation.json`` lists); the others are ``yes_no`` samples with the
gold answer. ``meta["amber"]`` holds what AMBER's evaluator reads (``metrics.amber``): ``type`` and, for yes/no,
``dimension`` (existence / attribute / relation) and ``attribute`` (state / number / action); for descriptions
``truth``, ``hallu``, ``association`` (the related words of each), ``words`` and ``safe_words``. AMBER annotates
no attribute or relation facts, only objects and the yes/no questions, so the samples carry no scene graph.

Responses: AMBER's format, a JSON list of ``{"id", "response"}`` (``id`` AMBER's id), matched to the stored
``amber`` benchmark; one ``recorded`` run named by ``--model`` (else the file's name).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..images import ImageFolder
from ..model import Benchmark, Response, Sample
from .base import ImportProblem, ParsedBenchmark, ParsedResponses
from .reading import FatalImportError, attach_images, read_json
from .recorded import RecordedRuns, SampleIdResolver

TOOLKIT = "AMBER"  # the benchmark's and its evaluator's name: the metric's display name, imports' meta["toolkit"]
DIMENSIONS: tuple[str, ...] = ("existence", "attribute", "relation")
ATTRIBUTES: tuple[str, ...] = ("state", "number", "action")
# AMBER's ``type`` of a yes/no question -> (dimension, attribute kind); any other type is a relation question.
TYPES: dict[str, tuple[str, str | None]] = {
    "discriminative-hallucination": ("existence", None),
    "discriminative-attribute-state": ("attribute", "state"),
    "discriminative-attribute-number": ("attribute", "number"),
    "discriminative-attribute-action": ("attribute", "action"),
    "discriminative-relation": ("relation", None),
    "relation": ("relation", None),
}


def dimension_of(amber_type: str) -> tuple[str, str | None]:
    """(dimension, attribute kind) of an AMBER question type; AMBER's evaluator counts any unknown type as relation.

    >>> dimension_of("discriminative-attribute-number"), dimension_of("relation")
    (('attribute', 'number'), ('relation', None))
    """
    return TYPES.get(amber_type, ("relation", None))


BENCHMARK = "amber"
QUERY_FILES = ("query_all.json", "query_generative.json", "query_discriminative.json",
               "query_discriminative-existence.json", "query_discriminative-attribute.json",
               "query_discriminative-relation.json")


def data_folder(path: str | os.PathLike[str]) -> Path:
    """AMBER's data folder from what the user gave: the folder, the repository above it, or annotations.json."""
    p = Path(path)
    if p.is_file() and p.name == "annotations.json":
        return p.parent
    for candidate in (p, p / "data") if p.is_dir() else ():
        if (candidate / "annotations.json").is_file():
            return candidate
    hint = ("; a JSONL answer file (LLaVA's question_id, text) is read by --format llava --benchmark amber"
            if p.suffix.lower() == ".jsonl" else "")
    raise FileNotFoundError(f"{path}: not AMBER's data (give its data folder, the repository above it or its "
                            f"annotations.json; or responses as a JSON list of {{id, response}}){hint}")


def is_response_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a response file in AMBER's format (a JSON list whose records carry "response")."""
    p = Path(path)
    if not p.is_file() or p.name == "annotations.json" or p.suffix.lower() != ".json":
        return False
    with open(p, encoding="utf-8", errors="replace") as fh:
        head = fh.read(4096)
    return head.lstrip().startswith("[") and '"response"' in head


def _queries(folder: Path, problems: list[ImportProblem]) -> dict[int, dict[str, Any]]:
    out: dict[int, dict[str, Any]] = {}
    for name in QUERY_FILES:
        path = folder / "query" / name
        if not path.is_file():
            continue
        for n, rec in enumerate(read_json(path, list, "a list of AMBER queries")):
            where = f"query/{name} record {n + 1}"
            if not isinstance(rec, dict) or not isinstance(rec.get("id"), int) or not str(rec.get("query") or ""):
                problems.append(ImportProblem(where, "needs an integer id and a query"))
                continue
            out.setdefault(rec["id"], rec)
        if name == "query_all.json":
            break
    if not out:
        raise FatalImportError(f"{folder / 'query'}: no AMBER query file ({', '.join(QUERY_FILES)})")
    return out


def _words(folder: Path) -> tuple[dict[str, list[str]], list[str], list[str]]:
    """relation.json, every word it names (AMBER's evaluator counts these and no others), and safe_words.txt."""
    relation = read_json(folder / "relation.json", dict, "an object of word lists")
    if not all(isinstance(v, list) and all(isinstance(w, str) for w in v) for v in relation.values()):
        raise FatalImportError(f"{folder / 'relation.json'}: each entry must be a list of words")
    words = sorted(set(relation) | {w for v in relation.values() for w in v})
    safe_path = folder / "safe_words.txt"
    # AMBER's evaluator keeps each line without its newline, as it is (no stripping).
    safe = [line.split("\n")[0] for line in open(safe_path, encoding="utf-8")] if safe_path.is_file() else []
    return relation, words, safe


def _sample(rec: dict[str, Any], query: dict[str, Any], relation: dict[str, list[str]], words: list[str],
            safe: list[str]) -> Sample:
    kind, sid = str(rec.get("type") or ""), f"{BENCHMARK}/{rec['id']}"
    image = str(query.get("image") or f"AMBER_{rec['id']}.jpg")
    if kind == "generative":
        truth, hallu = rec.get("truth"), rec.get("hallu")
        if not isinstance(truth, list) or not isinstance(hallu, list):
            raise ValueError("a generative record needs truth and hallu lists")
        unknown = sorted({w for w in truth + hallu if w not in relation})
        if unknown:
            raise ValueError(f"objects not in relation.json: {unknown}")
        amber = {"type": kind, "truth": truth, "hallu": hallu, "association": {w: relation[w] for w in truth + hallu},
                 "words": words, "safe_words": safe}
        return Sample(id=sid, benchmark=BENCHMARK, image_key=image, task="caption", question=str(query["query"]),
                      reference_objects=list(truth), reference_vocabulary=sorted(relation), meta={"amber": amber})
    gold = str(rec.get("truth") or "").strip().lower()
    if gold not in ("yes", "no"):
        raise ValueError(f"truth {rec.get('truth')!r} is not yes or no")
    dimension, attribute = dimension_of(kind)
    amber = {"type": kind, "dimension": dimension, **({"attribute": attribute} if attribute else {})}
    return Sample(id=sid, benchmark=BENCHMARK, image_key=image, task="yes_no", question=str(query["query"]),
                  answer=gold, meta={"amber": amber})


def read_amber(path: str | os.PathLike[str], images_dir: str | os.PathLike[str] | None = None) -> ParsedBenchmark:
    """Benchmark ``amber`` from AMBER's data folder (see the module docstring); images optional."""
    folder = data_folder(path)
    parsed = ParsedBenchmark(Benchmark(BENCHMARK, "AMBER: generative and yes/no hallucination (objects, attributes, "
                                                  "relations)", str(folder),
                                       meta={"toolkit": TOOLKIT, "source_file": str(folder / "annotations.json")}))
    annotations = read_json(folder / "annotations.json", list, "a list of AMBER annotations")
    queries = _queries(folder, parsed.problems)
    relation, words, safe = _words(folder)
    unasked = 0
    for n, rec in enumerate(annotations):
        where = f"annotations.json record {n + 1}"
        if not isinstance(rec, dict) or not isinstance(rec.get("id"), int):
            parsed.problems.append(ImportProblem(where, "needs an integer id"))
            continue
        query = queries.pop(rec["id"], None)
        if query is None:
            unasked += 1
            continue
        try:
            parsed.samples.append(_sample(rec, query, relation, words, safe))
        except ValueError as exc:
            parsed.problems.append(ImportProblem(f"{where} (id {rec['id']})", str(exc)))
    if unasked:
        parsed.problems.append(ImportProblem("annotations.json", f"{unasked} annotated ids have no query in "
                                             f"{folder / 'query'}: not imported", fatal=False))
    for qid in sorted(queries):
        parsed.problems.append(ImportProblem(f"query id {qid}", "no annotation with this id"))
    attach_images(parsed, ImageFolder(images_dir, depth=1) if images_dir is not None else None, "amber")
    return parsed


def read_amber_responses(path: str | os.PathLike[str], known_ids: set[str],
                         model: str | None = None) -> ParsedResponses:
    """AMBER's response list (``[{"id", "response"}]``) against the stored ``amber`` samples ``known_ids``."""
    p = Path(path)
    if not any(k.startswith(f"{BENCHMARK}/") for k in known_ids):
        raise FatalImportError(f"{p.name}: no benchmark {BENCHMARK!r} in the store; import AMBER's data folder "
                               "first (hallu-studio import --format amber PATH/TO/AMBER/data)")
    records = read_json(p, list, "a list of AMBER responses")
    name = model or p.stem
    runs = RecordedRuns(f"amber {p.name}")
    run = runs.run_for(BENCHMARK, name, meta={"toolkit": TOOLKIT, "source_file": str(p)})
    out = ParsedResponses(name=p.name)
    resolver = SampleIdResolver(BENCHMARK, known_ids)
    seen: set[str] = set()
    for n, rec in enumerate(records):
        where = f"{p.name} record {n + 1}"
        if not isinstance(rec, dict) or not isinstance(rec.get("response"), str):
            out.problems.append(ImportProblem(where, 'needs "id" and a text "response"'))
            continue
        try:
            sid = resolver.resolve([rec.get("id")])
        except ValueError as exc:
            out.problems.append(ImportProblem(where, str(exc)))
            continue
        if sid in seen:
            out.problems.append(ImportProblem(where, f"a second response to {sid}"))
            continue
        seen.add(sid)
        out.responses.append(Response(run.id, sid, rec["response"]))
    out.runs = runs.runs() if out.responses else []
    return out
