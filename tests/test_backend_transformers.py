"""The transformers backend on a tiny random LLaVA built at test time (no downloads)."""

import io
import math

import pytest
import torch
from PIL import Image

from hallu_studio.backends import make_backend
from hallu_studio.backends.base import DetectThenCalibrate, GenerationRequest, SignalRequest
from tiny_models import build_tiny_llava, tiny_benchmark
from hallu_studio.backends.transformers_backend import TransformersBackend
from hallu_studio.pipelines.running import RunOptions, execute_run
from hallu_studio.prompts import generation_preset

PROMPTS = ["is there a cat ?", "describe the image in detail .", "is the dog on the table next to the chair ?",
           "what is red ?", "is the man near a large white table ?"]


@pytest.fixture(scope="session")
def tiny_llava_dir(tmp_path_factory):
    return build_tiny_llava(tmp_path_factory.mktemp("tiny-llava"))


@pytest.fixture(scope="module")
def backend(tiny_llava_dir):
    b = make_backend(f"transformers:{tiny_llava_dir}", batch_size=4)
    b.load()
    return b


def _png(colour):
    buf = io.BytesIO()
    Image.new("RGB", (40 + colour[0] % 17, 30), colour).save(buf, "PNG")
    return buf.getvalue()


def _requests(n=5, generation="greedy", tokens=6, signals=SignalRequest(token_logprobs=True), dtc=None, image=True):
    return [GenerationRequest(f"s{i}", PROMPTS[i % len(PROMPTS)], _png((40 * i, 90, 200)) if image else None,
                              generation_preset(generation, tokens), signals, dtc) for i in range(n)]


def _prompt_inputs(backend, request):
    return backend._inputs([request])


def test_loads_through_the_auto_classes_on_cpu_in_float32(backend, tiny_llava_dir):
    assert isinstance(backend, TransformersBackend)
    assert type(backend._model).__name__ == "LlavaForConditionalGeneration"
    assert backend._dtype == torch.float32 and backend._device.type == "cpu"
    assert backend.checkpoint().startswith("local-") and backend.checkpoint() == backend.checkpoint()


def test_batched_greedy_equals_one_by_one(backend):
    reqs = _requests(5)
    batched = backend.generate(reqs)
    single = [backend.generate([r])[0] for r in reqs]
    assert all(r.ok for r in batched), [r.error for r in batched]
    assert [r.text for r in batched] == [r.text for r in single]
    assert len({r.text for r in batched}) > 1  # different inputs, different outputs: the test can fail
    for a, b in zip(batched, single):
        la = [t["logprob"] for t in a.signals["token_logprobs"]]
        lb = [t["logprob"] for t in b.signals["token_logprobs"]]
        assert la == pytest.approx(lb, abs=1e-4)


def test_token_logprobs_match_a_teacher_forced_forward_pass(backend):
    req = _requests(1, tokens=3)[0]
    res = backend.generate([req])[0]
    inputs = _prompt_inputs(backend, req)
    with torch.no_grad():
        logits = backend._model(**inputs).logits[0, -1]
    first = res.signals["token_logprobs"][0]
    tok = backend._tokenizer.convert_tokens_to_ids(first["token"])
    assert int(logits.argmax()) == tok
    assert first["logprob"] == pytest.approx(float(torch.log_softmax(logits, -1)[tok]), abs=1e-5)


def test_answer_candidate_entropy_is_reefknot_eq2_in_bits(backend):
    req = _requests(1, signals=SignalRequest(answer_candidates=("yes", "no")))[0]
    ans = backend.generate([req])[0].signals["answer"]
    inputs = _prompt_inputs(backend, req)
    with torch.no_grad():
        logits = backend._model(**inputs).logits[0, -1]
    groups = backend.candidate_groups(["yes", "no"])
    expected = [float(torch.logsumexp(logits[g], -1)) for g in groups]
    assert ans["logits"] == pytest.approx(expected, abs=1e-5)
    p = torch.softmax(torch.tensor(expected), -1).tolist()
    assert ans["probs"] == pytest.approx(p, abs=1e-6)
    assert ans["entropy"] == pytest.approx(-sum(x * math.log2(x) for x in p), abs=1e-6)
    assert ans["entropy_unit"] == "bits"


def test_beam_and_nucleus(backend):
    beam = backend.generate(_requests(2, generation="beam", tokens=5))
    assert all(r.ok and r.text for r in beam), [r.error for r in beam]
    assert beam[0].signals["token_logprobs_kind"] == "beam-search transition scores"
    nucleus_a = backend.generate(_requests(2, generation="nucleus", tokens=5))
    nucleus_b = backend.generate(_requests(2, generation="nucleus", tokens=5))
    assert [r.text for r in nucleus_a] == [r.text for r in nucleus_b]  # same seed, same sample


def test_logit_lens_applies_final_norm_and_lm_head_per_layer(backend):
    req = _requests(1, signals=SignalRequest(logit_lens_top_k=3))[0]
    lens = backend.generate([req])[0].signals["logit_lens"]
    n_layers = backend._model.config.text_config.num_hidden_layers
    assert [x["layer"] for x in lens["layers"]] == list(range(1, n_layers + 1))
    inputs = _prompt_inputs(backend, req)
    with torch.no_grad():
        out = backend._model(**inputs, output_hidden_states=True)
        decoder = backend._model.get_decoder()
        first = backend._model.lm_head(decoder.norm(out.hidden_states[1][0, -1]))
    assert lens["layers"][0]["tokens"][0] == backend._tokenizer.convert_ids_to_tokens(int(first.argmax()))
    assert lens["layers"][-1]["tokens"][0] == backend._tokenizer.convert_ids_to_tokens(int(out.logits[0, -1].argmax()))
    assert lens["layers"][-1]["probs"][0] == pytest.approx(float(torch.softmax(out.logits[0, -1], -1).max()), abs=1e-5)


def test_detect_then_calibrate_follows_the_formula(backend):
    reqs = _requests(5, tokens=4, signals=SignalRequest(answer_candidates=("yes", "no")))
    never = backend.generate([GenerationRequest(r.sample_id, r.prompt, r.image, r.generation, r.signals,
                                                DetectThenCalibrate(0.1, 1, float("inf"))) for r in reqs])
    plain = backend.generate(reqs)
    assert [r.text for r in never] == [r.text for r in plain]  # gamma = inf: plain greedy decoding
    always = backend.generate([GenerationRequest(r.sample_id, r.prompt, r.image, r.generation, r.signals,
                                                 DetectThenCalibrate(0.1, 1, 0.0)) for r in reqs])
    differs = 0
    for r, res, base in zip(reqs, always, plain):
        inputs = _prompt_inputs(backend, r)
        with torch.no_grad():
            out = backend._model(**inputs, output_hidden_states=True)
            final = out.logits[0, -1]
            early = backend._model.lm_head(backend._model.get_decoder().norm(out.hidden_states[1][0, -1]))
        formula = torch.log(1.1 * torch.softmax(final, -1) / (0.1 * torch.softmax(early, -1)))
        step = res.signals["dtc"]["steps"][0]
        assert step["calibrated"] is True
        assert step["token"] == backend._tokenizer.convert_ids_to_tokens(int(formula.argmax()))
        differs += step["token"] != backend._tokenizer.convert_ids_to_tokens(int(final.argmax()))
    assert differs > 0  # the calibration changed at least one answer


def test_dtc_needs_greedy_and_a_valid_lambda(backend):
    bad = backend.generate(_requests(1, generation="beam", dtc=DetectThenCalibrate()))
    assert not bad[0].ok and "greedily" in bad[0].error
    bad = backend.generate(_requests(1, dtc=DetectThenCalibrate(lam=7)))
    assert not bad[0].ok and "lambda" in bad[0].error


def test_text_only_requests_and_bad_images(backend):
    res = backend.generate(_requests(2, image=False))
    assert all(r.ok for r in res)
    broken = GenerationRequest("bad", "is there a cat ?", b"not an image", generation_preset("greedy", 3))
    res = backend.generate([broken, *_requests(1)])
    assert not res[0].ok and "cannot be decoded" in res[0].error
    # the bad image fails its batch; the good request is its own group only if settings differ, so check order
    assert res[0].sample_id == "bad" and len(res) == 2


def test_oom_halves_the_batch_and_goes_on(backend, monkeypatch):
    real = backend._generate_batch
    sizes = []

    def fake(chunk):
        sizes.append(len(chunk))
        if len(chunk) > 2:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return real(chunk)

    monkeypatch.setattr(backend, "_generate_batch", fake)
    res = backend.generate(_requests(5))
    assert all(r.ok for r in res) and backend.last_batch_size == 2
    assert sizes[:3] == [4, 2, 2]


def test_pipeline_run_with_the_tiny_model(store, tiny_llava_dir):
    bench, samples, images = tiny_benchmark(n_images=1)
    store.add_samples(bench, samples, images)
    backend = make_backend(f"transformers:{tiny_llava_dir}", batch_size=4)
    summary = execute_run(store, backend, RunOptions(benchmark=bench.name, max_new_tokens=4, chunk_size=4),
                          progress=False)
    assert summary.done == len(samples) and summary.failed == 0
    run = store.get_run(summary.run_id)
    assert run.backend == "transformers" and not run.synthetic and run.checkpoint.startswith("local-")
    by_task = {store.get_sample(r.sample_id).task: r for r in store.iter_responses(run.id)}
    assert "answer" in by_task["yes_no"].signals and by_task["mcq"].signals["answer"]["candidates"] == list("ABCD")
    assert "answer" not in by_task["caption"].signals and by_task["caption"].signals["token_logprobs"]


@pytest.fixture(scope="module")
def idefics3(tmp_path_factory):
    from tiny_models import build_tiny_idefics3

    b = make_backend(f"transformers:{build_tiny_idefics3(tmp_path_factory.mktemp('tiny-idefics3'))}", batch_size=4)
    b.load()
    return b


def test_idefics3_family_batches_nested_images_and_reads_its_layers(idefics3):
    assert type(idefics3._model).__name__ == "Idefics3ForConditionalGeneration"
    reqs = _requests(3, signals=SignalRequest(token_logprobs=True, answer_candidates=("yes", "no"),
                                              logit_lens_top_k=2))
    batched = idefics3.generate(reqs)
    assert all(r.ok for r in batched), [r.error for r in batched]
    assert [r.text for r in batched] == [idefics3.generate([r])[0].text for r in reqs]
    assert len(batched[0].signals["logit_lens"]["layers"]) == 2 and batched[0].signals["answer"]["probs"]
    dtc = idefics3.generate([GenerationRequest("d", PROMPTS[0], reqs[0].image, generation_preset("greedy", 3),
                                               SignalRequest(), DetectThenCalibrate(0.1, 1, float("inf")))])[0]
    assert dtc.ok and dtc.text == idefics3.generate([GenerationRequest("d", PROMPTS[0], reqs[0].image,
                                                                       generation_preset("greedy", 3))])[0].text


# ----------------------------------------------------------------- Qwen2-VL (M-RoPE, dynamic-resolution patches)
def _torchvision_imports() -> bool:
    try:
        import torchvision  # noqa: F401
    except Exception:  # noqa: BLE001 - a broken install raises more than ImportError
        return False
    return True


@pytest.fixture(scope="module")
def qwen2_vl_dir(tmp_path_factory):
    from tiny_models import build_tiny_qwen2_vl

    return build_tiny_qwen2_vl(tmp_path_factory.mktemp("tiny-qwen2-vl"))


@pytest.fixture(scope="module")
def qwen2_vl(qwen2_vl_dir):
    b = make_backend(f"transformers:{qwen2_vl_dir}", batch_size=4)
    b.load()
    return b


def test_qwen2_vl_processor_loads_without_torchvision(qwen2_vl, qwen2_vl_dir):
    from transformers import AutoProcessor, Qwen2VLProcessor

    assert type(qwen2_vl._model).__name__ == "Qwen2VLForConditionalGeneration"
    assert isinstance(qwen2_vl._processor, Qwen2VLProcessor)
    if not _torchvision_imports():
        # the cause the image-only processor works around: the video processor needs torchvision
        with pytest.raises(ImportError, match="Qwen2VLVideoProcessor requires the Torchvision"):
            AutoProcessor.from_pretrained(qwen2_vl_dir, use_fast=False)
        assert type(qwen2_vl._processor).__name__ == "ImageOnlyQwen2VLProcessor"
    inputs = qwen2_vl._inputs(_requests(1))
    grid = inputs["image_grid_thw"][0]
    n_pad = int((inputs["input_ids"][0] == qwen2_vl._model.config.image_token_id).sum())
    assert n_pad == int(grid.prod()) // 4 > 0  # <|image_pad|> expanded to the merged patch count


def test_qwen2_vl_batched_greedy_equals_one_by_one(qwen2_vl):
    reqs = _requests(5, signals=SignalRequest(token_logprobs=True, answer_candidates=("yes", "no"), logit_lens_top_k=2))
    batched = qwen2_vl.generate(reqs)
    single = [qwen2_vl.generate([r])[0] for r in reqs]
    assert all(r.ok for r in batched), [r.error for r in batched]
    assert [r.text for r in batched] == [r.text for r in single]
    assert len({r.text for r in batched}) > 1
    for a, b in zip(batched, single):
        assert [t["logprob"] for t in a.signals["token_logprobs"]] == pytest.approx(
            [t["logprob"] for t in b.signals["token_logprobs"]], abs=1e-4)
        assert a.signals["answer"]["probs"] == pytest.approx(b.signals["answer"]["probs"], abs=1e-4)
    assert len(batched[0].signals["logit_lens"]["layers"]) == qwen2_vl._model.config.text_config.num_hidden_layers


def test_qwen2_vl_token_logprobs_match_a_teacher_forced_forward_pass(qwen2_vl):
    req = _requests(1, tokens=3)[0]
    res = qwen2_vl.generate([req])[0]
    with torch.no_grad():
        logits = qwen2_vl._model(**_prompt_inputs(qwen2_vl, req)).logits[0, -1]
    first = res.signals["token_logprobs"][0]
    tok = qwen2_vl._tokenizer.convert_tokens_to_ids(first["token"])
    assert int(logits.argmax()) == tok
    assert first["logprob"] == pytest.approx(float(torch.log_softmax(logits, -1)[tok]), abs=1e-5)


@pytest.mark.parametrize("image", [True, False])
def test_qwen2_vl_dtc_decode_steps_use_mrope_positions(qwen2_vl, image):
    # The hand-written DTC loop must place each new token where generate() does (pos + rope_deltas);
    # with gamma = inf it is plain greedy, so every step's log-probability must match generate()'s.
    qwen2_vl.generate(_requests(1))  # leaves an image request's rope_deltas on the model
    reqs = _requests(3, tokens=5, image=image)
    plain = qwen2_vl.generate(reqs)
    dtc = qwen2_vl.generate([GenerationRequest(r.sample_id, r.prompt, r.image, r.generation, r.signals,
                                               DetectThenCalibrate(0.1, 1, float("inf"))) for r in reqs])
    assert all(r.ok for r in dtc), [r.error for r in dtc]
    assert [r.text for r in dtc] == [r.text for r in plain]
    for a, b in zip(dtc, plain):
        assert [t["logprob"] for t in a.signals["token_logprobs"]] == pytest.approx(
            [t["logprob"] for t in b.signals["token_logprobs"]], abs=1e-4)


def test_a_processor_needing_torchvision_names_the_cause(tiny_llava_dir, monkeypatch):
    from transformers import AutoProcessor

    from hallu_studio.backends.transformers_backend import load_processor

    def needs_torchvision(*args, **kwargs):
        raise ImportError("\nLlavaVideoProcessor requires the Torchvision library but it was not found")

    monkeypatch.setattr(AutoProcessor, "from_pretrained", needs_torchvision)
    with pytest.raises(ImportError, match=r"model type 'llava'\) needs torchvision.*LlavaVideoProcessor requires"):
        load_processor(str(tiny_llava_dir), {})


def test_image_only_qwen2_5_vl_processor_expands_image_tokens():
    from transformers import Qwen2_5_VLProcessor, Qwen2VLImageProcessorPil

    from tiny_models import QWEN_CHAT_TEMPLATE, _tokenizer
    from hallu_studio.backends.transformers_backend import qwen_image_only_processor

    assert qwen_image_only_processor("llava") is None
    special = {"image_token": "<|image_pad|>", "video_token": "<|video_pad|>",
               "vision_start_token": "<|vision_start|>", "vision_end_token": "<|vision_end|>"}
    tok = _tokenizer(special, extra_words=" ".join(special.values()))
    cls = qwen_image_only_processor("qwen2_5_vl")
    proc = cls(image_processor=Qwen2VLImageProcessorPil(patch_size=8, min_pixels=32 * 32, max_pixels=32 * 32),
               tokenizer=tok, chat_template=QWEN_CHAT_TEMPLATE)
    assert isinstance(proc, Qwen2_5_VLProcessor)
    message = {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "cat ?"}]}
    text = proc.apply_chat_template([message], add_generation_prompt=True)
    out = proc(text=[text], images=[Image.new("RGB", (40, 30))], return_tensors="pt")
    n_pad = int((out["input_ids"][0] == tok.convert_tokens_to_ids("<|image_pad|>")).sum())
    assert n_pad == int(out["image_grid_thw"][0].prod()) // 4 == 4
