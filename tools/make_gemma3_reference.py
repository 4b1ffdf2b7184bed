#!/usr/bin/env python3
"""llama.cpp reference for Gemma 3 270M Q4_K_M -> tests/fixtures/gemma3_llamacpp.json

    .venv/bin/python tools/make_gemma3_reference.py [--gguf PATH] [--out PATH]   (~2 min)

The same method and JSON layout as make_llamacpp_reference.py (llama-cpp-python, 2
threads, argmax over raw logits, top-2 margins), for the base model: the teacher-forced
text and the greedy prompts are plain text after llama.cpp's BOS, no chat template.

llama.cpp rounds activations to 8 bits in its CPU matmuls, which moves Gemma's logits
more than SmolLM2's: exact math disagrees with it at top-2 margins up to ~0.36. So the
file also holds `exact_float64` (argmax and margin per teacher-forced position): a
float64 numpy forward over the weights as gguf.quants.dequantize gives them, following
mlx-lm's gemma3_text and llama.cpp's gemma3 graph (sqrt(hidden) embedding scale, norms
already 1 + w in the file, every 6th layer global, local RoPE base 10000).
"""
import argparse
import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_llamacpp_reference import (  # noqa: E402
    GREEDY_TOKENS, NEAR_TIE, VARIED_TEXT, greedy, open_llama, teacher_forced, tokenize)

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_GGUF = ROOT / ".venv/models/gemma-3-270m-q4_k_m.gguf"

PROMPTS = [
    "The capital of France is",
    "Here is a haiku about the ocean:\n",
    "The sky is blue because",
    "Three fruits that are red: apples,",
    "def add(a, b):\n    return",
]


def exact_teacher_forced(gguf_path: Path, tokens):
    import gguf
    import numpy as np

    reader = gguf.GGUFReader(str(gguf_path))
    tensors = {t.name: t for t in reader.tensors}
    meta = {k: f.contents() for k, f in reader.fields.items() if k.startswith("gemma3.")}
    hidden, layers = meta["gemma3.embedding_length"], meta["gemma3.block_count"]
    heads, kv_heads = meta["gemma3.attention.head_count"], meta["gemma3.attention.head_count_kv"]
    dim, eps = meta["gemma3.attention.key_length"], meta["gemma3.attention.layer_norm_rms_epsilon"]
    window, base = meta["gemma3.attention.sliding_window"], meta["gemma3.rope.freq_base"]

    def weight(name):
        t = tensors[name]
        a = np.asarray(gguf.quants.dequantize(t.data, t.tensor_type), dtype=np.float64)
        return a.reshape([int(d) for d in reversed(t.shape)])

    def rms(x, w):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w

    n = len(tokens)
    pos = np.arange(n)

    def rope(x, theta):  # [n, heads, dim], rotate-half pairs
        half = dim // 2
        ang = pos[:, None] * theta ** (-np.arange(half) * 2.0 / dim)[None, :]
        c, s = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
        return np.concatenate([x[..., :half] * c - x[..., half:] * s,
                               x[..., half:] * c + x[..., :half] * s], -1)

    emb = weight("token_embd.weight")
    x = emb[tokens] * np.sqrt(float(hidden))
    for i in range(layers):
        p = f"blk.{i}."
        h = rms(x, weight(p + "attn_norm.weight"))
        q = rms((h @ weight(p + "attn_q.weight").T).reshape(n, heads, dim),
                weight(p + "attn_q_norm.weight"))
        k = rms((h @ weight(p + "attn_k.weight").T).reshape(n, kv_heads, dim),
                weight(p + "attn_k_norm.weight"))
        v = (h @ weight(p + "attn_v.weight").T).reshape(n, kv_heads, dim)
        is_global = (i + 1) % 6 == 0
        theta = base if is_global else 10000.0
        q, k = rope(q, theta), rope(k, theta)
        k, v = (np.repeat(a, heads // kv_heads, axis=1) for a in (k, v))
        scores = np.einsum("qhd,khd->hqk", q, k) / np.sqrt(dim)
        mask = pos[None, :] <= pos[:, None]
        if not is_global:
            mask &= pos[None, :] > pos[:, None] - window
        scores = np.where(mask[None], scores, -np.inf)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        scores /= scores.sum(-1, keepdims=True)
        o = np.einsum("hqk,khd->qhd", scores, v).reshape(n, heads * dim)
        x = x + rms(o @ weight(p + "attn_output.weight").T, weight(p + "post_attention_norm.weight"))
        h = rms(x, weight(p + "ffn_norm.weight"))
        g = h @ weight(p + "ffn_gate.weight").T
        gelu = 0.5 * g * (1 + np.tanh(np.sqrt(2 / np.pi) * (g + 0.044715 * g ** 3)))
        m = (gelu * (h @ weight(p + "ffn_up.weight").T)) @ weight(p + "ffn_down.weight").T
        x = x + rms(m, weight(p + "post_ffw_norm.weight"))
    logits = rms(x, weight("output_norm.weight")) @ emb.T
    top = np.sort(logits, -1)
    return logits.argmax(-1).tolist(), (top[:, -1] - top[:, -2]).tolist()


def main():
    import llama_cpp

    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gguf", type=Path, default=DEFAULT_GGUF)
    ap.add_argument("--out", type=Path, default=ROOT / "tests/fixtures/gemma3_llamacpp.json")
    args = ap.parse_args()

    llm = open_llama(args.gguf)
    tokens = tokenize(llm, VARIED_TEXT)
    am, mg, _ = teacher_forced(llm, tokens)
    print(f"teacher-forced: {len(tokens)} tokens, near ties (<{NEAR_TIE}): "
          f"{sum(m < NEAR_TIE for m in mg)}")
    exact_am, exact_mg = exact_teacher_forced(args.gguf, tokens)
    print(f"exact float64: agrees with llama.cpp at {sum(a == b for a, b in zip(am, exact_am))}/"
          f"{len(am)}; largest llama.cpp margin where they differ: "
          f"{max((m for a, b, m in zip(am, exact_am, mg) if a != b), default=0):.3f}")
    cases = []
    for p in PROMPTS:
        ptoks = tokenize(llm, p)
        cont, margins = greedy(llm, ptoks, GREEDY_TOKENS)
        stable = next((i for i, m in enumerate(margins) if m < NEAR_TIE), len(margins))
        text = llm.detokenize(cont).decode("utf-8", errors="replace")
        print(f"  {p!r} -> {text!r}  (min margin {min(margins):.3f}, stable_prefix {stable})")
        cases.append({"prompt": p, "prompt_tokens": ptoks, "continuation": cont,
                      "margins": margins, "stable_prefix": stable})
    sha = hashlib.sha256(args.gguf.read_bytes()).hexdigest()
    out = {
        "reference": f"llama-cpp-python {llama_cpp.__version__}, 2 threads, CPU",
        "gguf_sha256": sha,
        "near_tie_margin": NEAR_TIE,
        "teacher_forced": {"text": VARIED_TEXT, "tokens": tokens, "argmax": am, "margin": mg},
        "exact_float64": {"argmax": exact_am, "margin": exact_mg},
        "greedy": cases,
    }
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(args.out)


if __name__ == "__main__":
    main()
