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

It also writes tests/fixtures/gguf/tiny-glm4-moe-lite.gguf, the same weights as llama.cpp's
converter lays out GLM-4.7-Flash (its deepseek2 architecture: kv_b_proj split into
attn_k_b, transposed, and attn_v_b; experts stacked; exp_probs_b the correction bias;
sigmoid gating; the multi-token-prediction layer left out), float32, and llama.cpp's
logits for it (tiny-glm4-moe-lite.llamacpp.safetensors: llama-cpp-python over the same 64
tokens, float32 KV cache).
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_reference_logits import models_dir_from_args, write_tiny_model  # noqa: E402
from make_tiny_models import base_config  # noqa: E402
from make_tiny_qwen3_moe import norm, normal, save_llama_cpp_reference  # noqa: E402
from tiny_gguf import (  # noqa: E402
    add_decoder_metadata, add_tokenizer, decoder_tensors, stacked_experts, write_tensors)

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


GGUF_PARTS = {"input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm",
              "self_attn.q_a_proj": "attn_q_a", "self_attn.q_a_layernorm": "attn_q_a_norm",
              "self_attn.q_b_proj": "attn_q_b", "self_attn.kv_a_proj_with_mqa": "attn_kv_a_mqa",
              "self_attn.kv_a_layernorm": "attn_kv_a_norm", "self_attn.o_proj": "attn_output",
              "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down",
              "mlp.gate": "ffn_gate_inp", "mlp.shared_experts.gate_proj": "ffn_gate_shexp",
              "mlp.shared_experts.up_proj": "ffn_up_shexp",
              "mlp.shared_experts.down_proj": "ffn_down_shexp"}


def write_gguf(w: dict, c: dict, model_dir: Path, out: Path, gating: str = "SIGMOID",
               qtype: str = "F32"):
    """Weights `w` (Hugging Face layout, config `c`, tokenizer files in `model_dir`) as
    llama.cpp's converter writes GLM-4.7-Flash: architecture deepseek2, in `qtype`
    (tiny_gguf.write_tensors); `gating` names the gguf.ExpertGatingFuncType stated."""
    import gguf

    nh, r, rope = c["num_attention_heads"], c["kv_lora_rank"], c["qk_rope_head_dim"]
    nope, v = c["qk_nope_head_dim"], c["v_head_dim"]
    g = gguf.GGUFWriter(str(out), "deepseek2")
    # The absorbed form: one latent "head" of keys [latent | rotary key] and values [latent].
    add_decoder_metadata(g, dict(c, num_key_value_heads=1, head_dim=r + rope),
                         c["num_hidden_layers"], value_length=r)
    g.add_expert_used_count(c["num_experts_per_tok"])
    g.add_leading_dense_block_count(c["first_k_dense_replace"])
    g.add_vocab_size(c["vocab_size"])
    g.add_q_lora_rank(c["q_lora_rank"])
    g.add_kv_lora_rank(r)
    g.add_key_length_mla(nope + rope)
    g.add_value_length_mla(v)
    g.add_expert_feed_forward_length(c["moe_intermediate_size"])
    g.add_expert_count(c["n_routed_experts"])
    g.add_expert_shared_count(c["n_shared_experts"])
    g.add_expert_weights_scale(c["routed_scaling_factor"])
    g.add_expert_weights_norm(c["norm_topk_prob"])
    g.add_expert_gating_func(gguf.ExpertGatingFuncType[gating])
    g.add_expert_group_count(c["n_group"])
    g.add_expert_group_used_count(c["topk_group"])
    g.add_rope_dimension_count(rope)
    add_tokenizer(g, model_dir, c, pre="qwen2")
    layers = range(c["num_hidden_layers"])
    t = decoder_tensors(w, GGUF_PARTS, zip(layers, layers))
    for i in layers:
        kv_b = w[f"model.layers.{i}.self_attn.kv_b_proj.weight"].reshape(nh, nope + v, r)
        t[f"blk.{i}.attn_k_b.weight"] = np.ascontiguousarray(kv_b[:, :nope].transpose(0, 2, 1))
        t[f"blk.{i}.attn_v_b.weight"] = np.ascontiguousarray(kv_b[:, nope:])
        bias = f"model.layers.{i}.mlp.gate.e_score_correction_bias"
        if bias in w:
            t[f"blk.{i}.exp_probs_b.bias"] = w[bias]
            for proj, a in stacked_experts(w, i, c["n_routed_experts"]).items():
                t[f"blk.{i}.ffn_{proj}_exps.weight"] = a
    write_tensors(g, t, qtype)


def main() -> int:
    out = models_dir_from_args(__doc__)
    rng = np.random.default_rng(SEED)
    w = weights(rng)
    tokens, d_inc = write_tiny_model(out / NAME, CONFIG, w, rng, SEED, out / "tiny-qwen3")
    gguf_path = out.parent / "gguf" / f"{NAME}.gguf"
    write_gguf(w, CONFIG, out / NAME, gguf_path)
    save_llama_cpp_reference(gguf_path, tokens, "float32 KV cache", SEED)
    return 0 if d_inc < 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())
