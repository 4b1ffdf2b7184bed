#!/usr/bin/env python3
"""Write a GGUF (F32, F16, BF16 or Q8_0 tensors) of a tiny Hugging Face llama
directory the way llama.cpp's convert_hf_to_gguf.py does, with the PyPI gguf package.

    .venv/bin/python tools/tiny_gguf.py tests/fixtures/models/tiny-llama OUT.gguf [--type F16]

Used by the tests to make float GGUF sources at test time (nothing is stored):
  - names: token_embd, output_norm, output, blk.N.{attn_norm, ffn_norm, attn_q, attn_k,
    attn_v, attn_output, ffn_gate, ffn_up, ffn_down}.weight;
  - q_proj/k_proj rows permuted for interleaved RoPE (llama.cpp's LlamaModel.permute);
  - 2-D weights in the chosen type, norms in F32 (as llama.cpp keeps 1-D tensors);
  - the tokenizer as tokenizer.ggml.* (model gpt2, pre gpt2: the fixtures' byte-level
    BPE), special tokens as CONTROL, and tokenizer_config.json's chat_template.
`gguf_tensors(hf_dir, type)` returns the tensors as written (name -> numpy array, the
values after rounding to the type, as float32) for tests to compare against.
"""
import argparse
import json
import sys
from pathlib import Path

import numpy as np

TYPES = ("F32", "F16", "BF16", "Q8_0")
LAYER_PARTS = {"input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm",
               "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
               "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output",
               "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
               "mlp.down_proj": "ffn_down"}


def gguf_name(hf: str) -> str:
    top = {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight":
           "output_norm.weight", "lm_head.weight": "output.weight"}
    if hf in top:
        return top[hf]
    _, _, n, rest = hf.split(".", 3)  # model.layers.N.<part>.weight
    part, suffix = rest.rsplit(".", 1)
    return f"blk.{n}.{LAYER_PARTS[part]}.{suffix}"


def permute(w: np.ndarray, n_head: int) -> np.ndarray:
    """llama.cpp's LlamaModel.permute: HF's rotate-half rows -> interleaved pairs."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2) \
            .reshape(w.shape)


def rounded(a: np.ndarray, qtype: str) -> np.ndarray:
    """float32 values of `a` after storing it as `qtype` (round to nearest even)."""
    if qtype == "F32":
        return a.astype(np.float32)
    if qtype == "F16":
        return a.astype(np.float16).astype(np.float32)
    if qtype == "Q8_0":
        import gguf

        kind = gguf.GGMLQuantizationType.Q8_0
        return gguf.quants.dequantize(gguf.quants.quantize(a.astype(np.float32), kind), kind)
    bits = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return (bits.astype(np.uint32) << 16).view(np.float32)


def gguf_tensors(hf_dir: Path, qtype: str) -> dict:
    from safetensors.numpy import load_file

    if qtype not in TYPES:
        raise ValueError(f"type must be one of {TYPES}, not {qtype!r}")
    cfg = json.loads((hf_dir / "config.json").read_text())
    if cfg["model_type"] != "llama":
        raise ValueError("only llama models (the permutation is llama.cpp's llama one)")
    out = {}
    for name, w in sorted(load_file(str(hf_dir / "model.safetensors")).items()):
        if name.endswith("q_proj.weight"):
            w = permute(w, cfg["num_attention_heads"])
        elif name.endswith("k_proj.weight"):
            w = permute(w, cfg["num_key_value_heads"])
        out[gguf_name(name)] = rounded(w, qtype if w.ndim == 2 else "F32")
    return out


def add_tokenizer(w, hf_dir: Path, cfg: dict, pre: str = "gpt2"):
    """The fixtures' byte-level BPE as tokenizer.ggml.* (model gpt2, pre-tokenizer `pre`),
    special tokens as CONTROL, and tokenizer_config.json's chat_template."""
    import gguf

    tok = json.loads((hf_dir / "tokenizer.json").read_text())
    tok_cfg = json.loads((hf_dir / "tokenizer_config.json").read_text())
    vocab = dict(tok["model"]["vocab"])
    specials = {t["content"] for t in tok["added_tokens"] if t.get("special")}
    for t in tok["added_tokens"]:
        vocab[t["content"]] = t["id"]
    tokens = [t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
    assert [vocab[t] for t in tokens] == list(range(len(tokens))), "vocabulary ids have gaps"
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    w.add_token_types([gguf.TokenType.CONTROL if t in specials else gguf.TokenType.NORMAL
                       for t in tokens])
    w.add_token_merges([m if isinstance(m, str) else " ".join(m) for m in tok["model"]["merges"]])
    w.add_bos_token_id(cfg["bos_token_id"])
    w.add_eos_token_id(cfg["eos_token_id"])
    if tok_cfg.get("chat_template"):
        w.add_chat_template(tok_cfg["chat_template"])


def add_decoder_metadata(w, cfg: dict, blocks: int, value_length: int | None = None):
    """The sizes every decoder GGUF states (context, widths, `blocks` blocks, heads, norm
    epsilon, RoPE base), from Hugging Face config `cfg`, in llama.cpp's converter's order.
    Values are head_dim wide unless `value_length` says otherwise."""
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(cfg["hidden_size"])
    w.add_block_count(blocks)
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_head_count(cfg["num_attention_heads"])
    w.add_head_count_kv(cfg["num_key_value_heads"])
    w.add_key_length(cfg["head_dim"])
    w.add_value_length(value_length or cfg["head_dim"])
    w.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    w.add_rope_freq_base(cfg["rope_theta"])


def decoder_tensors(w: dict, parts: dict, layers, suffixes=("weight",)) -> dict:
    """GGUF names -> arrays of Hugging Face weights `w`: the embeddings, the final norm, the
    head where `w` has one, and for each (block, layer) pair of `layers` the layer's tensors
    `parts` names (Hugging Face part -> GGUF part) with each of `suffixes` that `w` holds."""
    t = {"token_embd.weight": w["model.embed_tokens.weight"],
         "output_norm.weight": w["model.norm.weight"]}
    if "lm_head.weight" in w:
        t["output.weight"] = w["lm_head.weight"]
    for n, i in layers:
        for hf, name in parts.items():
            for suffix in suffixes:
                if f"model.layers.{i}.{hf}.{suffix}" in w:
                    t[f"blk.{n}.{name}.{suffix}"] = w[f"model.layers.{i}.{hf}.{suffix}"]
    return t


def stacked_experts(w: dict, layer: int, experts: int, names=("gate", "up", "down")) -> dict:
    """ffn_{name}_exps: layer `layer`'s experts' {name}_proj weights stacked, as llama.cpp's
    converter stores them."""
    p = f"model.layers.{layer}.mlp.experts."
    return {name: np.stack([w[f"{p}{e}.{name}_proj.weight"] for e in range(experts)])
            for name in names}


def write_tensors(w, tensors: dict, qtype: str = "F32"):
    """Adds `tensors` to GGUFWriter `w` in name order, then writes and closes it: float32,
    or with qtype Q4_0 / Q8_0 every matrix whose rows split into 32-value blocks in that type
    but the norms and the router (as llama.cpp's quantizer keeps them)."""
    import gguf

    for name, a in sorted(tensors.items()):
        matrix = a.ndim >= 2 and a.shape[-1] % 32 == 0
        if qtype != "F32" and matrix and "norm" not in name and "ffn_gate_inp" not in name:
            kind = getattr(gguf.GGMLQuantizationType, qtype)
            w.add_tensor(name, gguf.quants.quantize(a.astype(np.float32), kind), raw_dtype=kind)
        else:
            w.add_tensor(name, a.astype(np.float32))
    close_gguf(w)


def close_gguf(w):
    """Writes what GGUFWriter `w` holds and closes it."""
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_gguf(hf_dir: Path, out: Path, qtype: str = "F32") -> Path:
    import gguf

    hf_dir = Path(hf_dir)
    cfg = json.loads((hf_dir / "config.json").read_text())
    w = gguf.GGUFWriter(str(out), "llama")
    add_decoder_metadata(w, cfg, cfg["num_hidden_layers"])
    w.add_vocab_size(cfg["vocab_size"])
    add_tokenizer(w, hf_dir, cfg)
    for name, a in gguf_tensors(hf_dir, qtype).items():
        t = qtype if a.ndim == 2 else "F32"
        if t in ("BF16", "Q8_0"):
            kind = getattr(gguf.GGMLQuantizationType, t)
            w.add_tensor(name, gguf.quants.quantize(a, kind), raw_dtype=kind)
        else:
            w.add_tensor(name, a.astype(np.float16 if t == "F16" else np.float32))
    close_gguf(w)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("hf_dir", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--type", choices=TYPES, default="F32")
    args = ap.parse_args()
    write_gguf(args.hf_dir, args.out, args.type)
    print(args.out, file=sys.stderr)


if __name__ == "__main__":
    main()
