#!/usr/bin/env python3
"""Write tests/fixtures/models/tiny-glm4-moe-lite: a tiny random GLM-4.7-Flash model
(glm4_moe_lite) and mlx-lm's logits for it (reference_logits.safetensors, the layout
make_reference_logits.py writes).

    .venv/bin/python tools/make_tiny_glm4_moe_lite.py [--out tests/fixtures/models]

Glm4MoeLiteForCausalLM, float32, in the Hugging Face layout (kv_b_proj, one tensor per
expert): 3 layers, hidden 64, 4 heads with multi-head latent attention (query rank 32,
latent rank 32, 32 non-rotary and 16 rotary query/key dimensions per head, values of 32),
interleaved RoPE; layer 0 dense (first_k_dense_replace 1, intermediate 128); layers 1 and
2 with 8 routed experts of width 32 in 2 groups (n_group 2, topk_group 1: the better
group's 2 best experts) and one shared expert; sigmoid routing with a correction bias,
weights renormalized and scaled by 1.8; vocab 512, an untied head. One
multi-token-prediction layer (model.layers.3, num_nextn_predict_layers 1) is present, as
GLM ships it, and must be ignored.

Weights: N(0, 0.02), the query, latent and kv_b projections N(0, 0.1), the experts
N(0, 0.15), the router N(0, 0.5) and the correction bias N(0, 0.3), so the bias changes
which experts win (it steers the choice; the weights are the unbiased scores).
Tokenizer files: tiny-qwen3's.
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_reference_logits import models_dir_from_args, write_tiny_model  # noqa: E402
from make_tiny_models import base_config  # noqa: E402
from make_tiny_qwen3_moe import norm, normal  # noqa: E402

SEED = 31
NAME = "tiny-glm4-moe-lite"
CONFIG = base_config(512, {"<|endoftext|>": 0, "<|im_end|>": 2})
del CONFIG["head_dim"]
CONFIG.update(
    architectures=["Glm4MoeLiteForCausalLM"], model_type="glm4_moe_lite", num_hidden_layers=3,
    num_key_value_heads=4, q_lora_rank=32, kv_lora_rank=32, qk_nope_head_dim=32,
    qk_rope_head_dim=16, v_head_dim=32, n_routed_experts=8, n_shared_experts=1,
    num_experts_per_tok=2, moe_intermediate_size=32, n_group=2, topk_group=1,
    routed_scaling_factor=1.8, norm_topk_prob=True, topk_method="noaux_tc",
    scoring_func="sigmoid", first_k_dense_replace=1, moe_layer_freq=1,
    partial_rotary_factor=1.0, num_nextn_predict_layers=1, tie_word_embeddings=False)


def weights(rng: np.random.Generator, c: dict = CONFIG) -> dict:
    H, nh = c["hidden_size"], c["num_attention_heads"]
    qr, r = c["q_lora_rank"], c["kv_lora_rank"]
    nope, rope, v = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"]
    E, I, dense = c["n_routed_experts"], c["moe_intermediate_size"], c["intermediate_size"]
    w = {"model.embed_tokens.weight": normal(rng, (c["vocab_size"], H)),
         "model.norm.weight": norm(rng, H)}

    def mlp(p, width, std):
        w[p + "gate_proj.weight"] = normal(rng, (width, H), std)
        w[p + "up_proj.weight"] = normal(rng, (width, H), std)
        w[p + "down_proj.weight"] = normal(rng, (H, width), std)

    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = norm(rng, H)
        w[p + "post_attention_layernorm.weight"] = norm(rng, H)
        a = p + "self_attn."
        w[a + "q_a_proj.weight"] = normal(rng, (qr, H), 0.1)
        w[a + "q_a_layernorm.weight"] = norm(rng, qr)
        w[a + "q_b_proj.weight"] = normal(rng, (nh * (nope + rope), qr), 0.1)
        w[a + "kv_a_proj_with_mqa.weight"] = normal(rng, (r + rope, H), 0.1)
        w[a + "kv_a_layernorm.weight"] = norm(rng, r)
        w[a + "kv_b_proj.weight"] = normal(rng, (nh * (nope + v), r), 0.1)
        w[a + "o_proj.weight"] = normal(rng, (H, nh * v))
        if i < c["first_k_dense_replace"]:
            mlp(p + "mlp.", dense, 0.02)
            continue
        w[p + "mlp.gate.weight"] = normal(rng, (E, H), 0.5)
        w[p + "mlp.gate.e_score_correction_bias"] = normal(rng, E, 0.3)
        for e in range(E):
            mlp(f"{p}mlp.experts.{e}.", I, 0.15)
        mlp(p + "mlp.shared_experts.", I * c["n_shared_experts"], 0.15)
    # The multi-token-prediction layer: read by neither mlx-lm nor heron.
    mtp = f"model.layers.{c['num_hidden_layers']}."
    w[mtp + "eh_proj.weight"] = normal(rng, (H, 2 * H))
    w[mtp + "enorm.weight"] = norm(rng, H)
    w["lm_head.weight"] = normal(rng, (c["vocab_size"], H))
    return w


def main() -> int:
    out = models_dir_from_args(__doc__)
    rng = np.random.default_rng(SEED)
    _, d_inc = write_tiny_model(out / NAME, CONFIG, weights(rng), rng, SEED, out / "tiny-qwen3")
    return 0 if d_inc < 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())
