#!/usr/bin/env python3
"""Embedding throughput benchmark (not a test): heron vs sentence-transformers on the CPU,
all-MiniLM-L6-v2, measured side by side in one run.

    .venv/bin/python bench/bench_embed.py --peer-python /path/to/python [--runs 5]

sentence-transformers needs torch, which the project's venv does not hold: --peer-python
(or $HERON_ST_PYTHON) names a Python that has it (e.g. a venv made with
`python3 -m venv st && st/bin/pip install sentence-transformers`). Without one, only
heron's figures are printed.

Texts: the 200 of tests/fixtures/embeddings/sentences.json (2 to 256 tokens: sentences of
this repository's docs, and inputs the tokenizer must cut at 256), --repeat times.
  heron                  build/heron runner --model DIR (HERON_KERNEL_THREADS = --threads),
                         one POST /embed with every text: tokenizing, batching, the forward
                         passes and the JSON answer, timed from the client.
  sentence-transformers  SentenceTransformer(DIR, device="cpu").encode(texts,
                         batch_size=--batch) in a worker process (torch.set_num_threads =
                         --threads), timed inside the worker (tokenizing included).
Each engine warms up once, then the runs alternate engines; the table shows medians and
the ratio heron / sentence-transformers (above 1: heron is faster). The smallest cosine
similarity between the two engines' vectors is printed as a check. The load average is
printed at the start and the end.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
TEXTS = json.loads((ROOT / "tests/fixtures/embeddings/sentences.json").read_text())

PEER = r"""
import json, sys, time
import numpy as np
import torch
from sentence_transformers import SentenceTransformer
model_dir, threads, batch, texts_file, out_file = sys.argv[1:6]
torch.set_num_threads(int(threads))
texts = json.load(open(texts_file))
model = SentenceTransformer(model_dir, device="cpu")
model.encode(texts[:64], batch_size=int(batch))  # warm-up
for line in sys.stdin:  # one run per line
    t = time.perf_counter()
    vectors = model.encode(texts, batch_size=int(batch), convert_to_numpy=True)
    print(time.perf_counter() - t, flush=True)
    np.save(out_file, vectors)
"""


class Heron:
    def __init__(self, model_dir, threads):
        token = "b" * 64
        env = dict(os.environ, HERON_RUNNER_TOKEN=token, HERON_KERNEL_THREADS=str(threads))
        self.proc = subprocess.Popen([str(ROOT / "build/heron"), "runner", "--model",
                                      str(model_dir)], env=env, stdout=subprocess.PIPE)
        port = json.loads(self.proc.stdout.readline())["port"]
        self.url = f"http://127.0.0.1:{port}/embed"
        self.headers = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}

    def embed(self, texts):
        body = json.dumps({"input": texts}).encode()
        t = time.perf_counter()
        with urllib.request.urlopen(urllib.request.Request(self.url, body, self.headers)) as r:
            answer = json.loads(r.read())
        return time.perf_counter() - t, np.array(answer["embeddings"]), answer["prompt_eval_count"]

    def close(self):
        self.proc.terminate()
        self.proc.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--model", default=str(ROOT / ".venv/models/all-MiniLM-L6-v2"))
    ap.add_argument("--peer-python", default=os.environ.get("HERON_ST_PYTHON"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--batch", type=int, default=32, help="sentence-transformers' batch_size")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    texts = TEXTS * args.repeat
    print(f"load average at start: {os.getloadavg()}")
    heron = Heron(args.model, args.threads)
    heron.embed(texts[:64])  # warm-up
    peer = None
    tmp = tempfile.TemporaryDirectory()
    if args.peer_python:
        texts_file = Path(tmp.name) / "texts.json"
        texts_file.write_text(json.dumps(texts))
        out_file = Path(tmp.name) / "st.npy"
        env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
        peer = subprocess.Popen([args.peer_python, "-c", PEER, args.model, str(args.threads),
                                 str(args.batch), str(texts_file), str(out_file)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                env=env, stderr=subprocess.DEVNULL)
    times = {"heron": [], "sentence-transformers": []}
    tokens = 0
    ours = None
    for run in range(args.runs):
        order = ["heron", "sentence-transformers"] if run % 2 == 0 else ["sentence-transformers", "heron"]
        for engine in order:
            if engine == "heron":
                t, ours, tokens = heron.embed(texts)
                times["heron"].append(t)
            elif peer:
                peer.stdin.write("run\n")
                peer.stdin.flush()
                times[engine].append(float(peer.stdout.readline()))
    heron.close()
    print(f"{len(texts)} texts, {tokens} tokens (special tokens included, cut at 256), "
          f"{args.runs} runs, {args.threads} threads")
    print(f"{'engine':<24}{'median s':>10}{'texts/s':>10}{'tokens/s':>10}")
    med = {}
    for engine, ts in times.items():
        if not ts:
            continue
        med[engine] = statistics.median(ts)
        print(f"{engine:<24}{med[engine]:>10.3f}{len(texts) / med[engine]:>10.1f}"
              f"{tokens / med[engine]:>10.0f}")
    if peer:
        peer.stdin.close()
        peer.wait()
        theirs = np.load(out_file)
        cos = (ours * theirs).sum(1) / np.linalg.norm(ours, axis=1) / np.linalg.norm(theirs, axis=1)
        print(f"ratio heron / sentence-transformers (throughput): "
              f"{med['sentence-transformers'] / med['heron']:.2f}x")
        print(f"smallest cosine similarity between the engines' vectors: {cos.min():.6f}")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    sys.exit(main())
