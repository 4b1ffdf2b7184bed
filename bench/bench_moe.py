#!/usr/bin/env python3
"""Mixture-of-experts decode on the CPU (not a test): heron against mlx-lm and llama.cpp
on one small random Qwen3-MoE model, each pair on the same file.

    .venv/bin/python bench/bench_moe.py [--runs 3] [--gen-tokens 64] [--prompt-tokens 256]

The model (made once into .cache/bench-moe/): Qwen3-MoE with small experts, random
weights as tools/make_tiny_qwen3_moe.py draws them, tiny-qwen3's tokenizer (vocab 512):
hidden 512, 8 layers, 8 heads / 4 KV heads of 64, 32 experts of intermediate 256, 4
chosen per token (norm_topk_prob), no dense layer. About 110M parameters, of which a
token reads about 22M. Files:
  mlx/          mlx_lm.convert's 4-bit affine quantization (group 64) of the Hugging Face
                weights: heron and mlx-lm both read it
  q4_0.gguf     the same weights as a qwen3moe GGUF (tools/make_tiny_qwen3_moe.py's
                writer, float32), quantized to Q4_0 (pure) by llama.cpp's own quantizer:
                heron and llama.cpp both read it
Each comparison is one run of bench/bench_generate.py (fresh process per run, engines
interleaved, medians; greedy, EOS ignored), whose tables this prints.
"""
import ctypes
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from make_tiny_models import qwen3_config  # noqa: E402
from make_tiny_qwen3_moe import weights, write_gguf  # noqa: E402
from generate_runs import generate_command, parse_run_args  # noqa: E402

CACHE = ROOT / ".cache/bench-moe"
SEED = 7
CONFIG = qwen3_config(512, {"<|endoftext|>": 0, "<|im_end|>": 2})
CONFIG.update(architectures=["Qwen3MoeForCausalLM"], model_type="qwen3_moe", hidden_size=512,
              num_hidden_layers=8, num_attention_heads=8, num_key_value_heads=4, head_dim=64,
              intermediate_size=1024, num_experts=32, num_experts_per_tok=4,
              moe_intermediate_size=256, norm_topk_prob=True, decoder_sparse_step=1,
              mlp_only_layers=[], max_position_embeddings=4096)


def make_models():
    import json
    import shutil

    from mlx_lm import convert
    from safetensors.numpy import save_file

    hf, mlx, f32, q4 = CACHE / "hf", CACHE / "mlx", CACHE / "f32.gguf", CACHE / "q4_0.gguf"
    if q4.exists() and (mlx / "config.json").exists():
        return mlx, q4
    CACHE.mkdir(parents=True, exist_ok=True)
    w = weights(np.random.default_rng(SEED), CONFIG)
    hf.mkdir(exist_ok=True)
    save_file(w, str(hf / "model.safetensors"), metadata={"format": "pt"})
    (hf / "config.json").write_text(json.dumps(CONFIG, indent=2) + "\n")
    for f in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(ROOT / "tests/fixtures/models/tiny-qwen3" / f, hf / f)
    if not (mlx / "config.json").exists():
        shutil.rmtree(mlx, ignore_errors=True)
        convert(str(hf), str(mlx), quantize=True, q_group_size=64, q_bits=4)
    write_gguf(w, CONFIG, hf, f32)
    import llama_cpp

    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = llama_cpp.LLAMA_FTYPE_MOSTLY_Q4_0
    params.nthread = 2
    params.pure = True
    if llama_cpp.llama_model_quantize(str(f32).encode(), str(q4).encode(), ctypes.byref(params)):
        raise SystemExit("llama.cpp could not quantize the GGUF")
    return mlx, q4


def main() -> int:
    args = parse_run_args(__doc__)
    mlx, q4 = make_models()
    common = generate_command(args)
    print("== heron and mlx-lm on mlx-lm's 4-bit model", flush=True)
    subprocess.run(common + ["--engines", "heron,mlx-lm", "--mlx-dir", str(mlx), "--heron-model",
                             str(mlx), "--gguf", str(q4)], check=True)
    print("\n== heron and llama.cpp on llama.cpp's Q4_0 GGUF", flush=True)
    subprocess.run(common + ["--engines", "heron,llama.cpp", "--gguf", str(q4)], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
