#!/usr/bin/env python3
"""Write tests/fixtures/models/tiny-gemma3: a tiny random Gemma 3 text model and mlx-lm's
logits for it (reference_logits.safetensors, the same layout make_reference_logits.py
writes for the other tiny models).

    .venv/bin/python tools/make_tiny_gemma3.py [--out tests/fixtures/models]

Gemma3ForCausalLM text (model_type gemma3_text), float32: 4 layers, hidden 64, 4 heads /
2 KV heads, head_dim 32, intermediate 128, vocab 512, sliding_window 8 with pattern 3
(layers 0, 1, 3 slide, layer 2 is global), rope_theta 1e6 (global) and 1e4 (local),
query_pre_attn_scalar 24 (so the scale is not head_dim's), tied embeddings. The
64-token reference sequence is eight windows long, so the window's edge is crossed in
the full pass, the 25-token prefill and every decode step. Weights as in
make_tiny_models.py: N(0, 0.02), q/k projections N(0, 0.1); norm weights N(0, 0.2)
(Gemma stores w for a scale of 1 + w). Tokenizer files: tiny-qwen3's.
"""
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_reference_logits import models_dir_from_args, write_tiny_model  # noqa: E402

SEED = 17
NAME = "tiny-gemma3"
CONFIG = {
    "architectures": ["Gemma3ForCausalLM"],
    "model_type": "gemma3_text",
    "hidden_size": 64,
    "num_hidden_layers": 4,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 32,
    "intermediate_size": 128,
    "vocab_size": 512,
    "rms_norm_eps": 1e-6,
    "rope_theta": 1000000.0,
    "rope_local_base_freq": 10000.0,
    "query_pre_attn_scalar": 24,
    "sliding_window": 8,
    "sliding_window_pattern": 3,
    "max_position_embeddings": 256,
    "tie_word_embeddings": True,
    "hidden_activation": "gelu_pytorch_tanh",
    "bos_token_id": 0,
    "eos_token_id": 2,
    "torch_dtype": "float32",
}


def weights(rng: np.random.Generator) -> dict:
    c = CONFIG
    H, D, I = c["hidden_size"], c["head_dim"], c["intermediate_size"]
    nh, nkv = c["num_attention_heads"], c["num_key_value_heads"]

    def normal(shape, std=0.02):
        return (rng.standard_normal(shape) * std).astype(np.float32)

    w = {"model.embed_tokens.weight": normal((c["vocab_size"], H)),
         "model.norm.weight": normal((H,), 0.2)}
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        w[p + "self_attn.q_proj.weight"] = normal((nh * D, H), 0.1)
        w[p + "self_attn.k_proj.weight"] = normal((nkv * D, H), 0.1)
        w[p + "self_attn.v_proj.weight"] = normal((nkv * D, H))
        w[p + "self_attn.o_proj.weight"] = normal((H, nh * D))
        w[p + "self_attn.q_norm.weight"] = normal((D,), 0.2)
        w[p + "self_attn.k_norm.weight"] = normal((D,), 0.2)
        w[p + "mlp.gate_proj.weight"] = normal((I, H))
        w[p + "mlp.up_proj.weight"] = normal((I, H))
        w[p + "mlp.down_proj.weight"] = normal((H, I))
        for n in ("input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                  "post_feedforward_layernorm"):
            w[p + n + ".weight"] = normal((H,), 0.2)
    return w


def main() -> int:
    out = models_dir_from_args(__doc__)
    rng = np.random.default_rng(SEED)
    _, d_inc = write_tiny_model(out / NAME, CONFIG, weights(rng), rng, SEED,
                                out / "tiny-qwen3")
    return 0 if d_inc < 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())
