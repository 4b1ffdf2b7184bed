#!/usr/bin/env python3
"""GLM-4.7-Flash decode on the CPU (not a test): heron against mlx-lm and llama.cpp on one
small random glm4_moe_lite model, each pair reading the same files.

    .venv/bin/python bench/bench_glm4_moe_lite.py [--runs 3] [--gen-tokens 64] [--prompt-tokens 256]

The model (made once into .cache/bench-glm4-moe-lite/): GLM-4.7-Flash's layer plan at
small widths, random weights as tools/make_tiny_glm4_moe_lite.py draws them, tiny-qwen3's
tokenizer (vocab 512): hidden 512, 8 layers (the first dense, intermediate 1024), 8 heads
of latent attention (query rank 256, latent rank 256, 64 non-rotary and 32 rotary
dimensions, values of 64); 32 routed experts of width 256 in one group, 4 chosen per token
by the sigmoid router, and one shared expert. Files:
  q4/          mlx_lm.convert's 4 bits (group 64), the per-head latent projections
               included: heron and mlx-lm both read it
  q4_0.gguf    the same float weights as llama.cpp's deepseek2 GGUF in Q4_0 (every matrix
               but norms and router; tools/make_tiny_glm4_moe_lite.py's writer): heron and
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
from make_tiny_glm4_moe_lite import CONFIG as TINY, weights, write_gguf  # noqa: E402
from generate_runs import generate_command, parse_run_args  # noqa: E402

CACHE = ROOT / ".cache/bench-glm4-moe-lite"
SEED = 13
CONFIG = dict(TINY, hidden_size=512, intermediate_size=1024, num_hidden_layers=8,
              num_attention_heads=8, num_key_value_heads=8, q_lora_rank=256, kv_lora_rank=256,
              qk_nope_head_dim=64, qk_rope_head_dim=32, v_head_dim=64, n_routed_experts=32,
              num_experts_per_tok=4, moe_intermediate_size=256, n_group=1, topk_group=1,
              max_position_embeddings=131072)


def make_models() -> tuple:
    from mlx_lm import convert

    q, gguf = CACHE / "q4", CACHE / "q4_0.gguf"
    if (q / "config.json").exists() and gguf.exists():
        return q, gguf
    shutil.rmtree(CACHE, ignore_errors=True)
    d = CACHE / "float"
    d.mkdir(parents=True)
    w = weights(np.random.default_rng(SEED), CONFIG)
    save_safetensors_sorted(w, str(d / "model.safetensors"), {"format": "pt"})
    for f in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(ROOT / "tests/fixtures/models/tiny-qwen3" / f, d / f)
    (d / "config.json").write_text(json.dumps(CONFIG, indent=2) + "\n")
    convert(str(d), mlx_path=str(q), quantize=True, q_group_size=64, q_bits=4)
    write_gguf(w, CONFIG, d, gguf, qtype="Q4_0")
    return q, gguf


def main() -> int:
    q, gguf = make_models()
    common = generate_command(parse_run_args(__doc__))
    print("== heron and mlx-lm on mlx-lm's 4-bit files", flush=True)
    subprocess.run(common + ["--engines", "heron,mlx-lm", "--mlx-dir", str(q), "--heron-model",
                             str(q)], check=True)
    print("\n== heron and llama.cpp on llama.cpp's Q4_0 GGUF", flush=True)
    subprocess.run(common + ["--engines", "heron,llama.cpp", "--gguf", str(gguf)], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
