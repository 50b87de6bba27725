#!/usr/bin/env bash
# The transformers backend on CUDA against its CPU path, with tiny random models (LLaVA, Qwen2-VL, Idefics3) built
# from configs: no download. One command, a few minutes on one GPU; without CUDA it runs the CPU half, says
# "skipped: no CUDA" and exits 0. Usage: bash scripts/gpu_check.sh [--cpu-only] [llava|qwen2-vl|idefics3 ...]
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" HF_HUB_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1
exec timeout 300 python scripts/gpu_check.py "$@"
