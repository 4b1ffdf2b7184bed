#!/usr/bin/env python3
"""Write tests/fixtures/models/tiny-qwen3-next and tiny-qwen3-5: tiny random hybrid
recurrent models (gated delta-net linear attention beside gated full attention) and
mlx-lm's logits for them (reference_logits.safetensors, the layout
make_reference_logits.py writes).

    .venv/bin/python tools/make_tiny_qwen3_next.py [--out tests/fixtures/models]

tiny-qwen3-next: Qwen3NextForCausalLM (model_type qwen3_next), float32, in the Hugging
Face layout (in_proj_qkvz and in_proj_ba with rows grouped by key head, conv1d as
[channels, 1, kernel], RMSNorm weights stored as w for a scale of 1 + w, one tensor per
expert): 4 layers, attention every 2nd (full_attention_interval 2: layers 1 and 3),
hidden 64; linear attention with 2 key heads of 16 and 4 value heads of 24, a
convolution of 4; attention of 4 heads / 2 KV heads of 32 with its output gate and RoPE on
a quarter of each head; 8 experts of 32, top 2, renormalized, and a shared expert of 48
behind its sigmoid gate; layer 2 dense (mlp_only_layers, intermediate 128); vocab 512,
an untied head.

tiny-qwen3-5: Qwen3.5's language model (model_type qwen3_5, its fields in text_config,
RoPE in rope_parameters) as Hugging Face ships it: model.language_model.* beside a vision
tower's tensor (model.visual.*) and multi-token-prediction weights (mtp.*), both of which
a text runner leaves, in_proj_qkv / in_proj_z / in_proj_b / in_proj_a apart; dense, 4
layers, attention at layer 3 (full_attention_interval 4), tied embeddings.

tiny-qwen3-5-moe: Qwen3.5's mixture (model_type qwen3_5_moe) as Hugging Face ships it:
tiny-qwen3-5's layout with tiny-qwen3-next's experts (8 of 32, top 2, a gated shared
expert of 48) in every layer, each layer's experts fused: mlp.experts.gate_up_proj
[experts, 2 x 32, hidden] (gate's rows, then up's) and mlp.experts.down_proj; untied.

tiny-qwen3-next and tiny-qwen3-5 carry a multi-token-prediction head (mtp.*, with the
model's kind of feed-forward),
and their reference_logits.safetensors also hold mtp_logits: the prediction head's
logits for each pair (the final hidden state at position t, token t + 1), t = 0 .. 62,
computed with mlx-lm's own layers (Qwen3NextAttention, the MLP or the sparse MoE block,
RMSNorm, the output head) composed as vLLM's Qwen3.5 and Qwen3-Next MTP models compose
them (mlx-lm itself drops the head):
the embedding and the hidden state each RMS-normed (weights 1 + w), side by side through
fc, one decoder block at positions 0 .. 62, the head's norm.

Weights N(0, 0.02) as make_tiny_models.py's, the linear attention's projections N(0, 0.1),
the convolution N(0, 0.3); A = exp(A_log) uniform in (0.01, 0.3) and dt_bias N(-1, 0.5), so
the state decays by about 5% a position and carries the whole 64-token sequence.
Tokenizer files: tiny-qwen3's.
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_reference_logits import models_dir_from_args, write_tiny_model  # noqa: E402
from make_tiny_models import base_config  # noqa: E402
from make_tiny_qwen3_moe import norm, normal  # noqa: E402

SEED = 37
LINEAR = dict(linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=16,
              linear_value_head_dim=24, linear_conv_kernel_dim=4)
NEXT = base_config(512, {"<|endoftext|>": 0, "<|im_end|>": 2})
NEXT.update(architectures=["Qwen3NextForCausalLM"], model_type="qwen3_next", num_hidden_layers=4,
            head_dim=32, full_attention_interval=2, partial_rotary_factor=0.25, num_experts=8,
            num_experts_per_tok=2, moe_intermediate_size=32, shared_expert_intermediate_size=48,
            norm_topk_prob=True, decoder_sparse_step=1, mlp_only_layers=[2],
            tie_word_embeddings=False, **LINEAR)
TEXT = base_config(512, {"<|endoftext|>": 0, "<|im_end|>": 2})
for key in ("rope_theta",):
    del TEXT[key]
TEXT.update(model_type="qwen3_5_text", num_hidden_layers=4, head_dim=32, full_attention_interval=4,
            tie_word_embeddings=True,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                             "partial_rotary_factor": 0.25, "mrope_section": [2, 1, 1],
                             "mrope_interleaved": True},
            **LINEAR)
QWEN3_5 = {"architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5",
           "tie_word_embeddings": True, "text_config": TEXT,
           "vision_config": {"depth": 1, "hidden_size": 16}}


def zero_centred(rng, n):
    """An RMSNorm weight as Hugging Face stores Qwen3-Next's: w for a scale of 1 + w."""
    return norm(rng, n) - 1.0


def linear_attention(rng, c: dict, p: str, fused: bool) -> dict:
    H = c["hidden_size"]
    nk, nv = c["linear_num_key_heads"], c["linear_num_value_heads"]
    dk, dv = c["linear_key_head_dim"], c["linear_value_head_dim"]
    channels = 2 * nk * dk + nv * dv
    w = {}
    if fused:  # rows grouped by key head: [q k v z] of head 0, then head 1, ...
        w[p + "in_proj_qkvz.weight"] = normal(rng, (2 * nk * dk + 2 * nv * dv, H), 0.1)
        w[p + "in_proj_ba.weight"] = normal(rng, (2 * nv, H), 0.1)
    else:
        w[p + "in_proj_qkv.weight"] = normal(rng, (channels, H), 0.1)
        w[p + "in_proj_z.weight"] = normal(rng, (nv * dv, H), 0.1)
        w[p + "in_proj_b.weight"] = normal(rng, (nv, H), 0.1)
        w[p + "in_proj_a.weight"] = normal(rng, (nv, H), 0.1)
    w[p + "conv1d.weight"] = normal(rng, (channels, 1, c["linear_conv_kernel_dim"]), 0.3)
    w[p + "A_log"] = np.log(rng.uniform(0.01, 0.3, nv)).astype(np.float32)
    w[p + "dt_bias"] = (rng.standard_normal(nv) * 0.5 - 1.0).astype(np.float32)
    w[p + "norm.weight"] = norm(rng, dv)
    w[p + "out_proj.weight"] = normal(rng, (H, nv * dv), 0.1)
    return w


def gated_attention(rng, c: dict, p: str) -> dict:
    H, nh, nkv, hd = (c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"],
                      c["head_dim"])
    return {p + "q_proj.weight": normal(rng, (2 * nh * hd, H), 0.1),
            p + "k_proj.weight": normal(rng, (nkv * hd, H), 0.1),
            p + "v_proj.weight": normal(rng, (nkv * hd, H)),
            p + "o_proj.weight": normal(rng, (H, nh * hd)),
            p + "q_norm.weight": zero_centred(rng, hd), p + "k_norm.weight": zero_centred(rng, hd)}


def mlp(rng, p: str, H: int, width: int, std: float) -> dict:
    return {p + "gate_proj.weight": normal(rng, (width, H), std),
            p + "up_proj.weight": normal(rng, (width, H), std),
            p + "down_proj.weight": normal(rng, (H, width), std)}


def decoder(rng, c: dict, root: str, fused: bool) -> dict:
    H = c["hidden_size"]
    w = {root + "embed_tokens.weight": normal(rng, (c["vocab_size"], H)),
         root + "norm.weight": zero_centred(rng, H)}
    for i in range(c["num_hidden_layers"]):
        p = f"{root}layers.{i}."
        w[p + "input_layernorm.weight"] = zero_centred(rng, H)
        w[p + "post_attention_layernorm.weight"] = zero_centred(rng, H)
        if (i + 1) % c["full_attention_interval"]:
            w.update(linear_attention(rng, c, p + "linear_attn.", fused))
        else:
            w.update(gated_attention(rng, c, p + "self_attn."))
        w.update(feed_forward(rng, c, p + "mlp.", i in c.get("mlp_only_layers", [])))
    return w


def feed_forward(rng, c: dict, p: str, dense: bool) -> dict:
    """A dense MLP, or (where the config has experts) the experts behind a router and a
    gated shared expert."""
    H = c["hidden_size"]
    if c.get("num_experts", 0) == 0 or dense:
        return mlp(rng, p, H, c["intermediate_size"], 0.02)
    w = {p + "gate.weight": normal(rng, (c["num_experts"], H), 0.5)}
    for e in range(c["num_experts"]):
        w.update(mlp(rng, f"{p}experts.{e}.", H, c["moe_intermediate_size"], 0.15))
    w.update(mlp(rng, p + "shared_expert.", H, c["shared_expert_intermediate_size"], 0.15))
    w[p + "shared_expert_gate.weight"] = normal(rng, (1, H), 0.5)
    return w


MOE_TEXT = dict(TEXT, model_type="qwen3_5_moe_text", tie_word_embeddings=False, num_experts=8,
                num_experts_per_tok=2, moe_intermediate_size=32,
                shared_expert_intermediate_size=48, norm_topk_prob=True)
QWEN3_5_MOE = dict(QWEN3_5, architectures=["Qwen3_5MoeForConditionalGeneration"],
                   model_type="qwen3_5_moe", tie_word_embeddings=False, text_config=MOE_TEXT)


def qwen3_5_moe_weights(rng) -> dict:
    """Per-expert weights drawn as decoder() draws them, then fused as Qwen3.5 ships them."""
    c = MOE_TEXT
    w = decoder(rng, c, "model.language_model.", fused=False)
    w["lm_head.weight"] = normal(rng, (c["vocab_size"], c["hidden_size"]))
    for i in range(c["num_hidden_layers"]):
        p = f"model.language_model.layers.{i}.mlp.experts."
        per = [[w.pop(f"{p}{e}.{n}_proj.weight") for e in range(c["num_experts"])]
               for n in ("gate", "up", "down")]
        w[p + "gate_up_proj"] = np.concatenate([np.stack(per[0]), np.stack(per[1])], axis=1)
        w[p + "down_proj"] = np.stack(per[2])
    return w


def qwen3_next_weights(rng, c: dict = NEXT, with_mtp: bool = True) -> dict:
    w = decoder(rng, c, "model.", fused=True)
    w["lm_head.weight"] = normal(rng, (c["vocab_size"], c["hidden_size"]))
    if with_mtp:
        w.update(mtp_weights(rng, c))
    return w


def qwen3_5_weights(rng) -> dict:
    w = decoder(rng, TEXT, "model.language_model.", fused=False)
    H = TEXT["hidden_size"]
    w["model.visual.patch_embed.proj.weight"] = normal(rng, (16, 3, 2, 2))
    w.update(mtp_weights(rng, TEXT))
    return w


def mtp_weights(rng, c: dict) -> dict:
    """The multi-token-prediction head: one more attention layer, with the model's kind
    of feed-forward, behind a fusion of the next token's embedding and the last hidden
    state."""
    H = c["hidden_size"]
    w = {"mtp.fc.weight": normal(rng, (H, 2 * H)),
         "mtp.pre_fc_norm_embedding.weight": zero_centred(rng, H),
         "mtp.pre_fc_norm_hidden.weight": zero_centred(rng, H),
         "mtp.norm.weight": zero_centred(rng, H),
         "mtp.layers.0.input_layernorm.weight": zero_centred(rng, H),
         "mtp.layers.0.post_attention_layernorm.weight": zero_centred(rng, H)}
    w.update(gated_attention(rng, c, "mtp.layers.0.self_attn."))
    w.update(feed_forward(rng, c, "mtp.layers.0.mlp.", dense=False))
    return w


def mtp_reference(d: Path, tokens) -> dict:
    """The prediction head's logits for the pairs of `tokens` (see the module's docstring)."""
    import mlx.core as mx
    import mlx.nn as nn
    from mlx_lm import load
    from mlx_lm.models.qwen3_next import (Qwen3NextAttention, Qwen3NextMLP,
                                          Qwen3NextSparseMoeBlock)

    model, _ = load(str(d))
    lm = getattr(model, "language_model", model)  # Qwen3.5's text model, or Qwen3-Next
    args = lm.args
    w = mx.load(str(d / "model.safetensors"))
    layer = "mtp.layers.0."

    def norm(name, dims=args.hidden_size):
        n = nn.RMSNorm(dims, eps=args.rms_norm_eps)
        n.weight = w[name] + 1.0
        return n

    def own(prefix):
        mine = {k[len(prefix):]: v + 1.0 if k.endswith("_norm.weight") else v
                for k, v in w.items() if k.startswith(prefix)}
        for proj in ("gate_proj", "up_proj", "down_proj"):  # experts stacked, as mlx-lm does
            experts = sorted((k for k in mine if k.startswith("experts.") and proj in k),
                             key=lambda k: int(k.split(".")[1]))
            if experts:
                mine[f"switch_mlp.{proj}.weight"] = mx.stack([mine.pop(k) for k in experts])
        return list(mine.items())

    attention = Qwen3NextAttention(args)
    attention.load_weights(own(layer + "self_attn."))
    if getattr(args, "num_experts", 0) > 0:
        mlp = Qwen3NextSparseMoeBlock(args)
    else:
        mlp = Qwen3NextMLP(args.hidden_size, args.intermediate_size)
    mlp.load_weights(own(layer + "mlp."))
    fc = nn.Linear(2 * args.hidden_size, args.hidden_size, bias=False)
    fc.weight = w["mtp.fc.weight"]
    ids = mx.array([[int(t) for t in tokens]])
    hidden = lm.model(ids)  # the final, normed hidden states
    x = fc(mx.concatenate([norm("mtp.pre_fc_norm_embedding.weight")(lm.model.embed_tokens(ids[:, 1:])),
                           norm("mtp.pre_fc_norm_hidden.weight")(hidden[:, :-1])], axis=-1))
    h = x + attention(norm(layer + "input_layernorm.weight")(x), mask="causal")
    h = h + mlp(norm(layer + "post_attention_layernorm.weight")(h))
    head = lm.model.embed_tokens.as_linear if args.tie_word_embeddings else lm.lm_head
    logits = head(norm("mtp.norm.weight")(h))[0].astype(mx.float32)
    mx.eval(logits)
    return {"mtp_logits": (np.array(logits), "the prediction head's logits for pairs 0..T-2")}


def main() -> int:
    out = models_dir_from_args(__doc__)
    rng = np.random.default_rng(SEED)
    worst = 0.0
    for name, config, weights, extra in (
            ("tiny-qwen3-next", NEXT, qwen3_next_weights, mtp_reference),
            ("tiny-qwen3-5", QWEN3_5, qwen3_5_weights, mtp_reference),
            ("tiny-qwen3-5-moe", QWEN3_5_MOE, qwen3_5_moe_weights, None)):
        _, d_inc = write_tiny_model(out / name, config, weights(rng), rng, SEED, out / "tiny-qwen3",
                                    extra)
        worst = max(worst, d_inc)
    return 0 if worst < 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())
