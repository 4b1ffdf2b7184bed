#!/usr/bin/env python3
"""Write tests/fixtures/models/tiny-gpt-oss and tiny-gpt-oss-mxfp4: tiny random gpt-oss
models and mlx-lm's logits for them (reference_logits.safetensors, the layout
make_reference_logits.py writes).

    .venv/bin/python tools/make_tiny_gpt_oss.py [--out tests/fixtures/models]

GptOssForCausalLM (model_type gpt_oss), float32: 3 layers (sliding, full, sliding, with a
window of 4 positions of the 64), hidden 64, 4 heads / 2 KV heads, head_dim 32, vocab 512,
biased q/k/v/o projections, per-head attention sinks, YaRN RoPE as gpt-oss ships it
(factor 32, base 150000, original context 4096); in every layer 8 experts of width 64,
2 chosen per token by a biased router, each expert's projections with biases and gated
by the clamped SwiGLU (limit 7).

Weights: N(0, 0.02), q/k projections N(0, 0.1); sinks N(0, 1), so each head's sink takes a
real share of its softmax; the router N(0, 0.5), so routing is decisive; the experts' gate
and up projections N(0, 0.6), so about one value in six passes the clamp's limit of 7
and the clamp shows in the logits; their down projections N(0, 0.05).

tiny-gpt-oss holds the weights in mlx-lm's layout (experts stacked per projection).
tiny-gpt-oss-mxfp4 holds the same model as OpenAI ships gpt-oss: the experts quantized
to MXFP4 (mlx.core.quantize, mode mxfp4) and stored as *_blocks / *_scales / *_bias with
gate and up interleaved, and a quantization_config naming mxfp4; its logits are mlx-lm's
on that directory. Tokenizer files: tiny-qwen3's.
"""
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_reference_logits import models_dir_from_args, write_tiny_model  # noqa: E402
from make_tiny_models import base_config  # noqa: E402
from make_tiny_qwen3_moe import normal, random_decoder, save_llama_cpp_reference  # noqa: E402
from tiny_gguf import add_decoder_metadata, add_tokenizer, close_gguf, decoder_tensors  # noqa: E402

SEED = 29
NAME = "tiny-gpt-oss"
CONFIG = base_config(512, {"<|endoftext|>": 0, "<|im_end|>": 2})
CONFIG.update(
    architectures=["GptOssForCausalLM"], model_type="gpt_oss", num_hidden_layers=3,
    head_dim=32, intermediate_size=64, num_local_experts=8, num_experts_per_tok=2,
    sliding_window=4, layer_types=["sliding_attention", "full_attention", "sliding_attention"],
    rope_theta=150000.0, max_position_embeddings=131072, attention_bias=True,
    swiglu_limit=7.0, tie_word_embeddings=False,
    rope_scaling={"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
                  "original_max_position_embeddings": 4096})


def weights(rng: np.random.Generator, c: dict = CONFIG) -> dict:
    """Random weights of a gpt-oss config in mlx-lm's layout."""
    H, I, E = c["hidden_size"], c["intermediate_size"], c["num_local_experts"]

    def rest_of_layer(p, i, w):
        w[p + "self_attn.sinks"] = normal(rng, c["num_attention_heads"], 1.0)
        w[p + "mlp.router.weight"] = normal(rng, (E, H), 0.5)
        w[p + "mlp.router.bias"] = normal(rng, E, 0.1)
        for proj, shape, std in (("gate_proj", (E, I, H), 0.6), ("up_proj", (E, I, H), 0.6),
                                 ("down_proj", (E, H, I), 0.05)):
            w[f"{p}mlp.experts.{proj}.weight"] = normal(rng, shape, std)
            w[f"{p}mlp.experts.{proj}.bias"] = normal(rng, shape[:2], 0.05)

    w = random_decoder(rng, c, rest_of_layer, biases=True)
    w["lm_head.weight"] = normal(rng, (c["vocab_size"], H))
    return w


def openai_mxfp4(w: dict) -> dict:
    """`w` with each expert projection quantized to MXFP4 and stored as OpenAI's gpt-oss
    checkpoints store it (the inverse of mlx-lm's gpt_oss sanitize)."""
    import mlx.core as mx

    def blocks_and_scales(a):
        q, scales = mx.quantize(mx.array(a), group_size=32, bits=4, mode="mxfp4")[:2]
        e, rows, packed = q.shape
        blocks = np.array(q.view(mx.uint8)).reshape(e, rows, packed * 4 // 16, 16)
        return blocks, np.array(scales)

    def interleave(gate, up):
        out = np.empty((gate.shape[0], 2 * gate.shape[1]) + gate.shape[2:], gate.dtype)
        out[:, 0::2], out[:, 1::2] = gate, up
        return out

    out = {}
    for name, a in w.items():
        if ".mlp.experts." not in name:
            out[name] = a
    layers = sorted({n.split(".mlp.experts.")[0] for n in w if ".mlp.experts." in n})
    for layer in layers:
        p = layer + ".mlp.experts."
        gate = blocks_and_scales(w[p + "gate_proj.weight"])
        up = blocks_and_scales(w[p + "up_proj.weight"])
        down = blocks_and_scales(w[p + "down_proj.weight"])
        out[p + "gate_up_proj_blocks"] = interleave(gate[0], up[0])
        out[p + "gate_up_proj_scales"] = interleave(gate[1], up[1])
        out[p + "gate_up_proj_bias"] = interleave(w[p + "gate_proj.bias"], w[p + "up_proj.bias"])
        out[p + "down_proj_blocks"], out[p + "down_proj_scales"] = down
        out[p + "down_proj_bias"] = w[p + "down_proj.bias"]
    return out


GGUF_PARTS = {"input_layernorm": "attn_norm", "post_attention_layernorm": "post_attention_norm",
              "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
              "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output",
              "mlp.router": "ffn_gate_inp"}


def ggml_mxfp4(blocks: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """OpenAI's MXFP4 (blocks [..., G, 16]: byte j holds values 2j low and 2j + 1 high;
    scales [..., G]) as ggml's MXFP4 blocks [..., G * 17]: the scale byte, then 16 bytes
    whose byte j holds value j low and value j + 16 high. The same codes and scales."""
    codes = np.stack([blocks & 0xF, blocks >> 4], axis=-1).reshape(*blocks.shape[:-1], 32)
    qs = (codes[..., :16] | (codes[..., 16:] << 4)).astype(np.uint8)
    out = np.concatenate([scales[..., None], qs], axis=-1)
    return out.reshape(*blocks.shape[:-2], -1)


def write_gguf(q: dict, c: dict, model_dir: Path, out: Path):
    """The MXFP4 model `q` (openai_mxfp4's layout, config `c`, tokenizer files in
    `model_dir`) as llama.cpp's gpt-oss GGUF: experts in ggml's MXFP4, the rest float32."""
    import gguf

    g = gguf.GGUFWriter(str(out), "gpt-oss")
    add_decoder_metadata(g, c, c["num_hidden_layers"])
    g.add_expert_count(c["num_local_experts"])
    g.add_expert_used_count(c["num_experts_per_tok"])
    g.add_expert_feed_forward_length(c["intermediate_size"])
    g.add_sliding_window(c["sliding_window"])
    rope = c["rope_scaling"]
    g.add_rope_scaling_type(gguf.RopeScalingType.YARN)
    g.add_rope_scaling_factor(rope["factor"])
    g.add_rope_scaling_orig_ctx_len(rope["original_max_position_embeddings"])
    g.add_vocab_size(c["vocab_size"])
    add_tokenizer(g, model_dir, c, pre="gpt-4o")
    layers = range(c["num_hidden_layers"])
    t = decoder_tensors(q, GGUF_PARTS, zip(layers, layers), ("weight", "bias"))
    for i in layers:
        p = f"model.layers.{i}."
        t[f"blk.{i}.attn_sinks.weight"] = q[p + "self_attn.sinks"]
        e = p + "mlp.experts."
        gate_up = ggml_mxfp4(q[e + "gate_up_proj_blocks"], q[e + "gate_up_proj_scales"])
        t[f"blk.{i}.ffn_gate_exps.weight"] = gate_up[:, 0::2]
        t[f"blk.{i}.ffn_up_exps.weight"] = gate_up[:, 1::2]
        t[f"blk.{i}.ffn_down_exps.weight"] = ggml_mxfp4(q[e + "down_proj_blocks"],
                                                        q[e + "down_proj_scales"])
        t[f"blk.{i}.ffn_gate_exps.bias"] = q[e + "gate_up_proj_bias"][:, 0::2]
        t[f"blk.{i}.ffn_up_exps.bias"] = q[e + "gate_up_proj_bias"][:, 1::2]
        t[f"blk.{i}.ffn_down_exps.bias"] = q[e + "down_proj_bias"]
    for name, a in sorted(t.items()):
        if a.dtype == np.uint8:
            g.add_tensor(name, np.ascontiguousarray(a), raw_dtype=gguf.GGMLQuantizationType.MXFP4)
        else:
            g.add_tensor(name, a.astype(np.float32))
    close_gguf(g)


def main() -> int:
    out = models_dir_from_args(__doc__)
    rng = np.random.default_rng(SEED)
    w = weights(rng)
    tokens_rng_state = rng.bit_generator.state
    _, d_inc = write_tiny_model(out / NAME, CONFIG, w, rng, SEED, out / "tiny-qwen3")
    # The same tokens for the MXFP4 form.
    rng.bit_generator.state = tokens_rng_state
    config = dict(CONFIG, quantization_config={
        "quant_method": "mxfp4",
        "modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router",
                                   "model.embed_tokens", "lm_head"]})
    q = openai_mxfp4(w)
    tokens, d_inc_q = write_tiny_model(out / f"{NAME}-mxfp4", config, q, rng, SEED,
                                       out / "tiny-qwen3")

    gguf_path = out.parent / "gguf" / f"{NAME}.gguf"
    write_gguf(q, CONFIG, out / NAME, gguf_path)
    save_llama_cpp_reference(gguf_path, tokens, "float32 KV cache", SEED)
    return 0 if max(d_inc, d_inc_q) < 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())
