#!/usr/bin/env python3
"""Import + 4-bit quantization benchmark (not a test): `heron create --quantize q4`
against `mlx_lm.convert -q` on a random-weight model of Llama-3.2-1B's shape.

    .venv/bin/python bench/bench_create.py [--runs 3] [--work /tmp/heron-bench-create]
                                           [--heron build/heron]

The model (written once under --work, reused after): Llama-3.2-1B's config.json
(16 layers, hidden 2048, 32/8 heads, intermediate 8192, vocab 128256, tied embeddings,
llama3 RoPE scaling, bfloat16), random bfloat16 weights in one model.safetensors as
Hugging Face ships it (N(0, 0.02) matrices, unit norms, mx.random seed 0), and the
Llama 3 tokenizer from tests/fixtures/tokenizers/llama3.

Each run starts the tool in its own process, the two tools interleaved (the order
alternates every run), each writing to a fresh directory that is deleted afterwards:
  heron   build/heron create bench -f Modelfile --quantize q4   (HERON_MODELS=fresh dir)
  mlx-lm  mlx_lm.convert --hf-path MODEL --mlx-path OUT -q      (the venv's mlx-lm)
Wall time is measured around the process; CPU time (user + system) and peak memory
(ru_maxrss: its own peak resident set; neither tool starts children) come from
os.wait4's rusage for that one child. On a shared machine CPU time is the steadier
figure: waiting for a core adds to wall time only.
The model's files are read once before the first run so that every run finds them in
the page cache. The table shows medians and heron / mlx-lm ratios.

What the two write differs, and the table says how much: mlx_lm.convert -q quantizes
every linear layer and the embedding to 4 bits (group 64); heron keeps the output head
(the tied embedding here) and, at int4, k_proj, v_proj and down_proj at 8 bits (see
docs/architecture.md, "Store and create"), and fsyncs every blob it writes.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from bench_cuda import tensor_shapes  # noqa: E402  (one table of decoder tensor shapes)

LLAMA_TOKENIZER = ROOT / "tests" / "fixtures" / "tokenizers" / "llama3"

# config.json of meta-llama/Llama-3.2-1B.
LLAMA_3_2_1B = {
    "architectures": ["LlamaForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
    "bos_token_id": 128000, "eos_token_id": 128001, "head_dim": 64, "hidden_act": "silu",
    "hidden_size": 2048, "initializer_range": 0.02, "intermediate_size": 8192,
    "max_position_embeddings": 131072, "mlp_bias": False, "model_type": "llama",
    "num_attention_heads": 32, "num_hidden_layers": 16, "num_key_value_heads": 8,
    "pretraining_tp": 1, "rms_norm_eps": 1e-05,
    "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"},
    "rope_theta": 500000.0, "tie_word_embeddings": True, "torch_dtype": "bfloat16",
    "use_cache": True, "vocab_size": 128256,
}


def make_model(out: Path):
    if (out / "model.safetensors").exists():
        return
    import mlx.core as mx

    out.mkdir(parents=True, exist_ok=True)
    mx.random.seed(0)
    tensors = {}
    for name, shape in tensor_shapes(LLAMA_3_2_1B).items():
        if len(shape) == 1:
            tensors[name] = mx.ones(shape, dtype=mx.bfloat16)
        else:
            tensors[name] = (mx.random.normal(shape) * 0.02).astype(mx.bfloat16)
        mx.eval(tensors[name])
    tmp = out / "model.tmp.safetensors"
    mx.save_safetensors(str(tmp), tensors, metadata={"format": "pt"})
    (out / "config.json").write_text(json.dumps(LLAMA_3_2_1B, indent=2))
    (out / "generation_config.json").write_text(json.dumps(
        {"bos_token_id": 128000, "eos_token_id": 128001, "do_sample": True,
         "temperature": 0.6, "top_p": 0.9}, indent=2))
    for file in ("tokenizer_config.json", "tokenizer.json"):
        with open(out / file, "wb") as f:
            subprocess.run(["zstd", "-dc", str(LLAMA_TOKENIZER / (file + ".zst"))], stdout=f,
                           check=True)
    tmp.rename(out / "model.safetensors")  # last: its presence means the model is complete


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def timed(cmd, env=None):
    """(wall s, CPU s, peak RSS MiB) of one child process; raises with its output on failure."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed ({proc.returncode}):\n{out.decode(errors='replace')}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024  # Linux: KiB


def run_heron(heron, model, work):
    store = Path(tempfile.mkdtemp(dir=work, prefix="store-"))
    try:
        mf = store.parent / f"{store.name}.Modelfile"
        mf.write_text(f"FROM {model}\n")
        times = timed([str(heron), "create", "bench", "-f", str(mf), "--quantize", "q4"],
                      env=dict(os.environ, HERON_MODELS=str(store)))
        m = json.loads((store / "manifests/library/bench/latest").read_text())
        (st,) = [l for l in m["layers"] if l["name"] == "model.safetensors"]
        return (*times, st["size"])
    finally:
        shutil.rmtree(store)
        mf.unlink(missing_ok=True)


def run_mlx_lm(model, work):
    out = Path(tempfile.mkdtemp(dir=work, prefix="mlx-")) / "out"
    try:
        convert = Path(sys.executable).parent / "mlx_lm.convert"
        times = timed([str(convert), "--hf-path", str(model), "--mlx-path", str(out), "-q"])
        return (*times, sum(p.stat().st_size for p in out.glob("*.safetensors")))
    finally:
        shutil.rmtree(out.parent)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--work", type=Path, default=Path("/tmp/heron-bench-create"))
    ap.add_argument("--heron", type=Path, default=ROOT / "build" / "heron")
    args = ap.parse_args()
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    if not args.heron.is_file():
        ap.error(f"{args.heron} not found; build heron first")
    model = args.work / "llama-3.2-1b-random"
    print(f"model: {model} (making it when missing)", flush=True)
    make_model(model)
    with open(model / "model.safetensors", "rb") as f:  # into the page cache
        while f.read(1 << 24):
            pass
    tools = {"heron": lambda: run_heron(args.heron, model, args.work),
             "mlx-lm": lambda: run_mlx_lm(model, args.work)}
    results = {name: [] for name in tools}
    for i in range(args.runs):
        for name in (["heron", "mlx-lm"] if i % 2 == 0 else ["mlx-lm", "heron"]):
            wall, cpu, rss, size = tools[name]()
            results[name].append((wall, cpu, rss, size))
            print(f"run {i + 1} {name:6s} {wall:7.2f} s  cpu {cpu:7.2f} s  {rss:7.0f} MiB  "
                  f"weights {size / 2**20:.0f} MiB", flush=True)
    med = {n: [statistics.median(r[k] for r in rs) for k in range(3)] + [rs[0][3]]
           for n, rs in results.items()}
    print(f"\nsource: {dir_bytes(model) / 2**20:.0f} MiB bfloat16, "
          f"medians of {args.runs} runs\n")
    print("| tool | wall s | CPU s | peak RSS MiB | weights written MiB |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for n, (w, c, r, s) in med.items():
        print(f"| {n} | {w:.2f} | {c:.2f} | {r:.0f} | {s / 2**20:.0f} |")
    ratios = " | ".join(f"{h / m:.2f}" for h, m in zip(med["heron"], med["mlx-lm"]))
    print(f"| heron / mlx-lm | {ratios} |")


if __name__ == "__main__":
    main()
