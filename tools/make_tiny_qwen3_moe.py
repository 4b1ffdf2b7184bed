#!/usr/bin/env python3
"""Write tests/fixtures/models/tiny-qwen3-moe: a tiny random Qwen3-MoE model and mlx-lm's
logits for it (reference_logits.safetensors, the layout make_reference_logits.py writes).

    .venv/bin/python tools/make_tiny_qwen3_moe.py [--out tests/fixtures/models]

Qwen3MoeForCausalLM (model_type qwen3_moe), float32: 3 layers, hidden 64, 4 heads / 2 KV
heads, head_dim 32, q/k norms, vocab 512, tied embeddings; 8 experts of intermediate 64,
2 chosen per token, norm_topk_prob; layer 1 is dense (mlp_only_layers, intermediate 128),
so a model mixes both kinds of feed-forward. Experts are stored one per layer, as Hugging
Face checkpoints do (mlx-lm stacks them into switch_mlp on load). The 64-token sequence
gives 128 (token, expert) pairs, so mlx-lm's full pass takes its sorted gather path and
the 25-token prefill and the decode steps the unsorted one. Weights as in
make_tiny_models.py: N(0, 0.02), q/k projections N(0, 0.1); the experts N(0, 0.15) and
the router N(0, 0.5), so routing is decisive and a wrong expert choice or weight moves
the logits far above float noise.
Tokenizer files: tiny-qwen3's. reference_logits.safetensors also holds logits_int8:
mlx-lm's logits with the weights `heron create --quantize int8` quantizes quantized and
dequantized (quantization moves this model's logits far, 0.48 of their largest value:
routing flips, so its quantized forms are checked against mlx-lm on the same weights).

It also writes tests/fixtures/gguf/tiny-qwen3-moe.gguf and llama.cpp's logits for it
(tiny-qwen3-moe.llamacpp.safetensors): the same weights as llama.cpp's converter lays out
a qwen3moe GGUF (ffn_gate_inp router, stacked ffn_{gate,up,down}_exps), float32, without
the dense layer 1 (llama.cpp's qwen3moe has experts in every layer), so 2 blocks. The
logits are llama-cpp-python's over the same 64 tokens (float32 KV cache, logits_all).
"""
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_reference_logits import (  # noqa: E402
    models_dir_from_args, save_safetensors_sorted, write_tiny_model)
from make_tiny_models import qwen3_config  # noqa: E402
from tiny_gguf import (  # noqa: E402
    add_decoder_metadata, add_tokenizer, decoder_tensors, stacked_experts, write_tensors)

SEED = 23
EXPERT_STD = 0.15  # the experts' outputs then move the logits by O(0.1): a wrong expert shows
NAME = "tiny-qwen3-moe"
# tiny-qwen3's configuration (make_tiny_models.py) with experts and a third layer.
CONFIG = qwen3_config(512, {"<|endoftext|>": 0, "<|im_end|>": 2})
CONFIG.update(architectures=["Qwen3MoeForCausalLM"], model_type="qwen3_moe", num_hidden_layers=3,
              num_experts=8, num_experts_per_tok=2, moe_intermediate_size=64, norm_topk_prob=True,
              decoder_sparse_step=1, mlp_only_layers=[1])


def normal(rng: np.random.Generator, shape, std=0.02):
    return (rng.standard_normal(shape) * std).astype(np.float32)


def norm(rng: np.random.Generator, n):
    return (1.0 + 0.2 * rng.standard_normal(n)).astype(np.float32)


def random_decoder(rng: np.random.Generator, c: dict, rest_of_layer, biases=False) -> dict:
    """The embeddings, final norm and each layer's two norms and attention projections of
    decoder config `c` (q/k N(0, 0.1), v/o N(0, 0.02); with `biases`, each followed by
    its bias, N(0, 0.02)); rest_of_layer(prefix, i, w) then draws the rest of layer i."""
    H, D = c["hidden_size"], c["head_dim"]
    nh, nkv = c["num_attention_heads"], c["num_key_value_heads"]
    # (shape, std) of each attention projection, drawn in this order.
    projections = {"q_proj": ((nh * D, H), 0.1), "k_proj": ((nkv * D, H), 0.1),
                   "v_proj": ((nkv * D, H), 0.02), "o_proj": ((H, nh * D), 0.02)}
    w = {"model.embed_tokens.weight": normal(rng, (c["vocab_size"], H)),
         "model.norm.weight": norm(rng, H)}
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = norm(rng, H)
        w[p + "post_attention_layernorm.weight"] = norm(rng, H)
        for name, (shape, std) in projections.items():
            w[f"{p}self_attn.{name}.weight"] = normal(rng, shape, std)
            if biases:
                w[f"{p}self_attn.{name}.bias"] = normal(rng, shape[0])
        rest_of_layer(p, i, w)
    return w


def weights(rng: np.random.Generator, c: dict = CONFIG) -> dict:
    """Random weights of a Qwen3-MoE config in Hugging Face layout (experts one by one)."""
    H, D = c["hidden_size"], c["head_dim"]

    def mlp(w, prefix, inner, std=0.02):
        w[prefix + "gate_proj.weight"] = normal(rng, (inner, H), std)
        w[prefix + "up_proj.weight"] = normal(rng, (inner, H), std)
        w[prefix + "down_proj.weight"] = normal(rng, (H, inner), std)

    def rest_of_layer(p, i, w):
        w[p + "self_attn.q_norm.weight"] = norm(rng, D)
        w[p + "self_attn.k_norm.weight"] = norm(rng, D)
        if i in c["mlp_only_layers"]:
            mlp(w, p + "mlp.", c["intermediate_size"])
            return
        w[p + "mlp.gate.weight"] = normal(rng, (c["num_experts"], H), 0.5)
        for e in range(c["num_experts"]):
            mlp(w, f"{p}mlp.experts.{e}.", c["moe_intermediate_size"], EXPERT_STD)

    return random_decoder(rng, c, rest_of_layer)


GGUF_PARTS = {"input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm",
              "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
              "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output",
              "self_attn.q_norm": "attn_q_norm", "self_attn.k_norm": "attn_k_norm",
              "mlp.gate": "ffn_gate_inp"}


def write_gguf(w: dict, c: dict, model_dir: Path, out: Path):
    """The MoE layers of Qwen3-MoE weights `w` (config `c`, tokenizer files in `model_dir`)
    as llama.cpp's qwen3moe GGUF, float32."""
    import gguf

    layers = [i for i in range(c["num_hidden_layers"]) if i not in c["mlp_only_layers"]]
    g = gguf.GGUFWriter(str(out), "qwen3moe")
    add_decoder_metadata(g, c, len(layers))
    g.add_expert_count(c["num_experts"])
    g.add_expert_used_count(c["num_experts_per_tok"])
    g.add_expert_feed_forward_length(c["moe_intermediate_size"])
    g.add_vocab_size(c["vocab_size"])
    add_tokenizer(g, model_dir, c, pre="qwen2")  # llama.cpp's qwen3moe refuses pre gpt2
    t = decoder_tensors(w, GGUF_PARTS, list(enumerate(layers)))
    for n, i in enumerate(layers):
        for proj, a in stacked_experts(w, i, c["num_experts"]).items():
            t[f"blk.{n}.ffn_{proj}_exps.weight"] = a
    write_tensors(g, t)


def llama_cpp_logits(path: Path, tokens) -> np.ndarray:
    from llama_cpp import Llama

    llm = Llama(str(path), n_ctx=2 * len(tokens), n_threads=2, logits_all=True, verbose=False,
                type_k=0, type_v=0)  # GGML_TYPE_F32 caches
    llm.eval(list(tokens))
    return np.array(llm.scores[: len(tokens)], dtype=np.float32)


def save_llama_cpp_reference(gguf_path: Path, tokens, what: str, seed: int):
    """llama.cpp's logits of `tokens` on `gguf_path`, beside it as NAME.llamacpp.safetensors
    (with the tokens; `what` says what llama.cpp ran in float32)."""
    import llama_cpp

    logits = llama_cpp_logits(gguf_path, tokens)
    print(f"{gguf_path.name}: llama.cpp logits {logits.shape}, std {logits.std():.3f}")
    save_safetensors_sorted({"tokens": tokens, "logits": logits},
                            str(gguf_path.with_suffix(".llamacpp.safetensors")),
                            {"reference": f"llama-cpp-python {llama_cpp.__version__}, CPU, {what}",
                             "seed": str(seed)})


def mlx_int8_logits(d: Path, tokens) -> np.ndarray:
    """mlx-lm's full-sequence logits with the weights `heron create --quantize int8` stores
    quantized (every matrix whose width is a multiple of 64 but norms and routers: affine,
    8 bits, groups of 64) quantized and dequantized."""
    import mlx.core as mx
    from mlx.utils import tree_flatten, tree_unflatten
    from mlx_lm import load

    model, _ = load(str(d))
    params = []
    for name, v in tree_flatten(model.parameters()):
        if v.ndim >= 2 and v.shape[-1] % 64 == 0 and "norm" not in name and \
                not name.endswith("mlp.gate.weight"):
            v = mx.dequantize(*mx.quantize(v, 64, 8), 64, 8)
        params.append((name, v))
    model.update(tree_unflatten(params))
    out = model(mx.array([tokens]))[0].astype(mx.float32)
    mx.eval(out)
    return np.array(out)


def main() -> int:
    out = models_dir_from_args(__doc__)
    rng = np.random.default_rng(SEED)
    w = weights(rng)
    d = out / NAME

    def int8(d, tokens):
        return {"logits_int8": (mlx_int8_logits(d, tokens.tolist()),
                                "the full pass with create --quantize int8's weights")}

    tokens, d_inc = write_tiny_model(d, CONFIG, w, rng, SEED, out / "tiny-qwen3", int8)

    gguf_path = out.parent / "gguf" / f"{NAME}.gguf"
    write_gguf(w, CONFIG, d, gguf_path)
    save_llama_cpp_reference(gguf_path, tokens, "float32 weights and KV cache", SEED)
    return 0 if d_inc < 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())
