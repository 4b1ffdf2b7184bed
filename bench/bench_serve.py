#!/usr/bin/env python3
"""Serving benchmark (not a test) on SmolLM2-135M, two parts:

    .venv/bin/python bench/bench_serve.py [--runs 5] [--parts overhead,chat]

overhead  The HTTP API against in-process `heron generate` on the same raw prompt
          (--prompt-tokens, greedy, --gen-tokens): time to first token and decode
          tokens/s. In-process figures are `heron generate --stats-json`'s (prefill
          time and decode rate of one fresh process per run); API figures are measured
          by the client on a streamed /api/generate to a `heron serve` whose model is
          already loaded (idle while the in-process run goes; the two alternate).
          Each run's prompt starts with its own number, so the runner's prefix cache
          cannot serve it.
chat      A 10-turn conversation through the `openai` client, streamed: time to first
          token per turn, heron serve (the GGUF) against `mlx_lm.server` (the same
          4-bit weights, converted by tools/gguf_to_mlx.py), each with its own prompt
          cache. Every run starts a new conversation (its system message names the run).

Engines run one at a time (2-core machines); tables show medians and ratios.
"""
import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import openai

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
from procs import free_port  # noqa: E402
from bench_generate import DEFAULT_GGUF, DEFAULT_HERON, DEFAULT_MLX, ROOT, last_json_line, make_prompt  # noqa: E402

TURNS = [
    "Hi! Can you tell me what a lighthouse is for?",
    "Who used to live in lighthouses?",
    "Name three famous lighthouses.",
    "Which of them is the oldest?",
    "How does the lens of a lighthouse work?",
    "Why do lighthouses have different light patterns?",
    "Are lighthouses still needed today?",
    "What replaced many lighthouse keepers?",
    "Write a two-line poem about a lighthouse.",
    "Thanks! Summarise our conversation in one sentence.",
]


@contextlib.contextmanager
def server(cmd, env, url, log_path, ready_path="/"):
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=log, cwd=ROOT)
    try:
        deadline = time.time() + 120
        while True:
            try:
                httpx.get(url + ready_path, timeout=2)
                break
            except httpx.HTTPError:
                if proc.poll() is not None or time.time() > deadline:
                    raise SystemExit(f"{cmd[0]} did not start:\n" + Path(log_path).read_text(errors="replace"))
                time.sleep(0.2)
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


def heron_server(args, env, tmp):
    port = free_port()
    env = dict(env, HERON_HOST=f"127.0.0.1:{port}", HERON_KEEP_ALIVE="-1")
    url = f"http://127.0.0.1:{port}"
    return url, server([str(args.heron), "serve"], env, url, tmp / "heron.log")


def api_run(url, model, prompt, gen_tokens):
    body = {"model": model, "prompt": prompt, "raw": True, "stream": True,
            "options": {"temperature": 0, "num_predict": gen_tokens}}
    t0 = time.perf_counter()
    t_first = None
    with httpx.stream("POST", url + "/api/generate", json=body, timeout=600) as r:
        r.raise_for_status()
        for line in r.iter_lines():
            if not line:
                continue
            msg = json.loads(line)
            if "error" in msg:
                raise SystemExit("heron serve: " + msg["error"])
            now = time.perf_counter()
            if t_first is None:
                t_first = now
            if msg.get("done"):
                n = msg["eval_count"]
                return {"ttft": t_first - t0, "decode_tps": (n - 1) / (now - t_first) if n > 1 else 0.0,
                        "tokens": n}
    raise SystemExit("heron serve: stream ended without a final line")


def part_overhead(args, env, tmp):
    text, n = make_prompt(args.prompt_tokens, args.mlx_dir / "tokenizer.json")
    prompts = []
    for r in range(args.runs):
        p = tmp / f"prompt{r}.txt"
        p.write_text(f"[{r + 1}] " + text)
        prompts.append(p)
    print(f"overhead: prompt ~{n + 3} tokens, {args.gen_tokens} generated, {args.runs} runs", flush=True)

    def in_process(p):
        out = subprocess.run([str(args.heron), "generate", "--model", str(args.gguf), "--prompt-file", str(p),
                              "--raw", "--max-tokens", str(args.gen_tokens), "--temperature", "0",
                              "--stats-json"], capture_output=True, text=True, env=env, cwd=ROOT)
        s = last_json_line(out.stderr)
        if out.returncode != 0 or s is None:
            raise SystemExit(f"heron generate failed: {out.stderr[-500:]}")
        return {"ttft": s["prompt_tokens"] / s["prompt_tps"], "decode_tps": s["decode_tps"],
                "tokens": s["decode_tokens"]}

    inproc, api = [], []
    url, srv = heron_server(args, env, tmp)
    with srv:
        api_run(url, str(args.gguf), "Warm up.", 2)  # loads the model
        for r, p in enumerate(prompts):  # interleaved, the order alternating, so load drifts hit both
            steps = [lambda: inproc.append(in_process(p)),
                     lambda: api.append(api_run(url, str(args.gguf), p.read_text(), args.gen_tokens))]
            for step in steps if r % 2 == 0 else reversed(steps):
                step()
    rows = {"in-process": inproc, "HTTP API": api}
    print(f"\n{'path':12s} {'TTFT ms':>9s} {'decode tok/s':>13s} {'tokens':>7s}")
    med = {k: {m: statistics.median(r[m] for r in v) for m in ("ttft", "decode_tps", "tokens")}
           for k, v in rows.items()}
    for k, m in med.items():
        print(f"{k:12s} {m['ttft'] * 1000:9.1f} {m['decode_tps']:13.2f} {m['tokens']:7.0f}")
    a, i = med["HTTP API"], med["in-process"]
    print(f"API overhead: TTFT {100 * (a['ttft'] / i['ttft'] - 1):+.1f}%, "
          f"decode {100 * (i['decode_tps'] / a['decode_tps'] - 1):+.1f}% (target <= 5%)\n", flush=True)
    return med


def chat_run(client, model, run):
    messages = [{"role": "system", "content": f"You are a helpful assistant (conversation {run})."}]
    ttfts = []
    for turn in TURNS:
        messages.append({"role": "user", "content": turn})
        t0 = time.perf_counter()
        t_first, parts = None, []
        stream = client.chat.completions.create(model=model, messages=messages, stream=True,
                                                max_tokens=48, temperature=0)
        for chunk in stream:
            delta = chunk.choices[0].delta.content if chunk.choices else None
            if delta and t_first is None:
                t_first = time.perf_counter()
            if delta:
                parts.append(delta)
        ttfts.append((t_first or time.perf_counter()) - t0)
        messages.append({"role": "assistant", "content": "".join(parts)})
    return ttfts


def part_chat(args, env, tmp):
    print(f"chat: {len(TURNS)} turns, 48 tokens each, {args.runs} conversations per engine", flush=True)
    results = {}
    url, srv = heron_server(args, env, tmp)
    with srv:
        client = openai.OpenAI(base_url=url + "/v1", api_key="none")
        chat_run(client, str(args.gguf), "warm-up")
        results["heron"] = [chat_run(client, str(args.gguf), r) for r in range(args.runs)]
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "mlx_lm", "server", "--model", str(args.mlx_dir), "--port", str(port)]
    with server(cmd, env, url, tmp / "mlx.log", "/v1/models"):
        client = openai.OpenAI(base_url=url + "/v1", api_key="none")
        chat_run(client, str(args.mlx_dir), "warm-up")
        results["mlx-lm"] = [chat_run(client, str(args.mlx_dir), r) for r in range(args.runs)]
    print(f"\n{'turn':>4s} {'heron ms':>9s} {'mlx-lm ms':>10s} {'mlx-lm/heron':>13s}")
    med = {e: [statistics.median(run[t] for run in v) for t in range(len(TURNS))] for e, v in results.items()}
    for t in range(len(TURNS)):
        h, m = med["heron"][t], med["mlx-lm"][t]
        print(f"{t + 1:4d} {h * 1000:9.1f} {m * 1000:10.1f} {m / h:13.2f}")
    total = {e: sum(v) for e, v in med.items()}
    print(f" all {total['heron'] * 1000:9.1f} {total['mlx-lm'] * 1000:10.1f} {total['mlx-lm'] / total['heron']:13.2f}\n",
          flush=True)
    return med


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--parts", default="overhead,chat")
    ap.add_argument("--prompt-tokens", type=int, default=512)
    ap.add_argument("--gen-tokens", type=int, default=128)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--gguf", type=Path, default=DEFAULT_GGUF)
    ap.add_argument("--mlx-dir", type=Path, default=DEFAULT_MLX)
    ap.add_argument("--heron", type=Path, default=DEFAULT_HERON)
    ap.add_argument("--json-out", type=Path, default=None)
    args = ap.parse_args()
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    env = dict(os.environ, TOKENIZERS_PARALLELISM="false")
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[k] = str(args.threads)
    if not (args.mlx_dir / "config.json").exists():
        subprocess.run([sys.executable, str(ROOT / "tools/gguf_to_mlx.py"), "--gguf", str(args.gguf),
                        "--out", str(args.mlx_dir)], check=True, env=env)
    out = {}
    with tempfile.TemporaryDirectory(prefix="heron-bench-serve-") as tmp:
        if "overhead" in parts:
            out["overhead"] = part_overhead(args, env, Path(tmp))
        if "chat" in parts:
            out["chat"] = part_chat(args, env, Path(tmp))
    if args.json_out:
        args.json_out.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
