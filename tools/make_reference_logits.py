#!/usr/bin/env python3
"""Reference logits for the tiny fixture models (run tools/make_tiny_models.py first).

    .venv/bin/python tools/make_reference_logits.py [--models-dir tests/fixtures/models]

For each model directory it writes reference_logits.safetensors with
  tokens              int32   [T]     fixed random ids (seeded per model)
  logits              float32 [T, V]  mlx-lm, one full forward over all T tokens
  logits_incremental  float32 [T, V]  mlx-lm, prefill of the first PREFILL tokens,
                                      then one token at a time through the KV cache
                                      made by mlx_lm.models.cache.make_prompt_cache
and metadata (mlx / mlx-lm versions, prefill length, seed, max differences).

Hugging Face transformers needs torch to run the models and torch is not
installed, so instead an independent float64 numpy forward written from the
transformers modeling code (LlamaForCausalLM / Qwen3ForCausalLM, including
transformers' llama3 RoPE frequency formula) cross-checks the mlx-lm logits.
"""
import argparse
import json
import math
import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")

import numpy as np  # noqa: E402
from safetensors.numpy import load_file  # noqa: E402

T = 64
PREFILL = 25
MODELS = ["tiny-llama", "tiny-llama3", "tiny-qwen3", "tiny-llama-sharded"]
SEEDS = {"tiny-llama": 11, "tiny-llama3": 12, "tiny-qwen3": 13, "tiny-llama-sharded": 11}


def save_safetensors_sorted(tensors: dict, path: str, metadata: dict):
    """A safetensors file with a deterministic header (safetensors' own writer orders
    the metadata keys differently from run to run, so the bytes would change)."""
    dtypes = {np.dtype(np.float32): "F32", np.dtype(np.int32): "I32", np.dtype(np.uint8): "U8"}
    header = {"__metadata__": dict(sorted(metadata.items()))}
    blobs, off = [], 0
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name])
        b = a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": dtypes[a.dtype], "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(len(h).to_bytes(8, "little"))
        f.write(h)
        for b in blobs:
            f.write(b)


# ----------------------------------------------------------------------------
# independent numpy reference (float64), following transformers' modeling code


def load_weights(d: Path) -> dict:
    w = {}
    for f in sorted(d.glob("model*.safetensors")):
        w.update(load_file(str(f)))
    return {k: v.astype(np.float64) for k, v in w.items()}


def inv_freqs(cfg, dim):
    base = cfg["rope_theta"]
    inv = 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.float64) / dim))
    rs = cfg.get("rope_scaling") or {}
    rtype = rs.get("rope_type", rs.get("type", "default"))
    if rtype == "default":
        return inv
    if rtype != "llama3":
        raise NotImplementedError(rtype)
    # transformers.modeling_rope_utils._compute_llama3_parameters
    factor = rs["factor"]
    lo, hi = rs["low_freq_factor"], rs["high_freq_factor"]
    old = rs["original_max_position_embeddings"]
    lo_wl, hi_wl = old / lo, old / hi
    wl = 2 * math.pi / inv
    inv_l = np.where(wl > lo_wl, inv / factor, inv)
    smooth = (old / wl - lo) / (hi - lo)
    smoothed = (1 - smooth) * inv_l / factor + smooth * inv_l
    medium = ~(wl < hi_wl) & ~(wl > lo_wl)
    return np.where(medium, smoothed, inv_l)


def rms_norm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def rotate_half(x):
    h = x.shape[-1] // 2
    return np.concatenate([-x[..., h:], x[..., :h]], axis=-1)


def numpy_forward(d: Path, tokens) -> np.ndarray:
    cfg = json.loads((d / "config.json").read_text())
    return numpy_forward_weights(cfg, load_weights(d), tokens)


def numpy_forward_weights(cfg: dict, w: dict, tokens) -> np.ndarray:
    """float64 forward of a Llama/Qwen3 model given float64 HF-named weights."""
    H = cfg["hidden_size"]
    nh, nkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = cfg.get("head_dim") or H // nh
    eps = cfg["rms_norm_eps"]
    qk_norm = cfg["model_type"] == "qwen3"
    Tn = len(tokens)

    inv = inv_freqs(cfg, hd)
    ang = np.arange(Tn, dtype=np.float64)[:, None] * inv[None, :]
    emb = np.concatenate([ang, ang], axis=-1)  # [T, hd]
    cos, sin = np.cos(emb), np.sin(emb)

    x = w["model.embed_tokens.weight"][np.asarray(tokens)]
    mask = np.triu(np.full((Tn, Tn), -np.inf), k=1)
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        h = rms_norm(x, w[p + "input_layernorm.weight"], eps)
        q = (h @ w[p + "self_attn.q_proj.weight"].T).reshape(Tn, nh, hd).transpose(1, 0, 2)
        k = (h @ w[p + "self_attn.k_proj.weight"].T).reshape(Tn, nkv, hd).transpose(1, 0, 2)
        v = (h @ w[p + "self_attn.v_proj.weight"].T).reshape(Tn, nkv, hd).transpose(1, 0, 2)
        if qk_norm:
            q = rms_norm(q, w[p + "self_attn.q_norm.weight"], eps)
            k = rms_norm(k, w[p + "self_attn.k_norm.weight"], eps)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = nh // nkv
        k = np.repeat(k, rep, axis=0)
        v = np.repeat(v, rep, axis=0)
        s = q @ k.transpose(0, 2, 1) / math.sqrt(hd) + mask
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        o = (s @ v).transpose(1, 0, 2).reshape(Tn, nh * hd)
        x = x + o @ w[p + "self_attn.o_proj.weight"].T
        h = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        g = h @ w[p + "mlp.gate_proj.weight"].T
        u = h @ w[p + "mlp.up_proj.weight"].T
        x = x + ((g / (1 + np.exp(-g))) * u) @ w[p + "mlp.down_proj.weight"].T
    x = rms_norm(x, w["model.norm.weight"], eps)
    head = w.get("lm_head.weight", w["model.embed_tokens.weight"])
    return x @ head.T


# ----------------------------------------------------------------------------
# mlx-lm


def mlx_logits(d: Path, tokens):
    import mlx.core as mx
    from mlx_lm import load
    from mlx_lm.models.cache import make_prompt_cache

    model, _ = load(str(d))
    full = model(mx.array([tokens]))[0].astype(mx.float32)
    mx.eval(full)

    cache = make_prompt_cache(model)
    parts = [model(mx.array([tokens[:PREFILL]]), cache=cache)[0]]
    for t in tokens[PREFILL:]:
        parts.append(model(mx.array([[t]]), cache=cache)[0])
    inc = mx.concatenate(parts, axis=0).astype(mx.float32)
    mx.eval(inc)
    return np.array(full), np.array(inc)


def models_dir_from_args(doc: str) -> Path:
    """--out (default tests/fixtures/models), for the tools that write one tiny model."""
    ap = argparse.ArgumentParser(description=doc,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).resolve().parent.parent / "tests/fixtures/models")
    return ap.parse_args().out


def write_tiny_model(d: Path, config: dict, weights: dict, rng, seed: int, tokenizer_dir: Path,
                     extra=None):
    """Writes model directory `d` (weights, config.json, the tokenizer files of
    `tokenizer_dir`) and its reference_logits.safetensors for T tokens drawn from `rng`.
    extra(d, tokens) may return {name: (float32 array, what it is)} to store beside the
    logits. Returns (tokens, max |full - incremental|)."""
    import shutil

    import mlx.core as mx
    import mlx_lm

    d.mkdir(parents=True, exist_ok=True)
    save_safetensors_sorted(weights, str(d / "model.safetensors"), {"format": "pt"})
    (d / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    for f in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(tokenizer_dir / f, d / f)
    vocab = config.get("text_config", config)["vocab_size"]  # a multimodal config's text model
    tokens = rng.integers(3, vocab, size=T).astype(np.int32)
    full, inc = mlx_logits(d, tokens.tolist())
    d_inc = float(np.abs(full - inc).max())
    print(f"{d.name}: logits {full.shape}, |full-incremental|max={d_inc:.2e}, "
          f"logit std={full.std():.3f}")
    meta = {
        "reference": f"mlx-lm {mlx_lm.__version__} (mlx {mx.__version__}), CPU, float32",
        "seed": str(seed),
        "prefill": str(PREFILL),
        "max_abs_diff_full_vs_incremental": f"{d_inc:.3e}",
    }
    tensors = {"tokens": tokens, "logits": full, "logits_incremental": inc}
    for name, (array, what) in (extra(d, tokens) if extra else {}).items():
        tensors[name] = array
        meta[name] = what
    save_safetensors_sorted(tensors, str(d / "reference_logits.safetensors"), meta)
    return tokens, d_inc


def main():
    import mlx.core as mx
    import mlx_lm

    root = Path(__file__).resolve().parent.parent
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models-dir", type=Path, default=root / "tests/fixtures/models")
    args = ap.parse_args()

    ok = True
    for name in MODELS:
        d = args.models_dir / name
        cfg = json.loads((d / "config.json").read_text())
        V = cfg["vocab_size"]
        rng = np.random.default_rng(SEEDS[name])
        # Skip the 3 special ids (0..2) so the sequence is plain text tokens.
        tokens = rng.integers(3, V, size=T).astype(np.int32)
        tl = tokens.tolist()

        full, inc = mlx_logits(d, tl)
        ref = numpy_forward(d, tl)
        d_inc = float(np.abs(full - inc).max())
        d_np = float(np.abs(full - ref).max())
        agree = float((full.argmax(-1) == ref.argmax(-1)).mean())
        print(f"{name}: logits {full.shape}, |full-incremental|max={d_inc:.2e}, "
              f"|mlx-numpy64|max={d_np:.2e}, argmax agree={agree:.3f}, "
              f"logit std={full.std():.3f}")
        if d_inc > 1e-4 or d_np > 1e-4 or agree < 1.0:
            print(f"  WARNING: {name} references disagree more than expected")
            ok = False
        meta = {
            "reference": f"mlx-lm {mlx_lm.__version__} (mlx {mx.__version__}), CPU, float32",
            "cross_check": "independent float64 numpy forward following transformers' modeling code",
            "seed": str(SEEDS[name]),
            "prefill": str(PREFILL),
            "max_abs_diff_full_vs_incremental": f"{d_inc:.3e}",
            "max_abs_diff_mlx_vs_numpy64": f"{d_np:.3e}",
        }
        save_safetensors_sorted(
            {"tokens": tokens, "logits": full.astype(np.float32), "logits_incremental": inc.astype(np.float32)},
            str(d / "reference_logits.safetensors"),
            meta,
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
