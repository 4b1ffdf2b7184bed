#!/usr/bin/env python3
"""heron on an NVIDIA GPU against mlx-lm, Hugging Face transformers and the
memory-bandwidth limit, on random-weight models of real shapes made here.

    python3 bench/bench_cuda.py --heron-build build-cuda [--work /tmp/heron-bench]
                                [--models qwen3-0.6b,qwen3-4b,llama-3.1-8b,gemma3-270m]
                                [--quant bf16,4bit] [--hf eager] [--out results.json]
                                [--long-decode N]

Needs: a CUDA GPU; torch, transformers and safetensors; mlx (the mlx-cuda-13 wheel)
and mlx-lm; heron built with the CUDA backend (README, "NVIDIA GPUs").

For each model (Qwen3-0.6B, Qwen3-4B, Llama-3.1-8B, Gemma 3 270M shapes) it writes random bfloat16
weights in Hugging Face layout, and a 4-bit affine copy (group 64) through mlx-lm's
own quantizer. Each engine runs in its own process, on the same files:
  prefill tokens/s  a 512- and a 4096-token prompt, to the first generated token
  decode tokens/s   128 greedy tokens after a 512-token prompt (tokens 2..128)
  --long-decode N   also N greedy tokens after the 4096-token prompt (a long context:
                    Gemma 3's sliding-window rings have wrapped), an extra column
Every measurement is done once untimed, then 3 times; medians are reported.
The bandwidth limit: bytes of weights one decode step reads (every weight once; the
embedding table only when it is also the output head), over the device-to-device
copy bandwidth measured at the start (bytes read + written per second).
"""
import argparse
import json
import os
import subprocess
import sys
import time
from math import prod
from pathlib import Path

SHAPES = {
    "qwen3-0.6b": dict(model_type="qwen3", architectures=["Qwen3ForCausalLM"], hidden_size=1024,
                       intermediate_size=3072, num_hidden_layers=28, num_attention_heads=16,
                       num_key_value_heads=8, head_dim=128, vocab_size=151936,
                       tie_word_embeddings=True, rope_theta=1000000.0, rms_norm_eps=1e-6,
                       max_position_embeddings=40960),
    "qwen3-4b": dict(model_type="qwen3", architectures=["Qwen3ForCausalLM"], hidden_size=2560,
                     intermediate_size=9728, num_hidden_layers=36, num_attention_heads=32,
                     num_key_value_heads=8, head_dim=128, vocab_size=151936,
                     tie_word_embeddings=True, rope_theta=1000000.0, rms_norm_eps=1e-6,
                     max_position_embeddings=40960),
    "llama-3.1-8b": dict(model_type="llama", architectures=["LlamaForCausalLM"], hidden_size=4096,
                         intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
                         num_key_value_heads=8, head_dim=128, vocab_size=128256,
                         tie_word_embeddings=False, rope_theta=500000.0, rms_norm_eps=1e-5,
                         max_position_embeddings=131072,
                         rope_scaling=dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0,
                                           high_freq_factor=4.0,
                                           original_max_position_embeddings=8192)),
    # Gemma 3 270M (google/gemma-3-270m's config.json): head_dim 256, one KV head, sliding
    # windows of 512 on five layers of six (every 6th is global), tied 262k embeddings.
    "gemma3-270m": dict(model_type="gemma3_text", architectures=["Gemma3ForCausalLM"],
                        hidden_size=640, intermediate_size=2048, num_hidden_layers=18,
                        num_attention_heads=4, num_key_value_heads=1, head_dim=256,
                        vocab_size=262144, tie_word_embeddings=True, rope_theta=1000000.0,
                        rope_local_base_freq=10000.0, rope_scaling=None, rms_norm_eps=1e-6,
                        query_pre_attn_scalar=256, sliding_window=512, sliding_window_pattern=6,
                        layer_types=["full_attention" if (n + 1) % 6 == 0 else "sliding_attention"
                                     for n in range(18)],
                        hidden_activation="gelu_pytorch_tanh", attention_bias=False,
                        attn_logit_softcapping=None, final_logit_softcapping=None,
                        max_position_embeddings=32768),
}
RUNS = [(512, 128), (4096, 1)]
REPEATS = 3


# ---------------------------------------------------------------- models and limits

def tensor_shapes(c):
    h, i, v, d = c["hidden_size"], c["intermediate_size"], c["vocab_size"], c["head_dim"]
    q, kv = c["num_attention_heads"] * d, c["num_key_value_heads"] * d
    shapes = {"model.embed_tokens.weight": (v, h), "model.norm.weight": (h,)}
    if not c["tie_word_embeddings"]:
        shapes["lm_head.weight"] = (v, h)
    for n in range(c["num_hidden_layers"]):
        p = f"model.layers.{n}."
        shapes.update({p + "input_layernorm.weight": (h,), p + "post_attention_layernorm.weight": (h,),
                       p + "self_attn.q_proj.weight": (q, h), p + "self_attn.k_proj.weight": (kv, h),
                       p + "self_attn.v_proj.weight": (kv, h), p + "self_attn.o_proj.weight": (h, q),
                       p + "mlp.gate_proj.weight": (i, h), p + "mlp.up_proj.weight": (i, h),
                       p + "mlp.down_proj.weight": (h, i)})
        if c["model_type"] in ("qwen3", "gemma3_text"):
            shapes.update({p + "self_attn.q_norm.weight": (d,), p + "self_attn.k_norm.weight": (d,)})
        if c["model_type"] == "gemma3_text":
            shapes.update({p + "pre_feedforward_layernorm.weight": (h,),
                           p + "post_feedforward_layernorm.weight": (h,)})
    return shapes


def make_bf16_model(name, out: Path):
    """Random N(0, 0.02) matrices and unit norms, in 4 GB shards with an index. Gemma
    scales by 1 + weight, so its unit norms are zeros."""
    import torch
    from safetensors.torch import save_file
    if (out / "config.json").exists():
        return
    out.mkdir(parents=True, exist_ok=True)
    c = dict(SHAPES[name], torch_dtype="bfloat16", bos_token_id=1, eos_token_id=2)
    gen = torch.Generator(device="cuda").manual_seed(0)
    shard, shard_bytes, files, weight_map = {}, 0, [], {}

    def flush():
        nonlocal shard, shard_bytes
        fname = f"model-{len(files) + 1:05d}.safetensors"
        save_file(shard, str(out / fname), metadata={"format": "pt"})
        files.append(fname)
        weight_map.update({k: fname for k in shard})
        shard, shard_bytes = {}, 0

    unit = torch.zeros if c["model_type"] == "gemma3_text" else torch.ones
    for key, shape in tensor_shapes(c).items():
        if len(shape) == 1:
            t = unit(shape, dtype=torch.bfloat16)
        else:
            t = (torch.randn(shape, generator=gen, device="cuda", dtype=torch.bfloat16) * 0.02).cpu()
        shard[key] = t
        shard_bytes += t.numel() * 2
        if shard_bytes >= 4 << 30:
            flush()
    if shard:
        flush()
    total = sum(n * 2 for shape in tensor_shapes(c).values() for n in [prod(shape)])
    (out / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map}))
    (out / "config.json").write_text(json.dumps(c, indent=1))


def make_4bit_model(src: Path, out: Path):
    """mlx-lm's own affine quantization (4 bits, group 64) of the bf16 model."""
    if (out / "config.json").exists():
        return
    from mlx_lm.utils import load_model, quantize_model, save_config, save_model
    model, config = load_model(src, lazy=True)
    model, config = quantize_model(model, config, 64, 4)
    save_model(out, model, donate_model=True)
    save_config(config, out / "config.json")


def decode_bytes_per_token(model_dir: Path):
    """Bytes of every tensor once, less the embedding table when a separate head exists
    (a decode step reads one row of it)."""
    from safetensors import safe_open
    total, embed, has_head = 0, 0, False
    for f in sorted(model_dir.glob("*.safetensors")):
        with safe_open(str(f), "np") as st:
            for k in st.keys():
                s = st.get_slice(k)
                n = 1
                for d in s.get_shape():
                    n *= d
                nbytes = n * {"BF16": 2, "F16": 2, "F32": 4, "U32": 4}[s.get_dtype()]
                total += nbytes
                if k.startswith("model.embed_tokens."):
                    embed += nbytes
                if k.startswith("lm_head."):
                    has_head = True
    return total - embed if has_head else total


def copy_bandwidth():
    """Device-to-device copy of 4 GiB, bytes read + written per second, median of 20."""
    import torch
    n = 4 << 30
    a = torch.empty(n, dtype=torch.uint8, device="cuda").random_(0, 255)
    b = torch.empty_like(a)
    for _ in range(3):
        b.copy_(a)
    times = []
    for _ in range(20):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        b.copy_(a)
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) / 1e3)
    times.sort()
    return 2 * n / times[len(times) // 2]


# ---------------------------------------------------------------- engines (subprocesses)

def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def timed_runs(run_once):
    """run_once(P, D) -> (prefill_s, decode_s, generated); same protocol as heron's bench."""
    out = []
    for p, d in RUNS:
        pre, dec = [], []
        for rep in range(REPEATS + 1):
            t_pre, t_dec, n = run_once(p, d, rep)
            if rep == 0:
                continue
            pre.append(p / t_pre)
            if n > 1:
                dec.append((n - 1) / t_dec)
        r = {"prompt_tokens": p, "prefill_tps": median(pre)}
        if dec:
            r.update(decode_tokens=d, decode_tps=median(dec))
        out.append(r)
    return out


def engine_mlx_lm(model_dir):
    import mlx.core as mx
    import numpy as np
    from mlx_lm.generate import generate_step
    from mlx_lm.utils import load_model
    t = time.perf_counter()
    model, config = load_model(Path(model_dir))
    load_s = time.perf_counter() - t
    rng = np.random.default_rng(7)

    def once(p, d, rep):
        prompt = mx.array(rng.integers(0, config["vocab_size"], p), dtype=mx.int32)
        t0 = time.perf_counter()
        n, t1 = 0, None
        for _tok, _ in generate_step(prompt, model, max_tokens=d):
            n += 1
            if n == 1:
                t1 = time.perf_counter()
        return t1 - t0, time.perf_counter() - t1, n

    return {"load_s": load_s, "runs": timed_runs(once)}


def engine_transformers(model_dir, mode):
    import torch
    from transformers import AutoModelForCausalLM
    from transformers.generation.streamers import BaseStreamer
    t = time.perf_counter()
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.bfloat16,
                                                 attn_implementation="sdpa", device_map="cuda")
    model.eval()
    load_s = time.perf_counter() - t
    vocab = model.config.vocab_size
    gen = torch.Generator(device="cuda").manual_seed(7)

    class Stamps(BaseStreamer):  # put() gets the prompt, then each new token (on the host)
        def __init__(self):
            self.times = []

        def put(self, value):
            self.times.append(time.perf_counter())

        def end(self):
            pass

    def once(p, d, rep):
        ids = torch.randint(0, vocab, (1, p), device="cuda", generator=gen)
        stamps = Stamps()
        kwargs = dict(max_new_tokens=d, min_new_tokens=d, do_sample=False, streamer=stamps,
                      pad_token_id=0)
        if mode == "static":
            kwargs["cache_implementation"] = "static"
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.inference_mode():
            model.generate(ids, attention_mask=torch.ones_like(ids), **kwargs)
        torch.cuda.synchronize()
        first, last = stamps.times[1], stamps.times[-1]
        return first - t0, last - first, len(stamps.times) - 1

    return {"load_s": load_s, "runs": timed_runs(once), "mode": mode}


def run_engine(args, engine, model_dir, timeout=900):
    if engine == "heron":
        cmd = [str(Path(args.heron_build) / "bench" / "generate_bench"), "--model", str(model_dir),
               "--runs", ",".join(f"{p}:{d}" for p, d in RUNS), "--repeats", str(REPEATS)]
    else:
        cmd = [sys.executable, __file__, "--engine", engine, "--model-dir", str(model_dir),
               "--long-decode", str(args.long_decode)]
    env = dict(os.environ)
    if engine == "heron":
        env.update(v.split("=", 1) for v in args.heron_env)
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    if proc.returncode != 0:
        print(f"  {engine} failed ({proc.returncode}): {proc.stderr[-2000:]}", flush=True)
        return None
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["wall_s"] = time.perf_counter() - t
    return result


def hf_config_summary(model_dir):
    """The fields that shape attention, as transformers' own config class reads them."""
    from transformers import AutoConfig
    c = AutoConfig.from_pretrained(model_dir)
    keys = ("model_type", "hidden_size", "intermediate_size", "num_hidden_layers",
            "num_attention_heads", "num_key_value_heads", "head_dim", "vocab_size",
            "sliding_window", "query_pre_attn_scalar", "layer_types", "rope_parameters",
            "rope_theta", "rope_local_base_freq", "tie_word_embeddings", "hidden_activation")
    return {"class": type(c).__name__,
            **{k: getattr(c, k) for k in keys if getattr(c, k, None) is not None}}


# ---------------------------------------------------------------- table

def versions():
    def cmd(c):
        try:
            return subprocess.run(c, capture_output=True, text=True, shell=True).stdout.strip()
        except OSError:
            return ""
    import torch
    import transformers
    v = {"gpu": torch.cuda.get_device_name(0),
         "driver": cmd("nvidia-smi --query-gpu=driver_version --format=csv,noheader"),
         "torch": torch.__version__, "transformers": transformers.__version__,
         "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    for mod in ("mlx", "mlx_lm"):
        try:
            v[mod] = __import__(mod).__version__ if mod == "mlx_lm" else __import__("mlx.core").core.__version__
        except Exception as e:  # noqa: BLE001: report what is missing, don't stop
            v[mod] = f"missing ({e})"
    v["heron"] = cmd("git rev-parse --short HEAD") or "?"
    return v


def table(rows, bw):
    long = any(e and e.get("decode4096") for r in rows for e in r["engines"].values())
    head = ("| model | weights | engine | prefill 512 tok/s | prefill 4096 tok/s | decode tok/s "
            + ("| decode after 4096 tok/s " if long else "")
            + "| limit tok/s | share of limit | decode vs mlx-lm |")
    lines = [head, "|" + " --- |" * (10 if long else 9)]
    for r in rows:
        base = r["engines"].get("mlx-lm")
        base_dec = base["decode_tps"] if base else None
        limit = bw / r["bytes_per_token"]
        for engine, e in r["engines"].items():
            if e is None:
                lines.append(f"| {r['model']} | {r['quant']} | {engine} | failed |"
                             + " |" * (6 if long else 5))
                continue
            ratio = f"{e['decode_tps'] / base_dec:.2f}x" if base_dec else "-"
            extra = ""
            if long:
                extra = f" {e['decode4096']:.1f} |" if e.get("decode4096") else " - |"
            lines.append(f"| {r['model']} | {r['quant']} | {engine} | {e['prefill512']:.0f} | "
                         f"{e['prefill4096']:.0f} | {e['decode_tps']:.1f} |{extra} {limit:.1f} | "
                         f"{e['decode_tps'] / limit:.0%} | {ratio} |")
    return "\n".join(lines)


def summarize(result):
    runs = {r["prompt_tokens"]: r for r in result["runs"]}
    return {"prefill512": runs[512]["prefill_tps"], "prefill4096": runs[4096]["prefill_tps"],
            "decode_tps": runs[512]["decode_tps"], "decode4096": runs[4096].get("decode_tps"),
            "load_s": result.get("load_s"),
            "first_request_prefill_tps": result.get("first_request_prefill_tps"), "raw": result}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--heron-build", default="build-cuda")
    ap.add_argument("--work", default="/tmp/heron-bench")
    ap.add_argument("--models", default=",".join(SHAPES))
    ap.add_argument("--quant", default="bf16,4bit")
    ap.add_argument("--hf", default="eager", help="transformers modes: eager, static (compiled)")
    ap.add_argument("--engines", default="heron,mlx-lm,transformers")
    ap.add_argument("--heron-env", action="append", default=[], metavar="VAR=VALUE",
                    help="set in heron's environment only (e.g. MLX_MAX_OPS_PER_BUFFER=100)")
    ap.add_argument("--out", default="")
    ap.add_argument("--long-decode", type=int, default=1, metavar="N",
                    help="tokens generated after the 4096-token prompt (default 1: prefill only)")
    ap.add_argument("--engine", help=argparse.SUPPRESS)
    ap.add_argument("--model-dir", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.long_decode < 1:
        ap.error("--long-decode wants at least 1 token")
    RUNS[1] = (4096, args.long_decode)
    if args.engine:
        if args.engine == "mlx-lm":
            result = engine_mlx_lm(args.model_dir)
        else:
            result = engine_transformers(args.model_dir, args.engine.split(":")[1])
        print(json.dumps(result))
        return

    info = versions()
    info["heron_env"] = args.heron_env
    bw = copy_bandwidth()
    info["copy_bandwidth_GBps"] = bw / 1e9
    print(json.dumps(info), flush=True)
    print(f"copy bandwidth: {bw / 1e9:.0f} GB/s (read + write)", flush=True)
    work = Path(args.work)
    engines = args.engines.split(",")
    rows = []
    for name in args.models.split(","):
        bf16 = work / f"{name}-bf16"
        t = time.perf_counter()
        make_bf16_model(name, bf16)
        print(f"{name}: bf16 weights ready ({time.perf_counter() - t:.0f} s)", flush=True)
        if "transformers" in engines:
            print(f"  as transformers reads it: {hf_config_summary(bf16)}", flush=True)
        for quant in args.quant.split(","):
            model_dir = bf16
            if quant == "4bit":
                model_dir = work / f"{name}-4bit"
                make_4bit_model(bf16, model_dir)
            row = {"model": name, "quant": quant, "bytes_per_token": decode_bytes_per_token(model_dir),
                   "engines": {}}
            for engine in engines:
                if engine == "transformers":
                    if quant != "bf16":
                        continue
                    for mode in args.hf.split(","):
                        r = run_engine(args, f"transformers:{mode}", model_dir)
                        row["engines"][f"transformers ({mode})"] = summarize(r) if r else None
                    continue
                r = run_engine(args, engine, model_dir)
                row["engines"][engine] = summarize(r) if r else None
                if r:
                    print(f"  {name} {quant} {engine}: {json.dumps(r)}", flush=True)
            rows.append(row)
            print(table([row], bw), flush=True)
    text = table(rows, bw)
    print("\n" + json.dumps(info) + "\n" + text)
    if args.out:
        Path(args.out).write_text(json.dumps({"info": info, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
