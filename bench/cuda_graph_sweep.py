#!/usr/bin/env python3
"""heron's decode and prefill speed under different settings of MLX's CUDA graphs.

    python3 bench/cuda_graph_sweep.py --heron-build build-cuda --rounds 2 \
        --model /tmp/heron-bench/qwen3-0.6b-bf16 [--model ...] \
        --config mlx= --config g100=MLX_MAX_OPS_PER_BUFFER:100,MLX_MAX_MB_PER_BUFFER:1000 \
        --config nographs=MLX_USE_CUDA_GRAPHS:0

MLX's CUDA backend records kernels into CUDA graphs and launches one every
MLX_MAX_OPS_PER_BUFFER kernels or MLX_MAX_MB_PER_BUFFER MB of inputs (30 and 400 on an
H100/H200); MLX_USE_CUDA_GRAPHS=0 launches each kernel directly. Each --config
NAME=VAR:VALUE,... runs `generate_bench` with those variables set (an empty list: MLX's
own choice); configurations alternate within each round, so a slow
spell of the machine hits all of them. Prints each run and, per model and
configuration, the median over the rounds of decode tok/s (512-token prompt, 128
tokens), prefill tok/s (512 and 4096 tokens) and peak memory.
"""
import argparse
import json
import os
import subprocess
from pathlib import Path

from bench_cuda import median

VARS = ("MLX_MAX_OPS_PER_BUFFER", "MLX_MAX_MB_PER_BUFFER", "MLX_USE_CUDA_GRAPHS")


def parse_config(text):
    name, _, spec = text.partition("=")
    env = {}
    for item in filter(None, spec.split(",")):
        var, _, value = item.partition(":")
        env[var] = value
    return name, env


def run(build, model, env_vars, runs, repeats):
    env = {k: v for k, v in os.environ.items() if k not in VARS}
    env.update(env_vars)
    cmd = [str(Path(build) / "bench" / "generate_bench"), "--model", model,
           "--runs", runs, "--repeats", str(repeats)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if proc.returncode != 0:
        return {"error": proc.stderr[-500:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--heron-build", default="build-cuda")
    ap.add_argument("--model", action="append", required=True)
    ap.add_argument("--config", action="append", required=True)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--runs", default="512:128,4096:1")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    configs = [parse_config(c) for c in args.config]
    results = {}
    for rnd in range(args.rounds):
        for model in args.model:
            for name, env in configs:
                r = run(args.heron_build, model, env, args.runs, args.repeats)
                print(json.dumps({"round": rnd, "model": Path(model).name, "config": name, **r}),
                      flush=True)
                results.setdefault((Path(model).name, name), []).append(r)
    print("\n| model | config | decode tok/s | prefill 512 tok/s | prefill 4096 tok/s "
          "| peak MiB (4096) | decode per round |")
    print("|" + " --- |" * 7)
    for (model, name), rs in results.items():
        ok = [r for r in rs if "runs" in r]
        if not ok:
            print(f"| {model} | {name} | failed | | | | |")
            continue
        by = [{x["prompt_tokens"]: x for x in r["runs"]} for r in ok]
        dec = [b[512]["decode_tps"] for b in by if 512 in b]
        p512 = [b[512]["prefill_tps"] for b in by if 512 in b]
        p4k = [b[4096]["prefill_tps"] for b in by if 4096 in b]
        mem = [b[4096].get("peak_memory_mib", 0) for b in by if 4096 in b]
        print(f"| {model} | {name} | {median(dec):.1f} | {median(p512):.0f} | {median(p4k):.0f} "
              f"| {median(mem):.0f} | {', '.join(f'{d:.1f}' for d in dec)} |")


if __name__ == "__main__":
    main()
