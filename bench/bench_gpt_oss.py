#!/usr/bin/env python3
"""gpt-oss decode on the CPU (not a test): heron against mlx-lm and llama.cpp on one small
random gpt-oss model with MXFP4 experts, each pair reading the same files.

    .venv/bin/python bench/bench_gpt_oss.py [--runs 3] [--gen-tokens 64] [--prompt-tokens 256]

The model (made once into .cache/bench-gpt-oss/): gpt-oss with gpt-oss-20b's layer plan
at small widths, random weights as tools/make_tiny_gpt_oss.py draws them, tiny-qwen3's
tokenizer (vocab 512): hidden 512, 8 layers alternating sliding (window 128) and full
attention, 8 heads / 2 KV heads of 64, attention sinks, YaRN; 32 experts of width 512,
4 chosen per token, stored as MXFP4 blocks with gate and up interleaved (the float parts,
attention and router, in float32). About 210M parameters, of which a token reads about
30M. Files:
  mxfp4/        OpenAI's layout: heron and mlx-lm both read it
  mxfp4.gguf    the same weights as llama.cpp's gpt-oss GGUF (tools/make_tiny_gpt_oss.py's
                writer: the same MXFP4 codes and scales, the rest float32): heron and
                llama.cpp both read it
Each comparison is one run of bench/bench_generate.py (fresh process per run, engines
interleaved, medians; greedy, EOS ignored), whose tables this prints.
"""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from make_reference_logits import save_safetensors_sorted  # noqa: E402
from make_tiny_gpt_oss import CONFIG as TINY, openai_mxfp4, weights, write_gguf  # noqa: E402
from generate_runs import generate_command, parse_run_args  # noqa: E402

CACHE = ROOT / ".cache/bench-gpt-oss"
SEED = 11
LAYERS = 8
CONFIG = dict(TINY, hidden_size=512, num_hidden_layers=LAYERS, num_attention_heads=8,
              num_key_value_heads=2, head_dim=64, intermediate_size=512, num_local_experts=32,
              num_experts_per_tok=4, sliding_window=128, max_position_embeddings=131072,
              layer_types=["sliding_attention", "full_attention"] * (LAYERS // 2),
              quantization_config={"quant_method": "mxfp4"})


def make_models() -> tuple:
    d, gguf = CACHE / "mxfp4", CACHE / "mxfp4.gguf"
    if (d / "config.json").exists() and gguf.exists():
        return d, gguf
    d.mkdir(parents=True, exist_ok=True)
    w = openai_mxfp4(weights(np.random.default_rng(SEED), CONFIG))
    save_safetensors_sorted(w, str(d / "model.safetensors"), {"format": "pt"})
    for f in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(ROOT / "tests/fixtures/models/tiny-qwen3" / f, d / f)
    (d / "config.json").write_text(json.dumps(CONFIG, indent=2) + "\n")
    write_gguf(w, CONFIG, d, gguf)
    return d, gguf


def main() -> int:
    d, gguf = make_models()
    common = generate_command(parse_run_args(__doc__))
    print("== heron and mlx-lm on OpenAI's layout", flush=True)
    subprocess.run(common + ["--engines", "heron,mlx-lm", "--mlx-dir", str(d), "--heron-model",
                             str(d)], check=True)
    print("\n== heron and llama.cpp on llama.cpp's gpt-oss GGUF", flush=True)
    subprocess.run(common + ["--engines", "heron,llama.cpp", "--gguf", str(gguf)], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
