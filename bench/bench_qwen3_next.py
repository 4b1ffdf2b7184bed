#!/usr/bin/env python3
"""Qwen3-Next decode and prefill on the CPU (not a test): heron against mlx-lm on one small
random qwen3_next model, both reading the same files.

    .venv/bin/python bench/bench_qwen3_next.py [--runs 3] [--gen-tokens 64] [--prompt-tokens 256]

The model (made once into .cache/bench-qwen3-next/): Qwen3-Next-80B-A3B's layer plan at
small widths, random weights as tools/make_tiny_qwen3_next.py draws them, tiny-qwen3's
tokenizer (vocab 512): hidden 512, 8 layers, attention every 4th (2 of 8; 8 heads / 2 KV
heads of 128, the output gate, RoPE on a quarter); gated delta-net linear attention in the
other 6 with Qwen3-Next's head shapes (4 key heads and 8 value heads of 128, a convolution
of 4); 32 experts of width 256, 4 chosen per token, and a gated shared expert of 256.
mlx_lm.convert's 4 bits (group 64; the routers at 8 bits as its quant_predicate says), in
q4/. One run of bench/bench_generate.py (fresh process per run, engines interleaved,
medians; greedy, EOS ignored), whose table this prints.
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
from make_tiny_qwen3_next import NEXT as TINY, qwen3_next_weights  # noqa: E402
from generate_runs import generate_command, parse_run_args  # noqa: E402

CACHE = ROOT / ".cache/bench-qwen3-next"
SEED = 17
CONFIG = dict(TINY, hidden_size=512, intermediate_size=1024, num_hidden_layers=8,
              num_attention_heads=8, num_key_value_heads=2, head_dim=128,
              full_attention_interval=4, linear_num_key_heads=4, linear_num_value_heads=8,
              linear_key_head_dim=128, linear_value_head_dim=128, num_experts=32,
              num_experts_per_tok=4, moe_intermediate_size=256,
              shared_expert_intermediate_size=256, mlp_only_layers=[],
              max_position_embeddings=131072)


def make_model() -> Path:
    from mlx_lm import convert

    q = CACHE / "q4"
    if (q / "config.json").exists():
        return q
    shutil.rmtree(CACHE, ignore_errors=True)
    d = CACHE / "float"
    d.mkdir(parents=True)
    w = qwen3_next_weights(np.random.default_rng(SEED), CONFIG, with_mtp=False)
    save_safetensors_sorted(w, str(d / "model.safetensors"), {"format": "pt"})
    for f in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(ROOT / "tests/fixtures/models/tiny-qwen3" / f, d / f)
    (d / "config.json").write_text(json.dumps(CONFIG, indent=2) + "\n")
    convert(str(d), mlx_path=str(q), quantize=True, q_group_size=64, q_bits=4)
    return q


def main() -> int:
    q = make_model()
    common = generate_command(parse_run_args(__doc__))
    subprocess.run(common + ["--engines", "heron,mlx-lm", "--mlx-dir", str(q), "--heron-model",
                             str(q)], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
