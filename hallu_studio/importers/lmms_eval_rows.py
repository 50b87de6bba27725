"""One lmms-eval ``--log_samples`` row read as a benchmark item: its task kind, question, options, gold answer,
reference captions, split and image identity, from whatever the row's lmms-eval version wrote.

v0.3 rows carry the dataset row (``doc``, without its image fields) beside ``target``, ``resps``,
``filtered_resps`` and ``input`` (the prompt); from v0.6 on, ``doc`` and (mostly) ``resps`` are gone, the
prompt (``input``) and the image's file name (``input_media``) remain, and ``filtered_resps`` may be a bare
string. The question is then the prompt less the task's own ``pre_prompt`` / ``post_prompt`` (from the results
JSON's ``configs``) and, for multiple choice, less its option lines.

>>> post = "\\nAnswer with the option's letter from the given choices directly."
>>> row = {"doc_id": 3, "target": "B", "filtered_resps": ["B"], "input": "Which is soft?\\nA. rock\\nB. wool" + post}
>>> config = {"lmms_eval_specific_kwargs": {"default": {"post_prompt": post}}}
>>> item = RowItem.read(row, "scienceqa_img", config)
>>> item.question, item.options, item.gold, task_kind("scienceqa_img", [item])
('Which is soft?', ['rock', 'wool'], 'B', 'mcq')
>>> response_text({"filtered_resps": "Yes"}), response_text({"resps": [["a", "b"]], "filtered_resps": [[]]})
('Yes', 'a')
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

_OPTION_LINE = re.compile(r"^\(?([A-Z])[.)]\s+(.*\S)\s*$")
_LETTER = re.compile(r"[A-J]")
# lmms-eval's POPE tasks of one split, and the split names the toolkits print.
POPE_SPLITS = {"pope_adv": "adversarial", "pope_pop": "popular", "pope_random": "random"}
SPLIT_NAMES = frozenset(POPE_SPLITS.values())
_CAPTION_TASK = re.compile(r"(?:^|_)(?:cap|caps|caption|captions|nocaps|flickr30k)(?:_|$)|^coco\d*_cap|^nocaps|^flickr")
_QUESTION_FIELDS = ("question", "query", "prompt", "text")
_IMAGE_FILE = re.compile(r"\.(?:jpe?g|png|gif|bmp|webp)$", re.IGNORECASE)
_IMAGE_FIELDS = ("image_source", "image_id", "image_path", "image_file", "file_name", "img_id")


def first_text(value: Any) -> str | None:
    """The first string in ``value`` (``[["a"]]`` / ``["a"]`` / ``"a"`` -> ``"a"``); None when there is none."""
    if isinstance(value, str):
        return value
    for inner in value if isinstance(value, (list, tuple)) else ():
        found = first_text(inner)
        if found is not None:
            return found
    return None


def response_text(row: Mapping[str, Any]) -> str | None:
    """The model's answer: ``filtered_resps`` (what lmms-eval scored), else ``resps``. A row of several requests
    (a multiple-choice task lmms-eval scores by log-likelihood, one request per option) holds no answer text:
    ValueError."""
    filtered = row.get("filtered_resps")
    if isinstance(filtered, list) and len(filtered) > 1 and all(isinstance(f, (list, tuple)) for f in filtered):
        raise ValueError(f"{len(filtered)} requests for one question (a log-likelihood task): lmms-eval scored "
                         "option likelihoods, not an answer text; not supported yet")
    text = first_text(filtered)
    return text if text is not None else first_text(row.get("resps"))


def _prompts(config: Mapping[str, Any]) -> tuple[str, str]:
    """The task's default ``pre_prompt`` and ``post_prompt`` as its results JSON records them."""
    kwargs = config.get("lmms_eval_specific_kwargs") or {}
    default = kwargs.get("default") if isinstance(kwargs.get("default"), Mapping) else kwargs
    return str(default.get("pre_prompt") or ""), str(default.get("post_prompt") or "")


def _listed(value: Any) -> list[str] | None:
    """A list of strings, also when lmms-eval wrote it as its Python text (``str(target)``)."""
    if isinstance(value, str) and value.startswith("[") and value.endswith("]"):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return None
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        return [v.strip() for v in value if v.strip()]
    return None


def _split_options(text: str) -> tuple[str, list[str]]:
    """The prompt's trailing option lines ("A. rock", "B. wool") taken off: (the rest, the option texts). Lines that
    do not run A, B, C ... are no options."""
    lines = text.rstrip().split("\n")
    start = len(lines)
    while start > 0 and _OPTION_LINE.match(lines[start - 1].strip()):
        start -= 1
    found = [_OPTION_LINE.match(line.strip()) for line in lines[start:]]
    letters = [m.group(1) for m in found if m]
    if not letters or letters != [chr(ord("A") + i) for i in range(len(letters))]:
        return text.strip(), []
    return "\n".join(lines[:start]).strip(), [m.group(2) for m in found if m]


@dataclass
class RowItem:
    """What one row says about its question, independent of the model that answered it."""

    doc_id: int
    prompt: str | None
    question: str | None
    gold: str | None
    golds: list[str] = field(default_factory=list)  # several acceptable answers, or a caption's references
    options: list[str] = field(default_factory=list)
    image_key: str | None = None  # the toolkit's own image name or id; None when the row gives none
    category: str | None = None
    split: str | None = None
    source_id: str | None = None  # the dataset's own question id, when the row names one

    @classmethod
    def read(cls, row: Mapping[str, Any], task: str, config: Mapping[str, Any]) -> "RowItem":
        doc_id = row.get("doc_id")
        if isinstance(doc_id, bool) or not isinstance(doc_id, int):
            raise ValueError(f"no integer doc_id (got {doc_id!r})")
        doc = row.get("doc") if isinstance(row.get("doc"), Mapping) else {}
        prompt = row.get("input") if isinstance(row.get("input"), str) else first_text(row.get("arguments"))
        item = cls(doc_id, prompt, None, None)
        item._gold(row, doc)
        item._question(doc, config)
        item._identity(row, doc, task)
        return item

    def _gold(self, row: Mapping[str, Any], doc: Mapping[str, Any]) -> None:
        target = row.get("target")
        listed = _listed(target) or _listed(doc.get("answer"))
        if listed:
            self.gold, self.golds = listed[0], listed
        elif target is not None and str(target).strip():
            self.gold = str(target).strip()

    def _question(self, doc: Mapping[str, Any], config: Mapping[str, Any]) -> None:
        choices = _listed(doc.get("choices")) or _listed(doc.get("options"))
        asked = next((doc[k] for k in _QUESTION_FIELDS if isinstance(doc.get(k), str) and doc[k].strip()), None)
        text, options = self.prompt, []
        if text is not None:
            pre, post = _prompts(config)
            if pre and text.startswith(pre):
                text = text[len(pre):]
            if post and text.endswith(post):
                text = text[:-len(post)]
            text, options = _split_options(text)
        self.options = choices or options
        self.question = asked.strip() if asked else (text or None)

    def _identity(self, row: Mapping[str, Any], doc: Mapping[str, Any], task: str) -> None:
        media = row.get("input_media")
        names = [str(m) for m in media if isinstance(m, (str, int))] if isinstance(media, list) else []
        image = next((str(doc[k]) for k in _IMAGE_FIELDS if doc.get(k) not in (None, "")), None)
        qid = str(doc.get("question_id") or "")
        if image is None and _IMAGE_FILE.search(qid):  # COCO caption tasks: the question id is the image's file
            image = qid
        self.image_key = "|".join(names) if names else image
        scored = [v for v in row.values() if isinstance(v, Mapping) and "question_id" in v]
        category = doc.get("category") or next((v.get("category") for v in scored if v.get("category")), None)
        self.category = str(category) if category else None
        qid = doc.get("question_id", doc.get("id"))
        self.source_id = str(qid) if qid not in (None, "") else None
        split = (self.category or "").lower()
        self.split = split if split in SPLIT_NAMES else POPE_SPLITS.get(task)


def task_kind(task: str, items: Sequence[RowItem]) -> str:
    """``yes_no`` when every gold is yes / no (POPE, MME, HallusionBench); ``mcq`` when every gold is an option letter
    and the rows list options (ScienceQA, MMBench); ``caption`` for caption tasks (COCO, NoCaps, Flickr30k);
    else ``vqa``."""
    golds = [(i.gold or "").strip() for i in items]
    if _CAPTION_TASK.search(task.lower()):
        return "caption"
    if golds and all(g.lower() in ("yes", "no") for g in golds):
        return "yes_no"
    if golds and all(_LETTER.fullmatch(g) for g in golds) and all(i.options for i in items):
        return "mcq"
    return "vqa"
