#!/usr/bin/env python3
"""Continuous batching benchmark (not a test): heron's engine::Scheduler against mlx-lm's
BatchGenerator, on the CPU with SmolLM2-135M-Instruct (Q4_1 GGUF).

    .venv/bin/python bench/bench_batching.py [--runs 3] [--streams 1,2,4,8,16]
        [--prompt-tokens 128] [--new-tokens 32] [--mlx-streams 1,4] [--no-mlx-lm]

S streams, each its own prompt of --prompt-tokens token ids (100 + (37 i + 11 s) mod
5000, the same ids for both engines), arrive together and decode --new-tokens tokens
greedily, EOS ignored. Per S: the aggregate decode tokens/s once every stream has its
first token (tokens after that moment over the time to the last), its ratio to one
stream's, and the streams' time to first token (p50, p99). heron also times a request
that arrives while the S streams decode, against one stream's TTFT on an idle engine.

heron runs build/bench/batching_bench (the Scheduler in C++, no HTTP); mlx-lm 0.32.2
runs BatchGenerator (its server's batching) in a fresh subprocess per S on
tools/gguf_to_mlx.py's conversion of the same GGUF (.cache/smollm2-mlx), with the CPU
wheel's own kernels: it is slow here, so it runs fewer stream counts (--mlx-streams).
Medians of --runs runs; the load average is printed before and after.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import bench_generate as bg  # noqa: E402

HERON_LINE = re.compile(r"streams +(\d+): decode ([\d.]+) tokens/s .*TTFT p50 (\d+) ms p99 (\d+) ms, "
                        r"a late request's (\d+) ms \(x([\d.]+) of idle\)")


def prompt_ids(salt, n):
    return [100 + (i * 37 + salt * 11) % 5000 for i in range(n)]


def worker_mlx(args):
    """One mlx-lm run of S streams: prints a JSON line."""
    from mlx_lm import load
    from mlx_lm.generate import BatchGenerator

    model, _ = load(str(args.mlx_dir))
    streams = args.worker_mlx
    gen = BatchGenerator(model, stop_tokens=[], completion_batch_size=max(32, streams),
                         prefill_batch_size=streams)
    start = time.perf_counter()
    uids = gen.insert([prompt_ids(s, args.prompt_tokens) for s in range(streams)],
                      [args.new_tokens] * streams)
    first = {}
    tokens = 0
    all_started = None
    tokens_at_all_started = 0
    while responses := gen.next_generated():
        now = time.perf_counter()
        for r in responses:
            tokens += 1
            if r.uid not in first:
                first[r.uid] = now - start
                if len(first) == len(uids):
                    all_started, tokens_at_all_started = now, tokens
    end = time.perf_counter()
    gen.close()
    ttft = sorted(v * 1000 for v in first.values())
    print(json.dumps({"decode_tps": (tokens - tokens_at_all_started) / (end - all_started),
                      "ttft_p50": statistics.median(ttft), "ttft_p99": ttft[-1]}))


def run_heron(args):
    out = subprocess.run([str(args.batching_bench), str(args.gguf), str(args.prompt_tokens),
                          str(args.new_tokens), args.streams], capture_output=True, text=True,
                         check=True).stdout
    rows = {}
    for m in HERON_LINE.finditer(out):
        rows[int(m[1])] = {"decode_tps": float(m[2]), "ttft_p50": float(m[3]),
                           "ttft_p99": float(m[4]), "late_ttft": float(m[5]), "late_x": float(m[6])}
    return rows


def run_mlx(args, streams):
    cmd = [sys.executable, __file__, "--worker-mlx", str(streams), "--mlx-dir", str(args.mlx_dir),
           "--prompt-tokens", str(args.prompt_tokens), "--new-tokens", str(args.new_tokens)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gguf", type=Path, default=bg.DEFAULT_GGUF)
    ap.add_argument("--mlx-dir", type=Path, default=bg.DEFAULT_MLX)
    ap.add_argument("--batching-bench", type=Path, default=ROOT / "build/bench/batching_bench")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--streams", default="1,2,4,8,16")
    ap.add_argument("--mlx-streams", default="1,4")
    ap.add_argument("--prompt-tokens", type=int, default=128)
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--no-mlx-lm", dest="mlx_lm", action="store_false")
    ap.add_argument("--worker-mlx", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker_mlx:
        return worker_mlx(args)
    if args.mlx_lm and not (args.mlx_dir / "config.json").exists():
        subprocess.run([sys.executable, str(ROOT / "tools/gguf_to_mlx.py"), "--gguf", str(args.gguf),
                        "--out", str(args.mlx_dir)], check=True)
    print(f"load average before: {os.getloadavg()}", flush=True)
    heron_runs, mlx_runs = [], []
    mlx_streams = [int(s) for s in args.mlx_streams.split(",")] if args.mlx_lm else []
    for run in range(args.runs):
        heron_runs.append(run_heron(args))
        mlx_runs.append({s: run_mlx(args, s) for s in mlx_streams})
        print(f"run {run + 1}/{args.runs} done", flush=True)
    print(f"load average after: {os.getloadavg()}")

    def med(runs, s, key):
        return statistics.median(r[s][key] for r in runs)

    streams = sorted(heron_runs[0])
    one = med(heron_runs, streams[0], "decode_tps")
    print(f"\nprompt {args.prompt_tokens} tokens, {args.new_tokens} new tokens per stream, "
          f"medians of {args.runs} runs")
    print("| streams | heron decode tok/s | x one stream | TTFT p50 / p99 (ms) | late request's TTFT"
          " (x idle) | mlx-lm decode tok/s | mlx-lm TTFT p50 (ms) | heron/mlx-lm |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for s in streams:
        tps = med(heron_runs, s, "decode_tps")
        cells = [str(s), f"{tps:.1f}", f"x{tps / one:.2f}",
                 f"{med(heron_runs, s, 'ttft_p50'):.0f} / {med(heron_runs, s, 'ttft_p99'):.0f}",
                 f"{med(heron_runs, s, 'late_ttft'):.0f} (x{med(heron_runs, s, 'late_x'):.2f})"]
        if s in mlx_streams:
            mtps = med(mlx_runs, s, "decode_tps")
            cells += [f"{mtps:.2f}", f"{med(mlx_runs, s, 'ttft_p50'):.0f}", f"x{tps / mtps:.1f}"]
        else:
            cells += ["-", "-", "-"]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
