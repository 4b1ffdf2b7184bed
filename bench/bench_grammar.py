#!/usr/bin/env python3
"""Structured-output mask cost (not a test): heron's grammar matcher vs llguidance (the
engine behind llama.cpp's and vLLM's guidance backends), on Qwen3's 151k-token
vocabulary, measured side by side in one run.

    .venv/bin/python bench/bench_grammar.py [--steps 200] [--runs 3]

For each schema of tests/fixtures/schemas (the structured-output suite), each engine walks
its own grammar from the start: at every step it computes the mask of allowed tokens
(timed), then takes a random allowed token (seeded; the same seeds for both engines), until
the value is complete or --steps tokens. heron runs in build/bench/grammar_bench, llguidance
through its Python module (numpy bitmask; the Python call is part of its figure). The
table shows, per engine, the median and 99th percentile of the per-token mask cost over
every step of every schema (the median of --runs runs), and the first mask of each schema
(cold: nothing memoized yet), and the ratio llguidance / heron (above 1: heron is faster).
The load average is printed at the start and the end.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "tests/fixtures/schemas"
TOKENIZER = ROOT / "tests/fixtures/tokenizers/qwen3/tokenizer.json.zst"
QWEN3_END = 151645  # <|im_end|>


def schema_files():
    return sorted(p for p in SCHEMAS.glob("*.json") if p.stem not in ("prompts", "examples"))


def heron_walks(tokenizer_json, steps, seed):
    out = subprocess.run([str(ROOT / "build/bench/grammar_bench"), str(tokenizer_json), str(QWEN3_END),
                          str(steps), str(seed)] + [str(p) for p in schema_files()],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)  # [{"schema", "micros": [...], "complete"}]


def llguidance_walks(tokenizer_text, steps, seed):
    import llguidance
    from llguidance.numpy import allocate_token_bitmask, fill_next_token_bitmask
    tok = llguidance.LLTokenizer(tokenizer_text, eos_token=QWEN3_END)
    bitmask = allocate_token_bitmask(1, tok.vocab_size)
    walks = []
    for i, path in enumerate(schema_files()):
        schema = json.loads(path.read_text())
        grammar = llguidance.LLMatcher.grammar_from_json_schema(
            schema, defaults={"whitespace_flexible": False})
        matcher = llguidance.LLMatcher(tok, grammar)
        rng = np.random.default_rng(seed + i)
        micros = []
        while not matcher.is_stopped() and len(micros) < steps:
            t = time.perf_counter()
            fill_next_token_bitmask(matcher, bitmask, 0)
            micros.append((time.perf_counter() - t) * 1e6)
            bits = np.unpackbits(bitmask[0].view(np.uint8), bitorder="little")[:tok.vocab_size]
            matcher.consume_token(int(rng.choice(np.nonzero(bits)[0])))
        walks.append({"schema": path.stem, "micros": micros, "complete": matcher.is_stopped()})
    return walks


def summary(walks):
    steps = [m for w in walks for m in w["micros"][1:]]
    cold = [w["micros"][0] for w in walks if w["micros"]]
    return {"median": statistics.median(steps), "p99": float(np.percentile(steps, 99)),
            "cold": statistics.median(cold), "steps": len(steps),
            "complete": sum(w["complete"] for w in walks)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()}")
    text = subprocess.run(["zstd", "-dc", TOKENIZER], capture_output=True, check=True).stdout
    tokenizer_json = Path(os.environ.get("TMPDIR", "/tmp")) / "bench_grammar_qwen3.json"
    tokenizer_json.write_bytes(text)
    try:
        import llguidance  # noqa: F401
        engines = {"heron": lambda s: heron_walks(tokenizer_json, args.steps, s),
                   "llguidance": lambda s: llguidance_walks(text.decode(), args.steps, s)}
    except ImportError:
        print("llguidance is not installed (pip install llguidance): heron only", file=sys.stderr)
        engines = {"heron": lambda s: heron_walks(tokenizer_json, args.steps, s)}
    runs = {name: [] for name in engines}
    for r in range(args.runs):
        for name, walk in engines.items():
            runs[name].append(summary(walk(1000 * r)))
    print(f"{len(schema_files())} schemas, up to {args.steps} tokens each, {args.runs} runs; "
          "mask cost per token in microseconds (median over runs)")
    print(f"{'engine':<12}{'median':>10}{'p99':>10}{'cold':>10}{'steps':>8}{'complete':>10}")
    med = {}
    for name, rs in runs.items():
        med[name] = {k: statistics.median(r[k] for r in rs) for k in rs[0]}
        m = med[name]
        print(f"{name:<12}{m['median']:>10.1f}{m['p99']:>10.1f}{m['cold']:>10.1f}"
              f"{m['steps']:>8.0f}{m['complete']:>10.0f}")
    if "llguidance" in med:
        for k in ("median", "p99", "cold"):
            print(f"ratio llguidance / heron, {k}: x{med['llguidance'][k] / med['heron'][k]:.2f}")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
