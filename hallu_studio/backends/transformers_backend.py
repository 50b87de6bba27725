"""Any image-text-to-text checkpoint through ``AutoProcessor`` + ``AutoModelForImageTextToText``.

On CUDA the model loads in bf16 with ``device_map="auto"``; on CPU in float32.
Requests with the same settings are batched with left padding; on CUDA
out-of-memory the batch is halved and the run goes on (``batching.py``).
Detect-then-Calibrate decoding runs one request at a time in a custom greedy
loop with the KV cache, reading the hidden state of layer N - lambda at each step.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path
from typing import Any, Sequence

from .base import DetectThenCalibrate, GenerationRequest, GenerationResult
from .batching import run_with_oom_backoff
from .hf_presets import ModelPreset, preset_for, uses_chat_template
from .signals import candidate_distribution, candidate_raw_probs, dtc_choose, top_k_tokens

# Processors of these model types take one list of images per prompt.
_NESTED_IMAGE_TYPES = {"idefics3", "smolvlm", "mllama", "idefics2"}


def local_checkpoint_hash(path: str | os.PathLike[str]) -> str:
    """A content key of a local checkpoint: small files by content, weight files by name and size.

    Hashing multi-gigabyte weights on every run would cost minutes; a changed
    weight file practically always changes size or comes with a changed config.
    """
    h = hashlib.sha256()
    root = Path(path)
    for f in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = f.relative_to(root).as_posix()
        size = f.stat().st_size
        h.update(f"{rel}\0{size}\0".encode())
        if size < 5_000_000:
            h.update(f.read_bytes())
    return "local-" + h.hexdigest()[:16]


def load_processor(model_id: str, proc_kwargs: dict[str, Any]) -> Any:
    """``AutoProcessor`` for ``model_id``, falling back to what works without torchvision.

    Fast image processors need torchvision; the PIL ones do not. Qwen2-VL and
    Qwen2.5-VL processors also load a video processor, which needs torchvision
    whatever ``use_fast`` says; for those an image-only processor is built
    from the same files (``qwen_image_only_processor``).
    """
    from transformers import AutoConfig, AutoProcessor

    try:
        return AutoProcessor.from_pretrained(model_id, **proc_kwargs)
    except (ImportError, ValueError):
        pass
    try:
        return AutoProcessor.from_pretrained(model_id, use_fast=False, **proc_kwargs)
    except ImportError as exc:
        if "torchvision" not in str(exc).lower():
            raise
        model_type = getattr(AutoConfig.from_pretrained(model_id), "model_type", None)
        image_only = qwen_image_only_processor(model_type)
        if image_only is None:
            raise ImportError(f"the processor of {model_id!r} (model type {model_type!r}) needs torchvision, which "
                              f"cannot be imported here: {str(exc).strip().splitlines()[0]} Install a torchvision "
                              "build matching the installed torch") from exc
        return image_only.from_pretrained(model_id, use_fast=False, **proc_kwargs)


def qwen_image_only_processor(model_type: str | None) -> type | None:
    """A Qwen-VL processor class without the video processor, or None for other model types.

    ``Qwen2VLProcessor`` insists on a ``VideoProcessorMixin`` instance, a class
    that transformers only defines when torchvision imports. Images never touch
    it, so dropping ``video_processor`` from ``__init__`` (which is where
    ``ProcessorMixin`` reads the sub-processors from) leaves image prompts
    processed by the model's own code. Videos are not supported (the backend sends none).
    """
    from transformers import ProcessorMixin

    if model_type == "qwen2_vl":
        from transformers import Qwen2VLProcessor as base
    elif model_type == "qwen2_5_vl":
        from transformers import Qwen2_5_VLProcessor as base
    else:
        return None

    def __init__(self: Any, image_processor: Any = None, tokenizer: Any = None, chat_template: Any = None,
                 **kwargs: Any) -> None:
        # The same token lookup as the parent's __init__, which cannot be called without a video processor.
        self.image_token = getattr(tokenizer, "image_token", None) or "<|image_pad|>"
        self.video_token = getattr(tokenizer, "video_token", None) or "<|video_pad|>"
        self.image_token_id = getattr(tokenizer, "image_token_id", None) or tokenizer.convert_tokens_to_ids(
            self.image_token)
        self.video_token_id = getattr(tokenizer, "video_token_id", None) or tokenizer.convert_tokens_to_ids(
            self.video_token)
        ProcessorMixin.__init__(self, image_processor, tokenizer, chat_template=chat_template)

    return type(f"ImageOnly{base.__name__}", (base,), {"__init__": __init__, "__module__": __name__})


class TransformersBackend:
    kind = "transformers"
    synthetic = False
    supports_dtc = True

    def __init__(self, model_id: str, *, batch_size: int = 8, preset: ModelPreset | None = None,
                 device: str | None = None, dtype: str | None = None) -> None:
        self.model_id = model_id
        self.model = model_id
        self.batch_size = batch_size
        self.preset = preset or preset_for(model_id)
        self.device_request = device
        # A torch dtype's name ("float16" for GPUs without bf16); None: bf16 on CUDA, float32 on CPU.
        self.dtype_request = dtype
        self._model: Any = None
        self._processor: Any = None
        self.last_batch_size = batch_size

    # ----------------------------------------------------------------- loading
    def checkpoint(self) -> str:
        if Path(self.model_id).is_dir():
            return local_checkpoint_hash(self.model_id)
        from transformers import AutoConfig

        try:
            config = AutoConfig.from_pretrained(self.model_id)
        except OSError as exc:
            raise ValueError(f"cannot read the config of {self.model_id!r} ({exc}). With HF_HUB_OFFLINE=1 the "
                             "checkpoint must be downloaded first, or given as a local directory") from exc
        return str(getattr(config, "_commit_hash", None) or "unknown-revision")

    def load(self) -> None:
        if self._model is not None:
            return
        import torch
        from transformers import AutoModelForImageTextToText

        cuda = torch.cuda.is_available() if self.device_request is None else self.device_request.startswith("cuda")
        proc_kwargs = dict(self.preset.processor_kwargs) if self.preset else {}
        processor = load_processor(self.model_id, proc_kwargs)
        tokenizer = getattr(processor, "tokenizer", processor)
        tokenizer.padding_side = "left"
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        dtype = getattr(torch, self.dtype_request, None) if self.dtype_request else (torch.bfloat16 if cuda else torch.float32)
        if not isinstance(dtype, torch.dtype):
            raise ValueError(f"{self.dtype_request!r} is not a torch dtype (float32, bfloat16, float16)")
        load_kwargs: dict[str, Any] = {"dtype": dtype, "device_map": "auto"} if cuda else {"dtype": dtype}
        model = AutoModelForImageTextToText.from_pretrained(self.model_id, **load_kwargs).eval()
        if not cuda and self.device_request:
            model.to(self.device_request)
        self._processor, self._model = processor, model
        self._tokenizer = tokenizer
        self._model_type = getattr(model.config, "model_type", None)
        self._chat = uses_chat_template(self.model_id, self._model_type, self.preset)
        self._device = next(model.parameters()).device
        self._dtype = next(model.parameters()).dtype

    def close(self) -> None:
        self._model = None
        self._processor = None
        try:
            import torch

            if torch.cuda.is_available():
                torch.cuda.empty_cache()
        except ImportError:  # pragma: no cover
            pass

    # ----------------------------------------------------------------- public
    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        import torch

        self.load()
        with torch.inference_mode():
            return self._generate(requests)

    def _generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        results: list[GenerationResult | None] = [None] * len(requests)
        groups: dict[str, list[int]] = {}
        for i, r in enumerate(requests):
            key = json.dumps([r.generation, r.signals.to_dict(), r.dtc.to_dict() if r.dtc else None,
                              r.image is None, r.seed], sort_keys=True, default=str)
            groups.setdefault(key, []).append(i)
        for idxs in groups.values():
            group = [requests[i] for i in idxs]
            if group[0].dtc is not None:
                outs: list[Any] = [self._guarded(self._dtc_one, r) for r in group]
            else:
                outcome = run_with_oom_backoff(group, self.batch_size, self._generate_batch, on_oom=self._free)
                self.last_batch_size = outcome.final_batch_size
                outs = outcome.results
            for i, r, out in zip(idxs, group, outs):
                results[i] = out if isinstance(out, GenerationResult) else GenerationResult(
                    r.sample_id, error=f"{type(out).__name__}: {out}")
        return [r for r in results if r is not None]

    def _guarded(self, fn: Any, request: GenerationRequest) -> GenerationResult | BaseException:
        try:
            return fn(request)
        except Exception as exc:  # noqa: BLE001 - one request's failure is that request's result
            return exc

    def _free(self) -> None:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    # ----------------------------------------------------------------- inputs
    def _prompt_text(self, prompt: str, has_image: bool) -> str:
        if not self._chat:
            return prompt
        content: list[dict[str, str]] = [{"type": "image"}] if has_image else []
        content.append({"type": "text", "text": prompt})
        return self._processor.apply_chat_template([{"role": "user", "content": content}],
                                                   add_generation_prompt=True)

    def _inputs(self, requests: Sequence[GenerationRequest]) -> Any:
        from PIL import Image

        has_image = requests[0].image is not None
        texts = [self._prompt_text(r.prompt, has_image) for r in requests]
        kwargs: dict[str, Any] = {"text": texts, "return_tensors": "pt", "padding": True}
        if has_image:
            images = []
            for r in requests:
                try:
                    images.append(Image.open(io.BytesIO(r.image or b"")).convert("RGB"))
                except Exception as exc:  # noqa: BLE001 - PIL raises many kinds
                    raise ValueError(f"sample {r.sample_id}: the image cannot be decoded ({exc})") from exc
            kwargs["images"] = [[im] for im in images] if self._model_type in _NESTED_IMAGE_TYPES else images
        inputs = self._processor(**kwargs)
        out = {}
        for k, v in inputs.items():
            if hasattr(v, "to"):
                v = v.to(self._device)
                if v.is_floating_point():
                    v = v.to(self._dtype)
            out[k] = v
        return out

    def _gen_kwargs(self, generation: dict[str, Any]) -> dict[str, Any]:
        do_sample = bool(generation.get("do_sample", False))
        kw: dict[str, Any] = {"max_new_tokens": int(generation.get("max_new_tokens", 512)), "do_sample": do_sample,
                              "num_beams": int(generation.get("num_beams", 1)),
                              "pad_token_id": self._tokenizer.pad_token_id}
        if do_sample:
            kw.update(temperature=float(generation.get("temperature", 1.0)),
                      top_p=float(generation.get("top_p", 1.0)), top_k=int(generation.get("top_k", 50)))
        else:
            # Checkpoints often ship sampling defaults; greedy and beam must not inherit them.
            kw.update(temperature=None, top_p=None, top_k=None)
        return kw

    def _eos_ids(self) -> set[int]:
        eos = self._model.generation_config.eos_token_id
        ids = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        if self._tokenizer.eos_token_id is not None:
            ids.add(self._tokenizer.eos_token_id)
        return ids

    def candidate_groups(self, candidates: Sequence[str]) -> list[list[int]]:
        """Token ids whose first piece spells each candidate; ids shared by candidates are dropped."""
        tok = self._tokenizer
        groups: list[set[int]] = []
        for c in candidates:
            ids: set[int] = set()
            for variant in {c, c.lower(), c.capitalize(), " " + c, " " + c.capitalize()}:
                enc = tok.encode(variant, add_special_tokens=False)
                if enc and enc[0] != tok.unk_token_id and tok.decode([enc[0]]).strip():
                    ids.add(enc[0])
            groups.append(ids)
        shared = {i for g in groups for i in g if sum(i in h for h in groups) > 1}
        out = [sorted(g - shared) for g in groups]
        missing = [c for c, g in zip(candidates, out) if not g]
        if missing:
            raise ValueError(f"the tokenizer has no distinct token for answer candidates {missing}")
        return out

    # ----------------------------------------------------------------- batched generation
    def _generate_batch(self, requests: list[GenerationRequest]) -> list[GenerationResult]:
        import torch

        first = requests[0]
        inputs = self._inputs(requests)
        kw = self._gen_kwargs(first.generation)
        beams = kw["num_beams"]
        if kw["do_sample"]:
            torch.manual_seed(first.seed)
        out = self._model.generate(**inputs, **kw, return_dict_in_generate=True, output_scores=True,
                                   output_logits=True)
        prompt_len = inputs["input_ids"].shape[1]
        new = out.sequences[:, prompt_len:]
        eos = self._eos_ids()
        transition = None
        if first.signals.token_logprobs and beams > 1:
            transition = self._model.compute_transition_scores(out.sequences, out.scores, out.beam_indices,
                                                               normalize_logits=False)
        lens = self._logit_lens(inputs, first.signals.logit_lens_top_k) if first.signals.logit_lens_top_k else None
        groups = self.candidate_groups(first.signals.answer_candidates) if first.signals.answer_candidates else None
        results = []
        for b, r in enumerate(requests):
            ids = new[b].tolist()
            n = next((i for i, t in enumerate(ids) if t in eos), len(ids))
            kept = ids[:n]
            text = self._tokenizer.decode(kept, skip_special_tokens=True).strip()
            signals: dict[str, Any] = {}
            if r.signals.token_logprobs:
                if transition is not None:
                    lps = transition[b, :n].tolist()
                else:
                    lps = [float(torch.log_softmax(out.logits[t][b].float(), -1)[tok]) for t, tok in enumerate(kept)]
                signals["token_logprobs"] = [{"token": self._tokenizer.convert_ids_to_tokens(t), "logprob": lp}
                                             for t, lp in zip(kept, lps)]
                if beams > 1:
                    signals["token_logprobs_kind"] = "beam-search transition scores"
            if groups is not None:
                logits, probs, h = candidate_distribution(out.logits[0][b * beams], groups)
                signals["answer"] = {"candidates": list(r.signals.answer_candidates or ()), "logits": logits,
                                     "probs": probs, "entropy": h, "entropy_unit": "bits", "position": 0,
                                     "raw_probs": candidate_raw_probs(out.logits[0][b * beams], groups).tolist()}
            if lens is not None:
                signals["logit_lens"] = lens[b]
            results.append(GenerationResult(r.sample_id, text=text, signals=signals))
        return results

    # ----------------------------------------------------------------- logit lens
    def _final_norm(self) -> Any:
        decoder = self._model.get_decoder()
        norm = getattr(decoder, "norm", None) or getattr(decoder, "final_layernorm", None)
        if norm is None:
            raise NotImplementedError(f"logit lens: no final norm found on {type(decoder).__name__} (not supported yet)")
        return norm

    def layer_logits(self, hidden_states: Sequence[Any]) -> list[Any]:
        """Logits of the last position for each transformer layer 1..N (final norm + lm_head).

        The model's own last hidden state is already normalised (it equals the
        final logits), so the norm is applied to layers 1..N-1 only.
        """
        norm, head = self._final_norm(), self._model.get_output_embeddings()
        n = len(hidden_states) - 1
        return [head(hidden_states[j][:, -1, :] if j == n else norm(hidden_states[j][:, -1, :])) for j in
                range(1, n + 1)]

    def _logit_lens(self, inputs: dict[str, Any], k: int) -> list[dict[str, Any]]:
        out = self._model(**inputs, output_hidden_states=True)
        per_layer = self.layer_logits(out.hidden_states)
        lens = []
        for b in range(inputs["input_ids"].shape[0]):
            layers = []
            for j, lg in enumerate(per_layer, start=1):
                ids, probs = top_k_tokens(lg[b], k)
                layers.append({"layer": j, "tokens": self._tokenizer.convert_ids_to_tokens(ids), "probs": probs})
            lens.append({"position": 0, "top_k": k, "layers": layers})
        return lens

    # ----------------------------------------------------------------- Detect-then-Calibrate
    def _forget_rope_deltas(self) -> None:
        """Drop the M-RoPE offset a previous request left on a Qwen-VL model (see ``_step_positions``)."""
        inner = getattr(self._model, "model", None)
        if getattr(inner, "rope_deltas", None) is not None:
            inner.rope_deltas = None

    def _step_positions(self, pos: int) -> dict[str, Any]:
        """Explicit positions of a decode step at cache position ``pos`` for M-RoPE models (Qwen2-VL).

        Outside ``generate()`` their forward derives positions from the whole
        attention mask, one per cached token, instead of one for the new token.
        A text token after the prompt sits at ``pos + rope_deltas`` on all three
        (time, height, width) axes, where the prefill stored ``rope_deltas``.
        """
        deltas = getattr(getattr(self._model, "model", None), "rope_deltas", None)
        if deltas is None:
            return {}
        return {"position_ids": (deltas.reshape(1, -1, 1) + pos).expand(3, -1, 1).to(self._device)}

    def _dtc_one(self, request: GenerationRequest) -> GenerationResult:
        import torch

        dtc: DetectThenCalibrate = request.dtc  # type: ignore[assignment]
        gen = request.generation
        if gen.get("do_sample") or int(gen.get("num_beams", 1)) > 1:
            raise ValueError("Detect-then-Calibrate decodes greedily (Reefknot Algorithm 1); use --generation greedy")
        inputs = self._inputs([request])
        groups = self.candidate_groups(request.signals.answer_candidates) if request.signals.answer_candidates else None
        eos = self._eos_ids()
        norm, head = self._final_norm(), self._model.get_output_embeddings()
        mask = inputs["attention_mask"]
        steps: list[dict[str, Any]] = []
        kept: list[int] = []
        logprobs: list[float] = []
        answer: dict[str, Any] | None = None
        self._forget_rope_deltas()
        # generate() runs this under torch.inference_mode
        out = self._model(**inputs, use_cache=True, output_hidden_states=True)
        pos = inputs["input_ids"].shape[1]
        for step in range(int(gen.get("max_new_tokens", 512))):
            n = len(out.hidden_states) - 1
            if dtc.lam < 1 or dtc.lam >= n:
                raise ValueError(f"Detect-then-Calibrate lambda={dtc.lam} needs 1 <= lambda < {n} layers")
            final = out.logits[:, -1, :]
            early = head(norm(out.hidden_states[n - dtc.lam][:, -1, :]))
            step_groups = groups if step == 0 else None
            scores, h, calibrated = dtc_choose(final, early, alpha=dtc.alpha, gamma=dtc.gamma,
                                               candidate_groups=step_groups, raw=dtc.entropy == "released")
            token = int(scores[0].argmax())
            steps.append({"step": step, "token": self._tokenizer.convert_ids_to_tokens(token),
                          "entropy": float(h[0]), "calibrated": bool(calibrated[0]),
                          "entropy_over": ("candidates (raw)" if dtc.entropy == "released" else "candidates")
                          if step_groups else "vocabulary"})
            if step == 0 and groups is not None:
                c_logits, probs, ent = candidate_distribution(final[0], groups)
                answer = {"candidates": list(request.signals.answer_candidates or ()), "logits": c_logits,
                          "probs": probs, "entropy": ent, "entropy_unit": "bits", "position": 0,
                          "raw_probs": candidate_raw_probs(final[0], groups).tolist()}
            if token in eos:
                break
            kept.append(token)
            logprobs.append(float(torch.log_softmax(final[0].float(), -1)[token]))
            mask = torch.cat([mask, mask.new_ones((1, 1))], dim=1)
            out = self._model(input_ids=torch.tensor([[token]], device=self._device), attention_mask=mask,
                              past_key_values=out.past_key_values, use_cache=True, output_hidden_states=True,
                              cache_position=torch.tensor([pos], device=self._device), **self._step_positions(pos))
            pos += 1
        signals: dict[str, Any] = {"dtc": {**dtc.to_dict(), "entropy_unit": "bits", "steps": steps}}
        if request.signals.token_logprobs:
            signals["token_logprobs"] = [{"token": self._tokenizer.convert_ids_to_tokens(t), "logprob": lp}
                                         for t, lp in zip(kept, logprobs)]
        if answer is not None:
            signals["answer"] = answer
        text = self._tokenizer.decode(kept, skip_special_tokens=True).strip()
        return GenerationResult(request.sample_id, text=text, signals=signals)


__all__ = ["TransformersBackend", "load_processor", "local_checkpoint_hash", "qwen_image_only_processor"]
