"""Tiny randomly initialised image-text-to-text checkpoints, built offline.

For tests and benchmarks (``benchmarks/bench_backends.py``), and a smoke run before a real GPU one
(``python tests/tiny_models.py /tmp/tiny-llava``, docs/guide/gpu-transformers.md): a few-kilobyte model with a word-level tokenizer and a
chat template, saved to a directory and loaded back through exactly the path a
real checkpoint takes (``AutoProcessor`` + ``AutoModelForImageTextToText``).
The weights are random: the text is gibberish, the plumbing is real.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

WORDS = ("<pad> <unk> <s> </s> <image> USER ASSISTANT : yes no Yes No A B C D a an the is are there of in on "
         "under near next to with and cat dog table chair man woman red blue green white black small large "
         "image describe detail . , ? question answer description")

# A minimal chat template in the shape every HF processor understands.
CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] | upper }} : "
    "{% for c in m['content'] %}{% if c['type'] == 'image' %}<image> {% else %}{{ c['text'] }} {% endif %}"
    "{% endfor %}{% endfor %}{% if add_generation_prompt %}ASSISTANT : {% endif %}")


def _tokenizer(extra_special: dict[str, str] | None = None, extra_words: str = "") -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab: dict[str, int] = {}
    for w in (WORDS + " " + extra_words).split():
        vocab.setdefault(w, len(vocab))
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.decoder = decoders.WordPiece(prefix="##")  # joins word-level tokens with spaces
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", bos_token="<s>",
                                   eos_token="</s>", extra_special_tokens=extra_special or {"image_token": "<image>"})
    fast.padding_side = "left"
    return fast


def build_tiny_llava(directory: str | Path, *, hidden: int = 32, layers: int = 2, image_size: int = 32,
                     seed: int = 0) -> Path:
    """A LLaVA-1.5-shaped checkpoint (tiny Llama + tiny CLIP vision tower) saved under ``directory``."""
    import torch
    from transformers import (CLIPImageProcessor, CLIPVisionConfig, LlamaConfig, LlavaConfig,
                              LlavaForConditionalGeneration, LlavaProcessor)

    directory = Path(directory)
    tokenizer = _tokenizer()
    vocab_size = len(tokenizer)
    text = LlamaConfig(vocab_size=vocab_size, hidden_size=hidden, intermediate_size=hidden * 2,
                       num_hidden_layers=layers, num_attention_heads=2, num_key_value_heads=2,
                       max_position_embeddings=1024, pad_token_id=0, bos_token_id=2, eos_token_id=3,
                       initializer_range=0.2)  # peaked logits: greedy ties would make tests flaky
    vision = CLIPVisionConfig(hidden_size=hidden, intermediate_size=hidden * 2, num_hidden_layers=1,
                              num_attention_heads=2, image_size=image_size, patch_size=8, projection_dim=hidden)
    config = LlavaConfig(vision_config=vision, text_config=text, image_token_id=tokenizer.convert_tokens_to_ids("<image>"),
                         vision_feature_layer=-1, vision_feature_select_strategy="default")
    torch.manual_seed(seed)
    model = LlavaForConditionalGeneration(config).eval()
    image_processor = CLIPImageProcessor(size={"shortest_edge": image_size},
                                         crop_size={"height": image_size, "width": image_size})
    processor = LlavaProcessor(image_processor=image_processor, tokenizer=tokenizer, chat_template=CHAT_TEMPLATE,
                               patch_size=8, vision_feature_select_strategy="default", num_additional_image_tokens=1)
    model.generation_config.eos_token_id = 3
    model.generation_config.pad_token_id = 0
    model.save_pretrained(directory)
    processor.save_pretrained(directory)
    return directory


def build_tiny_idefics3(directory: str | Path, *, hidden: int = 32, layers: int = 2, image_size: int = 32,
                        seed: int = 0) -> Path:
    """An Idefics3 / SmolVLM-shaped checkpoint (tiny Llama + tiny SigLIP-style tower), no image splitting."""
    import torch
    from transformers import (Idefics3Config, Idefics3ForConditionalGeneration, Idefics3ImageProcessorPil,
                              Idefics3Processor)

    directory = Path(directory)
    special = {"image_token": "<image>", "fake_image_token": "<fake_token_around_image>",
               "global_image_token": "<global-img>", "end_of_utterance_token": "<end_of_utterance>"}
    tokenizer = _tokenizer(special, extra_words=" ".join(special.values()))
    patch = 8
    text = dict(model_type="llama", vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=hidden * 2,
                num_hidden_layers=layers, num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=1024,
                pad_token_id=0, bos_token_id=2, eos_token_id=3, initializer_range=0.2)
    vision = dict(hidden_size=hidden, intermediate_size=hidden * 2, num_hidden_layers=1, num_attention_heads=2,
                  image_size=image_size, patch_size=patch)
    config = Idefics3Config(text_config=text, vision_config=vision, scale_factor=2,
                            image_token_id=tokenizer.convert_tokens_to_ids("<image>"))
    torch.manual_seed(seed)
    model = Idefics3ForConditionalGeneration(config).eval()
    image_processor = Idefics3ImageProcessorPil(size={"longest_edge": image_size},
                                                max_image_size={"longest_edge": image_size}, do_image_splitting=False)
    seq_len = (image_size // patch) ** 2 // 4  # patches after the 2x2 pixel shuffle
    processor = Idefics3Processor(image_processor=image_processor, tokenizer=tokenizer, chat_template=CHAT_TEMPLATE,
                                  image_seq_len=seq_len)
    model.generation_config.eos_token_id = 3
    model.generation_config.pad_token_id = 0
    model.save_pretrained(directory)
    processor.save_pretrained(directory)
    return directory


# Qwen2-VL's own template wraps the image in vision start / end tokens; the processor expands <|image_pad|>.
QWEN_CHAT_TEMPLATE = CHAT_TEMPLATE.replace("<image> ", "<|vision_start|> <|image_pad|> <|vision_end|> ")


def build_tiny_qwen2_vl(directory: str | Path, *, hidden: int = 32, layers: int = 2, image_pixels: int = 32 * 32,
                        seed: int = 0) -> Path:
    """A Qwen2-VL-shaped checkpoint (tiny Qwen2 text model with M-RoPE + tiny ViT), in the hub's file layout.

    The files are what ``Qwen/Qwen2-VL-2B-Instruct`` ships: ``preprocessor_config.json`` naming
    ``Qwen2VLProcessor``, tokenizer files and the chat template, and no separate video processor
    config, so ``AutoProcessor`` also tries to build the video processor (which needs torchvision)
    exactly as it does for the real checkpoint. Every image is resized to ``image_pixels`` pixels.
    """
    import json

    import torch
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration, Qwen2VLImageProcessorPil

    directory = Path(directory)
    special = {"image_token": "<|image_pad|>", "video_token": "<|video_pad|>",
               "vision_start_token": "<|vision_start|>", "vision_end_token": "<|vision_end|>"}
    tokenizer = _tokenizer(special, extra_words=" ".join(special.values()))
    ids = {k: tokenizer.convert_tokens_to_ids(v) for k, v in special.items()}
    head_dim = hidden // 2
    half = head_dim // 2  # rotary frequencies per head, shared out over the three M-RoPE axes
    text = dict(vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=hidden * 2, num_hidden_layers=layers,
                num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=1024, pad_token_id=0,
                bos_token_id=2, eos_token_id=3, initializer_range=0.2,
                rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                 "mrope_section": [half // 2, half // 4, half - half // 2 - half // 4]})
    vision = dict(depth=1, embed_dim=hidden, hidden_size=hidden, num_heads=2, mlp_ratio=2, patch_size=8,
                  spatial_merge_size=2, temporal_patch_size=2)
    config = Qwen2VLConfig(text_config=text, vision_config=vision, image_token_id=ids["image_token"],
                           video_token_id=ids["video_token"], vision_start_token_id=ids["vision_start_token"],
                           vision_end_token_id=ids["vision_end_token"])
    torch.manual_seed(seed)
    model = Qwen2VLForConditionalGeneration(config).eval()
    model.generation_config.eos_token_id = 3
    model.generation_config.pad_token_id = 0
    model.save_pretrained(directory)
    image_processor = Qwen2VLImageProcessorPil(patch_size=8, merge_size=2, temporal_patch_size=2,
                                               min_pixels=image_pixels, max_pixels=image_pixels)
    image_processor.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    # Qwen2VLProcessor itself cannot be built here without torchvision, so its files are written directly.
    (directory / "chat_template.jinja").write_text(QWEN_CHAT_TEMPLATE)
    for name in ("preprocessor_config.json", "tokenizer_config.json"):
        cfg = json.loads((directory / name).read_text())
        cfg["processor_class"] = "Qwen2VLProcessor"
        (directory / name).write_text(json.dumps(cfg, indent=2))
    return directory


def tiny_benchmark(name: str = "tiny", n_images: int = 3) -> tuple[Any, list[Any], list[tuple[str, str, int, int, bytes]]]:
    """A few samples of every task with solid-colour PNG images: ``(Benchmark, samples, images)``.

    Shaped for ``Store.add_samples(benchmark, samples, images)``.
    """
    import hashlib
    import io

    from PIL import Image

    from hallu_studio.model import Benchmark, Sample, SceneGraph

    colours = [(200, 30, 30), (30, 200, 30), (30, 30, 200), (200, 200, 30), (30, 200, 200)]
    graphs = [
        {"objects": [{"id": "1", "name": "cat", "attributes": ["grey", "small"]}, {"id": "2", "name": "table",
                                                                                 "attributes": ["wooden"]},
                     {"id": "3", "name": "chair"}, {"id": "4", "name": "chair"}],
         "relations": [{"subject": "1", "predicate": "on", "object": "2"},
                       {"subject": "3", "predicate": "next to", "object": "2"}]},
        {"objects": [{"id": "1", "name": "man", "attributes": ["tall"]}, {"id": "2", "name": "horse",
                                                                        "attributes": ["brown"]}],
         "relations": [{"subject": "1", "predicate": "riding", "object": "2"}]},
        {"objects": [{"id": "1", "name": "dog", "attributes": ["black"]}, {"id": "2", "name": "ball",
                                                                         "attributes": ["red"]},
                     {"id": "3", "name": "grass", "attributes": ["green"]}],
         "relations": [{"subject": "1", "predicate": "holding", "object": "2"},
                       {"subject": "1", "predicate": "on", "object": "3"}]},
    ]
    images, samples = [], []
    for i in range(n_images):
        buf = io.BytesIO()
        Image.new("RGB", (48, 40), colours[i % len(colours)]).save(buf, "PNG")
        data = buf.getvalue()
        sha = hashlib.sha256(data).hexdigest()
        images.append((sha, "image/png", 48, 40, data))
        g = SceneGraph.from_dict(graphs[i % len(graphs)])
        s, p, o = g.triplets()[0]
        common = dict(benchmark=name, image_key=f"img{i}", image_sha256=sha, scene_graph=g)
        samples += [
            Sample(id=f"{name}/{i}-caption", task="caption", **common),
            Sample(id=f"{name}/{i}-vqa", task="vqa", question=f"What is the {s} {p}?", answer=o,
                   gold_triplets=[(s, p, o)], **common),
            Sample(id=f"{name}/{i}-yn", task="yes_no", question=f"Is the {s} {p} the {o}?",
                   answer="yes" if i % 2 == 0 else "no", relation_category="perception", **common),
            Sample(id=f"{name}/{i}-mcq", task="mcq", question=f"What is the {s} doing? A. {p} B. x C. y D. z",
                   options=[p, "x", "y", "z"], answer="A", **common),
        ]
    return Benchmark(name=name, description="tiny offline benchmark for tests"), samples, images


if __name__ == "__main__":
    import sys

    if len(sys.argv) != 2:
        sys.exit("usage: python tests/tiny_models.py DIRECTORY  (writes a tiny random-weight LLaVA there)")
    build_tiny_llava(sys.argv[1])
    print(f"wrote a tiny LLaVA to {sys.argv[1]}")
