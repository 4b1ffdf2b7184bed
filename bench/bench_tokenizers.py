#!/usr/bin/env python3
"""Tokenizer benchmark (not a test): heron vs HF `tokenizers`, same input, same run.

    .venv/bin/python bench/bench_tokenizers.py [--repeat 3] [--mb 10] [--only gemma3,llama2]

For each tokenizer (the six of tests/fixtures/tokenizers and the BERT WordPiece
fixture): load time of tokenizer.json (fastest of 3) and single-thread encode throughput
in MB/s (fastest of --repeat passes over every document, add_special off), for heron
(build*/bench/tokenizer_bench, a small C++ driver) and for HF `tokenizers` (in this
process, RAYON_NUM_THREADS=1, one encode() call per document). Ratios > 1 mean heron is
faster. The token counts of both must agree (they are exact on the test corpora).

The ~10 MB mixed corpus, cut into documents of at most 16 KB:
  prose      .md / .rst / .txt files of the venv's packages (up to 25%)
  mixed      the tokenizer test corpus (many scripts, emoji, whitespace runs, specials)
             plus more strings from its generator with another seed (40%)
  code       Python sources of the standard library (sorted), the rest
"""
import argparse
import json
import os
import random
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
from tokenizers import Tokenizer  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT / "tests" / "fixtures" / "tokenizers"
FIXTURES = ROOT / "tests" / "fixtures" / "tokenizer"
NAMES = ["qwen3", "llama3", "gptoss", "deepseek_v3", "gemma3", "llama2", "bert"]
DOC_MAX = 16 * 1024


def zstd(path):
    return subprocess.run(["zstd", "-dc", "--long=31", str(path)], check=True,
                          capture_output=True).stdout


def split_docs(text):
    docs, cur = [], []
    size = 0
    for line in text.splitlines(keepends=True):
        if size + len(line) > DOC_MAX and cur:
            docs.append("".join(cur))
            cur, size = [], 0
        cur.append(line[:DOC_MAX])
        size += len(line[:DOC_MAX])
    if cur:
        docs.append("".join(cur))
    return docs


def files_text(paths, budget):
    out, size = [], 0
    for p in paths:
        try:
            t = p.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        out.append(t)
        size += len(t.encode())
        if size >= budget:
            break
    return out


def build_corpus(total_mb):
    total = int(total_mb * 1_000_000)
    site = Path(sysconfig.get_paths()["purelib"])
    prose = files_text(sorted(p for ext in ("*.md", "*.rst", "*.txt") for p in site.rglob(ext)),
                       total * 0.25)
    sys.path.insert(0, str(ROOT / "tools"))
    import gen_tokenizer_refs as gen
    mixed = json.loads(zstd(FIXTURES / "corpus.json.zst"))["strings"]
    rng = random.Random(7)
    size = sum(len(s.encode()) for s in mixed)
    while size < total * 0.40:
        s = gen.random_string(rng, rng.choice([10, 30, 80, 200]))
        mixed.append(s)
        size += len(s.encode())
    # Code fills the rest.
    size += sum(len(t.encode()) for t in prose)
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    code = files_text(sorted(p for p in stdlib.rglob("*.py") if "test" not in p.parts),
                      total - size)
    docs = []
    for t in code + prose:
        docs += split_docs(t)
    # Mixed strings are short: group them into documents.
    group, size = [], 0
    for s in mixed:
        for piece in split_docs(s):
            group.append(piece)
            size += len(piece)
            if size > 4096:
                docs.append("".join(group))
                group, size = [], 0
    if group:
        docs.append("".join(group))
    rng.shuffle(docs)
    return [d.replace("\0", " ") for d in docs if d]


def model_dir(name, tmp):
    d = Path(tmp) / name
    d.mkdir(exist_ok=True)
    if name == "bert":
        (d / "tokenizer.json").write_bytes(zstd(FIXTURES / "bert_minilm.tokenizer.json.zst"))
    else:
        for file in ("tokenizer.json", "tokenizer_config.json"):
            (d / file).write_bytes(zstd(REAL / name / (file + ".zst")))
    return d


def bench_hf(path, docs, repeat):
    load = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        tok = Tokenizer.from_file(str(path / "tokenizer.json"))
        load = min(load, time.perf_counter() - t0)
    tok.no_truncation()
    tok.no_padding()
    best, tokens = float("inf"), 0
    for _ in range(repeat):
        tokens = 0
        t0 = time.perf_counter()
        for d in docs:
            tokens += len(tok.encode(d, add_special_tokens=False).ids)
        best = min(best, time.perf_counter() - t0)
    return {"load_seconds": load, "encode_seconds": best, "tokens": tokens}


def find_bench():
    for build in ("build", "build-tok", "build-release"):
        exe = ROOT / build / "bench" / "tokenizer_bench"
        if exe.exists():
            return exe
    sys.exit("tokenizer_bench not found: cmake --build build --target tokenizer_bench")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--mb", type=float, default=10.0)
    ap.add_argument("--only", default="")
    ap.add_argument("--bench", default=None, help="path of tokenizer_bench")
    args = ap.parse_args()
    exe = Path(args.bench) if args.bench else find_bench()
    names = args.only.split(",") if args.only else NAMES

    docs = build_corpus(args.mb)
    mb = sum(len(d.encode()) for d in docs) / 1e6
    print(f"corpus: {len(docs)} documents, {mb:.2f} MB; heron: {exe.relative_to(ROOT)}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        docs_file = Path(tmp) / "docs.bin"
        docs_file.write_bytes(b"\0".join(d.encode() for d in docs))
        for name in names:
            path = model_dir(name, tmp)
            r = subprocess.run([str(exe), str(path), str(docs_file), "--repeat", str(args.repeat)],
                               capture_output=True, text=True)
            if r.returncode != 0:
                print(f"{name}: heron failed: {r.stderr.strip()}")
                continue
            heron = json.loads(r.stdout)
            hf = bench_hf(path, docs, args.repeat)
            rows.append((name, heron, hf))
            agree = "" if heron["tokens"] == hf["tokens"] else \
                f"   TOKEN COUNTS DIFFER: heron {heron['tokens']} vs HF {hf['tokens']}"
            print(f"  {name}: done{agree}", flush=True)

    print()
    print(f"{'tokenizer':<12} {'heron MB/s':>10} {'HF MB/s':>9} {'ratio':>6}   "
          f"{'heron load':>10} {'HF load':>9} {'ratio':>6}   {'tokens':>9}")
    for name, heron, hf in rows:
        h_tp, f_tp = mb / heron["encode_seconds"], mb / hf["encode_seconds"]
        print(f"{name:<12} {h_tp:>10.2f} {f_tp:>9.2f} {h_tp / f_tp:>5.2f}x   "
              f"{heron['load_seconds']:>9.3f}s {hf['load_seconds']:>8.3f}s "
              f"{hf['load_seconds'] / heron['load_seconds']:>5.2f}x   {heron['tokens']:>9}")


if __name__ == "__main__":
    main()
