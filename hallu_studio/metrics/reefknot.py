"""Reefknot (§2–3): relation hallucination on Y/N, multiple-choice and VQA questions.

Answer reading (``scoring.reefknot_reading``), the project's or the released code's:

- **Y/N**: ``studio`` (default): "yes" when the *word* yes appears in the answer, else "no";
  ``released``: when the letters "yes" appear anywhere in it, lower-cased ("Yesterday it was." reads yes;
  an empty answer reads no, and is right when the label is no);
- **MCQ**: ``studio``: the answer's first letter after leading spaces, compared with the gold letter
  (" A" and "\\nA" read A); ``released``: its first character as it stands (" A" reads " ", wrong);
- **VQA**: with an NLI model, the label and the answer must entail each other
  (``BidirectionalEntailment``, argmax = entailment both ways, the paper's Figure 15);
  without one, ``RelationPhraseMatch`` parses the relation out of "s is R o" and
  compares it with the gold relation: the same normalised words (lower case, articles
  and copulas dropped, crude suffix stripping); else the lexicon's predicates, which
  match when each entails the other ("on top of" / "on", "holding" / "grasping") and
  differ when both are bare prepositions ("on" / "under"); else, optionally, embedding
  cosine. It is an offline approximation, named as such in the evidence.

A wrong answer is a hallucination, and so is an empty one (but for yes/no under ``released``). Per task, Halr = 100 × hallucinated / n,
also per relation category (perception / cognition); R_score = mean over the three
tasks of (100 − Halr) (eq. 1; only when all three tasks are present). Y/N also gets
its yes-ratio and confusion counts, MCQ a gold→answer confusion.

Entropy (eq. 2) over the answer candidates, in **bits** (the project's signal convention,
``docs/running_models.md``): read from the run's ``signals["answer"]`` (``{"candidates",
"probs" or "logits", "raw_probs", ...}``, written by the backends) or from ``signals["answer_logprobs"] =
{candidate: logprob}`` (recorded runs). Two readings (``decoding.entropy_reading``):

- ``studio`` (default): the candidates' probabilities renormalised to sum to 1, a proper distribution
  whose entropy is at most 1 bit for yes/no; flagged when E > ``entropy_threshold``;
- ``released``: the raw probabilities the model gives the candidates out of its whole vocabulary, as the
  released ``entropy_vector`` and Detect-then-Calibrate take them (``raw_probs``, or the recorded
  log-probabilities); flagged when E ≥ the threshold, DTC's comparison.

At raw (0.6, 0.2): released 0.907 bits, flagged at γ = 0.9; renormalised (0.75, 0.25): 0.811, not flagged.
The threshold defaults to 0.9 bits (Reefknot's γ in ``DecodingSettings``; ≈ 0.62 nats, next to §3.2's
0.6), and ``compute`` reports how well the flag finds hallucinations.

Worked example. Y/N: 4 answers, 1 wrong → Halr 25; MCQ: 2 answers, 1 wrong → Halr 50;
VQA: 4 answers, 2 wrong → Halr 50. R_score = (75 + 50 + 50) / 3 = 58.33.
Entropy of {yes: 0.5, no: 0.5} = 1 bit > 0.9 → flagged; of {yes: 0.9, no: 0.1} = 0.469 bits → not.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections import defaultdict
from typing import TYPE_CHECKING, Any, Mapping, Protocol, Sequence

import numpy as np

from ..config import READINGS
from ..judges.base import PhraseEncoder, unit_rows
from ..judges.nli import NLIModel
from ..lexicon.predicates import entails, parse_predicate
from ..model import Sample
from .base import ItemResult, ScoringItem
from .evidence import EvidenceRow, answer_rows
from .flagging import whole_answer_if
from .spec import MetricSpec, Number, Plot

if TYPE_CHECKING:
    from ..config import Settings

REEFKNOT_TASKS: tuple[str, ...] = ("yes_no", "mcq", "vqa")
ANSWER_SIGNAL = "answer"  # {"candidates", "probs" | "logits", "entropy", "entropy_unit": "bits", ...}
LOGPROBS_SIGNAL = "answer_logprobs"  # {candidate: logprob}

_VQA_PROMPT = re.compile(r"relation with (?P<s>.+?) and (?P<o>.+?) in this photo", re.IGNORECASE)
_FORMAT = re.compile(r"format\s*:\s*(?P<s>.+?)\s+(?:is|are)\s+<relation>\s+(?P<o>.+?)\s*\.?\s*$", re.IGNORECASE)
_DROP = {"the", "a", "an", "is", "are", "be", "being"}


def parse_yes_no(response: str, reading: str = "studio") -> str:
    """ "yes" or "no" (see the module docstring for the two readings).

    >>> parse_yes_no("Yesterday it was."), parse_yes_no("Yesterday it was.", "released")
    ('no', 'yes')
    """
    if reading == "released":
        return "yes" if "yes" in response.strip().lower() else "no"
    return "yes" if re.search(r"\byes\b", response.lower()) else "no"


def parse_choice(response: str, reading: str = "studio") -> str | None:
    """The letter an MCQ answer chooses, upper case; None when there is none.

    >>> parse_choice(" A"), parse_choice("\\nA"), parse_choice(" A", "released"), parse_choice("\\nA", "released")
    ('A', 'A', ' ', '\\n')
    """
    if reading == "released":
        return response[:1].upper() or None
    first = response.strip()[:1].upper()
    return first if first.isalpha() else None


def parse_vqa_prompt(prompt: str) -> tuple[str, str] | None:
    """(subject, object) out of Reefknot's VQA template; the format line wins when present."""
    m = _FORMAT.search(prompt) or _VQA_PROMPT.search(prompt)
    return (m.group("s").strip(), m.group("o").strip()) if m else None


def _stem(word: str) -> str:
    # Crude on purpose: applied the same way to both sides, it only has to agree with itself.
    for suffix, repl in (("ies", "y"), ("ing", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: len(word) - len(suffix)] + repl
            break
    if len(word) > 3 and word[-1] == word[-2]:  # sitt -> sit
        word = word[:-1]
    return word


def normalise_relation(text: str) -> str:
    """Lower-case stemmed words without articles and copulas; the bare words if nothing else is left."""
    words = re.findall(r"[a-z]+", text.lower())
    kept = [_stem(w) for w in words if w not in _DROP]
    return " ".join(kept or words)


def relation_between(text: str, subject: str, obj: str) -> str | None:
    """The words between ``subject`` and the last ``obj`` in ``text`` ("man is on stair railing" → "is on")."""
    low = text.lower()
    s_at = low.find(subject.lower())
    o_at = low.rfind(obj.lower())
    if s_at < 0 or o_at < 0 or o_at <= s_at + len(subject):
        return None
    return text[s_at + len(subject):o_at].strip()


class VQAMatcher(Protocol):
    name: str

    def config(self) -> dict[str, Any]: ...

    def correct(self, label: str, response: str, prompt: str) -> tuple[bool, str]:
        """Whether the answer matches the label, and what was compared."""


class BidirectionalEntailment:
    name = "bidirectional-entailment"

    def __init__(self, nli: NLIModel) -> None:
        self.nli = nli

    def config(self) -> dict[str, Any]:
        return {"vqa": self.name, "nli_model": self.nli.path}

    def correct(self, label: str, response: str, prompt: str) -> tuple[bool, str]:
        forward, backward = self.nli.entails([(label, response), (response, label)])
        return forward and backward, f"entails label: {forward}; entailed by label: {backward}"


class RelationPhraseMatch:
    """Offline VQA check: the relation phrase of the answer vs the gold relation (not an NLI model)."""

    name = "relation-phrase-match"

    def __init__(self, encoder: PhraseEncoder | None = None, *, threshold: float = 0.8, model_name: str = "") -> None:
        self.encoder = encoder
        self.threshold = threshold
        self.model_name = model_name or (getattr(encoder, "model_name", type(encoder).__name__) if encoder else "")
        self._vectors: dict[str, np.ndarray] = {}  # unit vectors of the last ``prepare`` batch

    def config(self) -> dict[str, Any]:
        return {"vqa": self.name, "model": self.model_name or None,
                "threshold": self.threshold if self.encoder else None}

    @staticmethod
    def _relations(label: str, response: str, prompt: str) -> tuple[str, str, str, str]:
        """(gold, said, normalised gold, normalised said)."""
        ends = parse_vqa_prompt(prompt)
        gold = relation_between(label, *ends) if ends else None
        said = relation_between(response, *ends) if ends else None
        if gold is None or said is None:  # not in the template's shape: compare the whole sentences
            gold, said = label, response
        return gold, said, normalise_relation(gold), normalise_relation(said)

    def prepare(self, triples: Sequence[tuple[str, str, str]]) -> None:
        """Encode the relation phrases of many ``(label, response, prompt)`` in ONE encoder call.

        One call per answer costs a model forward pass each (about 100x slower on CPU);
        ``correct`` then reads the vectors of this batch.
        """
        self._vectors = {}
        if self.encoder is None:
            return
        phrases: set[str] = set()
        for label, response, prompt in triples:
            _, _, g, s = self._relations(label, response, prompt)
            if g and s and g != s:
                phrases.update((g, s))
        if phrases:
            texts = sorted(phrases)
            self._vectors = dict(zip(texts, unit_rows(self.encoder.encode(texts))))

    def correct(self, label: str, response: str, prompt: str) -> tuple[bool, str]:
        gold, said, g, s = self._relations(label, response, prompt)
        if g and g == s:
            return True, f"relation {said!r} = gold {gold!r} (normalised words)"
        pg, ps = parse_predicate(gold), parse_predicate(said)
        if not pg.copula and not ps.copula:
            if entails(pg, ps) and entails(ps, pg):
                return True, f"relation {said!r} says what gold {gold!r} says (lexicon: {ps.text()!r})"
            if pg.verb is None and ps.verb is None and pg.prep != ps.prep and not pg.passive and not ps.passive:
                return False, f"relation {said!r} ({ps.text()!r}) != gold {gold!r} ({pg.text()!r}) (lexicon)"
        if self.encoder is not None and g and s:
            if g in self._vectors and s in self._vectors:
                vecs = np.stack([self._vectors[g], self._vectors[s]])
            else:
                vecs = unit_rows(self.encoder.encode([g, s]))
            sim = float(vecs[0] @ vecs[1])
            return sim >= self.threshold, f"relation {said!r} vs gold {gold!r}: cosine {sim:.2f}"
        return False, f"relation {said!r} != gold {gold!r}"


def _numbers(values: Any) -> list[float]:
    out = []
    for v in values if isinstance(values, (list, tuple)) else []:
        try:
            out.append(float(v) if v is not None else -math.inf)  # a None logit: the candidate had p = 0
        except (TypeError, ValueError):
            return []
    return out


def candidate_entropy(logprobs: dict[str, Any] | Sequence[float], *, are_probs: bool = False) -> float | None:
    """Eq. 2 in bits over the candidates, renormalised; None when fewer than two candidates are usable.

    ``logprobs``: ``{candidate: logprob}`` or a list of log-probabilities / logits
    (or of probabilities with ``are_probs``).
    """
    values = _numbers(list(logprobs.values()) if isinstance(logprobs, dict) else list(logprobs))
    if are_probs:
        values = [math.log(v) if v > 0 else -math.inf for v in values]
    finite = [v for v in values if math.isfinite(v)]
    if len(values) < 2 or not finite:
        return None
    lp = np.array([v if math.isfinite(v) else -np.inf for v in values])
    p = np.exp(lp - max(finite))
    p /= p.sum()
    nz = p[p > 0]
    return float(-(nz * np.log2(nz)).sum())


def raw_entropy(probs: Sequence[Any]) -> float | None:
    """The released ``entropy_vector``: -Σ p log2 p over the candidates' raw probabilities, as they are (not
    renormalised; zeros left out); None when fewer than two candidates are usable.

    >>> round(raw_entropy([0.6, 0.2]), 3), round(candidate_entropy([0.6, 0.2], are_probs=True), 3)
    (0.907, 0.811)
    """
    values = _numbers(list(probs))
    if len(values) < 2 or any(not math.isfinite(v) or v < 0 for v in values):
        return None
    return float(-sum(p * math.log2(p) for p in values if p > 0))


def signal_entropy(signals: Any, reading: str = "studio") -> float | None:
    """The answer entropy (bits) from ``signals["answer"]`` or ``signals["answer_logprobs"]``; ``reading``
    "released" takes the raw probabilities (``raw_entropy``), None where the run did not record them."""
    if not isinstance(signals, dict):
        return None
    answer = signals.get(ANSWER_SIGNAL)
    logprobs = signals.get(LOGPROBS_SIGNAL)
    if reading == "released":
        if isinstance(answer, dict) and answer.get("raw_probs") is not None:
            return raw_entropy(answer["raw_probs"])
        if isinstance(logprobs, dict):
            values = _numbers(list(logprobs.values()))
            return raw_entropy([math.exp(v) for v in values]) if values else None
        return None
    if isinstance(answer, dict):
        if answer.get("probs") is not None:
            return candidate_entropy(answer["probs"], are_probs=True)
        if answer.get("logits") is not None:
            return candidate_entropy(answer["logits"])
    return candidate_entropy(logprobs) if isinstance(logprobs, dict) else None


def evidence_rows(values: Mapping[str, Any], evidence: Mapping[str, Any], text: str) -> list[EvidenceRow]:
    """The answer read against the relation's label, with its entropy where recorded.

    >>> r = evidence_rows({"correct": False, "entropy": 0.4}, {"parsed_answer": "no", "label": "yes"}, "No")[0]
    >>> r.verdict_words, r.score
    ('wrong (answer)', 0.4)
    """
    rows = answer_rows(values, evidence, text)
    entropy = values.get("entropy")
    if rows and isinstance(entropy, (int, float)):
        rows = [dataclasses.replace(rows[0], score=float(entropy), score_name="answer entropy")]
    return rows


def _needs_relation(sample: Sample) -> str | None:
    if sample.relation_category is None:
        return "reefknot needs a relation question (a sample with a relation category)"
    return None


class ReefknotMetric:
    spec = MetricSpec(
        "reefknot", "Reefknot", tasks=REEFKNOT_TASKS, needs=_needs_relation,
        headline=Number("r_score", "R_score", "%", lower_is_better=False,
                        plain="% of questions about how things relate in the image answered without a made-up "
                              "relation",
                        meaning="mean of 100 − Halr over the yes/no, multiple-choice and open relation questions.",
                        misleads="only defined when all three question types were answered; yes-bias inflates "
                                 "yes/no accuracy."),
        summary=("halr.yes_no", "halr.mcq", "halr.vqa"),
        item=Number("hallucinated", "hallucinated answer", "1 = yes", lower_is_better=True,
                    meaning="whether this answer gets the relation wrong (Halr is the share of these)."),
        higher_is_better_values=frozenset({"correct"}), flags_words=False,
        evidence_rows=evidence_rows, panel="logit_lens",
        flagged_spans=lambda values, evidence, text, concepts=None: whole_answer_if(bool(values.get("hallucinated")),
                                                                                    text),
        plots=(Plot("mean_by", "Halr by task and relation category", "hallucinated answers",
                    "Halr, answers with a wrong relation (%)", ("hallucinated",), by=("task", "relation_category"),
                    scale=100.0),),
        demo=True,
        settings=("scoring.reefknot_reading", "decoding.entropy_reading", "decoding.dtc_gamma", "scoring.nli_model",
                  "scoring.embedding_model"))
    name = spec.name

    def __init__(self, vqa_matcher: VQAMatcher | None = None, *, entropy_threshold: float = 0.9,
                 reading: str = "studio", entropy_reading: str = "studio") -> None:
        for what, value in (("reading", reading), ("entropy reading", entropy_reading)):
            if value not in READINGS:
                raise ValueError(f"unknown Reefknot {what} {value!r}; choose {' | '.join(READINGS)}")
        self.vqa_matcher = vqa_matcher or RelationPhraseMatch()
        self.entropy_threshold = entropy_threshold
        self.reading = reading
        self.entropy_reading = entropy_reading

    @classmethod
    def from_settings(cls, settings: "Settings", *, encoder: PhraseEncoder | None = None) -> "ReefknotMetric":
        """Bidirectional entailment when ``scoring.nli_model`` is set, else the offline relation-phrase match."""
        nli = settings.scoring.nli_model
        matcher: VQAMatcher = (BidirectionalEntailment(NLIModel(nli)) if nli
                               else RelationPhraseMatch(encoder, model_name=settings.scoring.embedding_identity
                                                        if encoder is not None else ""))
        return cls(matcher, entropy_threshold=settings.decoding.dtc_gamma, reading=settings.scoring.reefknot_reading,
                   entropy_reading=settings.decoding.entropy_reading)

    def config(self) -> dict[str, Any]:
        released = self.reading == "released"
        return {"metric": self.name, "yes_no": "letters yes anywhere" if released else "word yes appears",
                "mcq": "first character" if released else "first letter", **self.vqa_matcher.config(),
                "entropy_threshold_bits": self.entropy_threshold,
                "entropy": "raw probabilities, flagged at or above" if self.entropy_reading == "released"
                else "renormalised, flagged above"}

    def update(self, item: ScoringItem) -> ItemResult:
        sample, task = item.sample, item.sample.task
        values: dict[str, Any] = {"task": task, "correct": None, "hallucinated": None, "answered_yes": None,
                                  "entropy": None}
        if task not in REEFKNOT_TASKS:
            return ItemResult({}, values, {}, f"task {task!r} is not a Reefknot task ({', '.join(REEFKNOT_TASKS)})")
        label = (sample.answer or "").strip()
        if not label:
            return ItemResult({}, values, {}, f"sample {sample.id} has no gold label")
        response = item.response or ""
        released = self.reading == "released"
        if task == "yes_no":
            parsed = parse_yes_no(response, self.reading)
            method = "letters 'yes' anywhere (released code)" if released else "word 'yes' appears"
            correct = parsed == label.lower()
        elif task == "mcq":
            parsed = parse_choice(response, self.reading) or ""
            method = "first character as it stands (released code)" if released else "first letter"
            correct = parsed == (label.upper() if released else label.upper()[:1])
        else:
            parsed = response.strip()
            correct, method = self.vqa_matcher.correct(label, response, sample.question or "")
            method = f"{self.vqa_matcher.name}: {method}"
        if released and task == "yes_no" and not response.strip():
            method += "; an empty answer reads no, as in the released code"
        elif not response.strip():
            correct, method = False, method + "; empty answer counts as wrong"
        category = sample.relation_category or "unknown"
        stats: dict[str, float] = defaultdict(float)
        for prefix in (task, f"{task}.{category}"):
            stats[f"{prefix}.n"] = 1.0
            stats[f"{prefix}.hallucinated"] = float(not correct)
        if task == "yes_no":
            truth_yes = label.lower() == "yes"
            said_yes = parsed == "yes"
            stats["yes_no.answered_yes"] = float(said_yes)
            stats[f"yes_no.{'t' if said_yes == truth_yes else 'f'}{'p' if said_yes else 'n'}"] = 1.0
            values["answered_yes"] = said_yes
        elif task == "mcq":
            stats[f"mcq.confusion.{label.upper()[:1]}>{parsed.strip() or '?'}"] = 1.0
        entropy = signal_entropy(item.signals, self.entropy_reading)
        if entropy is not None:
            flagged = (entropy >= self.entropy_threshold if self.entropy_reading == "released"
                       else entropy > self.entropy_threshold)
            stats["entropy.n"] = 1.0
            stats["entropy.sum"] = entropy
            stats["entropy.flagged"] = float(flagged)
            stats["entropy.hallucinated"] = float(not correct)
            stats["entropy.flagged_hallucinated"] = float(flagged and not correct)
        values.update(correct=correct, hallucinated=not correct, entropy=entropy)
        return ItemResult(dict(stats), values, {"parsed_answer": parsed, "label": label, "method": method})

    def update_many(self, items: Sequence[ScoringItem]) -> list[ItemResult]:
        """``update`` on each item, the VQA answers' relation phrases encoded in one batch first."""
        prepare = getattr(self.vqa_matcher, "prepare", None)
        if prepare is not None:
            prepare([((i.sample.answer or "").strip(), i.response or "", i.sample.question or "")
                     for i in items if i.sample.task == "vqa"])
        return [self.update(i) for i in items]

    def compute(self, stats: Sequence[dict[str, float]]) -> dict[str, float]:
        total: dict[str, float] = defaultdict(float)
        for s in stats:
            for k, v in s.items():
                total[k] += v
        out: dict[str, float] = {}
        for key, n in total.items():
            if key.endswith(".n") and not key.startswith("entropy") and n:
                prefix = key[:-2]
                out[f"halr.{prefix}"] = 100.0 * total[f"{prefix}.hallucinated"] / n
                out[f"n.{prefix}"] = n
        if all(f"halr.{t}" in out for t in REEFKNOT_TASKS):
            out["r_score"] = sum(100.0 - out[f"halr.{t}"] for t in REEFKNOT_TASKS) / len(REEFKNOT_TASKS)
        if total.get("yes_no.n"):
            out["yes_ratio"] = total["yes_no.answered_yes"] / total["yes_no.n"]
            for cell in ("tp", "fp", "tn", "fn"):
                out[f"yes_no.{cell}"] = total.get(f"yes_no.{cell}", 0.0)
        out.update({k: v for k, v in total.items() if k.startswith("mcq.confusion.")})
        if total.get("entropy.n"):
            out["entropy.mean"] = total["entropy.sum"] / total["entropy.n"]
            out["entropy.flagged_share"] = total["entropy.flagged"] / total["entropy.n"]
            if total["entropy.flagged"]:
                out["entropy.detection_precision"] = total["entropy.flagged_hallucinated"] / total["entropy.flagged"]
            if total["entropy.hallucinated"]:
                out["entropy.detection_recall"] = total["entropy.flagged_hallucinated"] / total["entropy.hallucinated"]
        return out
