#!/usr/bin/env python3
"""Prefix-cache benchmark (not a test): time to first token (TTFT) when a prompt begins
with text an engine has seen before, heron serve against mlx_lm.server and llama.cpp, on
SmolLM2-135M-Instruct (the Q4_1 GGUF; context 8192):

    nice -n 10 .venv/bin/python bench/bench_prefix_cache.py [--runs 3] [--quick]
        [--engines heron,mlx-lm,llama.cpp] [--workloads a,b,c,d,e] [--heron build/heron] [--json OUT]

TTFT is measured by the client, in seconds, from sending a streamed request to its first
streamed chunk. Every request is a raw text completion, greedy, 8 tokens: heron's
/api/generate ("raw": true), mlx_lm.server's /v1/completions, llama.cpp's completion.
Conversations are concatenated text ("User N: ...\\nAssistant: <the engine's own answer>"),
so the engines see the same text except for the answers each one generated.

  (a) 8 users share one ~2000-token system prompt, interleaved turn by turn, 4 turns each:
      user u's turn t = system + u's earlier questions and answers + a new question.
      Rows: mean TTFT of each turn over the users, over all turns, over turns >= 2.
  (b) regenerate: a ~4096- and a ~8000-token conversation, sent twice unchanged.
      Rows: cold TTFT, regenerate TTFT, cold/regenerate.
  (c) a ~2000-token conversation, then 3 others of ~2000 tokens (each different from its
      first token on), then the first one continued (its answer and a new question).
      Rows: its cold TTFT, the others' mean, the return, cold/return.
  (d) a ~6000-token document, then 5 requests of document + question.
      Rows: the document's cold TTFT, each question, their mean, cold/mean.
  (e) heron only, on a heron serve with HERON_CACHE_DIR set to a temporary directory: (d)
      with the runner restarted between the document and the questions (keep_alive 0
      unloads it, an empty prompt loads it again, so the questions' TTFT leaves the
      model's load out and shows what the disk tier gives back). Also prints the disk
      tier's size (/api/ps prefix_cache.disk_bytes) when heron reports it.

Engines run one at a time (2-core machines), each through every run of every workload
before the next starts:
  heron      `heron serve` (--heron) with HERON_CONTEXT_LENGTH=8192 and its prefix cache
             as configured by default (HERON_CACHE_MEMORY; disk tier off except in (e)).
             Each request's cached_tokens is printed; a heron that does not report it
             shows "?".
  mlx-lm     `mlx_lm.server` on the same 4-bit weights converted by tools/gguf_to_mlx.py,
             with its LRU prompt cache as it comes (--prompt-cache-size 10 entries, no
             byte limit); its usage.prompt_tokens_details.cached_tokens is printed too.
  llama.cpp  llama-cpp-python in this process (its server extra's packages are not
             installed): Llama(n_ctx=8192, n_threads=2, n_threads_batch=2) with
             set_cache(LlamaRAMCache(2 GiB)): the prompt cache its server uses with
             `cache: true` (at its default cache_size). No HTTP in its TTFT; reuse is not reported.
An engine that cannot start is skipped with the reason, and the others go on.

Prompts are word-list text from a seeded generator, the same for every engine; every
conversation of the whole script opens with a token no other one opens with, and each
run's text is new, so every run starts cold on a server that stays up. Tables show the
median over --runs of each figure and heron/peer (TTFT: below 1 means heron is faster).
--quick shrinks every size for a smoke test: a ~300-token system prompt, 2 users x 2
turns, one ~1000-token regenerate, ~300-token conversations in (c), a ~1000-token
document and 2 questions. The load average is printed at the start and at the end.

Time on a 2-core CPU: mlx-lm's cold prefills (about 5 tok/s on the mlx-cpu backend)
take hours at full size and about 11 minutes with --quick --runs 1; heron and llama.cpp
take well under an hour at full size (--engines heron,llama.cpp).
"""
import argparse
import contextlib
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import httpx
import openai

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
from procs import free_port  # noqa: E402
from bench_generate import DEFAULT_GGUF, DEFAULT_HERON, DEFAULT_MLX, ROOT  # noqa: E402
from bench_serve import heron_server, server  # noqa: E402

ENGINES = ["heron", "mlx-lm", "llama.cpp"]
WORKLOADS = ["a", "b", "c", "d", "e"]
TITLES = {
    "a": "users sharing a system prompt, interleaved",
    "b": "regenerate",
    "c": "return to a conversation after others",
    "d": "questions about one document",
    "e": "questions about one document after a runner restart (heron, disk tier)",
}
GEN_TOKENS = 8
N_CTX = 8192
THREADS = 2
# mlx-lm's CPU backend prefills about 5 tok/s (docs/benchmarks.md): a cold 8000-token
# prompt waits about half an hour for its first token.
TIMEOUT = 4 * 3600
WARM_UP = "0 warm up."  # opens with a digit: no conversation below does

FULL = dict(system=2000, users=8, turns=4, regenerate=(4096, 8000), conversation=2000,
            others=3, document=6000, questions=5)
QUICK = dict(system=300, users=2, turns=2, regenerate=(1000,), conversation=300,
             others=3, document=1000, questions=2)

WORDS = """
time year people way day man thing woman life child world school state family student
group country problem hand part place case week company system program question work
government number night point home water room mother area money story fact month lot
right study book eye job word business issue side kind head house service friend father
power hour game line end member law car city community name president team minute idea
kid body information back parent face others level office door health person art war
history party result change morning reason research girl guy moment air teacher force
education river garden bridge lamp window paper music village harbour engine letter
winter summer forest stone road train market island valley bread apple salt ship light
make take give find tell ask work seem feel try leave call keep begin help show hear play
run move live believe bring happen write provide sit stand lose pay meet include continue
learn change lead understand watch follow stop create speak read spend grow open walk
win offer remember consider appear buy wait serve die send expect build stay fall cut
reach kill remain suggest raise pass sell require report decide pull carry paint count
good new first last long great little own other old right big high different small large
next early young important few public bad same able quiet green bright slow warm cold
""".split()


@dataclass
class Reply:
    ttft: float
    text: str
    prompt_tokens: int | None
    cached: int | None  # prompt tokens the engine reused; None: it does not say


# ----------------------------------------------------------------------------
# prompts


class Texts:
    """Seeded word-list text cut to token counts with the reference tokenizer (the MLX
    copy's tokenizer.json, the GGUF's own vocabulary)."""

    def __init__(self, tokenizer_json, seed):
        from tokenizers import Tokenizer

        self.tok = Tokenizer.from_file(str(tokenizer_json))
        # Openings: capitalised words that are one token where a text starts, each used
        # once, so no two conversations share even their first token.
        words = sorted(w for w in self.tok.get_vocab() if re.fullmatch(r"[A-Z][a-z]{3,}", w))
        random.Random(seed).shuffle(words)
        self.openings = iter(w for w in words if len(self.tok.encode(w + " the").ids) == 2)

    def count(self, text):
        return len(self.tok.encode(text, add_special_tokens=False).ids)

    def opening(self):
        return next(self.openings)

    def cut(self, text, n_tokens):
        enc = self.tok.encode(text, add_special_tokens=False)
        return text[: enc.offsets[n_tokens][0]].rstrip() if len(enc.ids) > n_tokens else text

    def prose(self, rng, n_tokens, speakers=False):
        """About n_tokens of sentences; with speakers, as User/Assistant lines."""
        lines, words = [], 0
        while words < n_tokens:  # every word is at least one token
            k = rng.randint(1, 3)
            sentences = [sentence(rng) for _ in range(k)]
            words += sum(s.count(" ") + 1 for s in sentences)
            lines.append(" ".join(sentences))
        if speakers:
            lines = [("User: " if i % 2 == 0 else "Assistant: ") + s for i, s in enumerate(lines)]
        return self.cut("\n".join(lines), n_tokens)

    def conversation(self, rng, n_tokens):
        """A dialogue of about n_tokens ending where the assistant answers."""
        tail = f"\nUser: {sentence(rng, '?')}\nAssistant:"
        return self.opening() + " " + self.prose(rng, n_tokens - self.count(tail) - 1, True) + tail


def sentence(rng, end=None):
    words = [rng.choice(WORDS) for _ in range(rng.randint(5, 14))]
    return " ".join(words).capitalize() + (end or rng.choice(".!?."))


def plan(texts, sizes, run):
    """The prompts of one run, every workload's, the same for every engine."""
    def rng(w):
        return random.Random(f"{run}-{w}")

    out = {}
    r = rng("a")
    out["a"] = {"system": texts.opening() + " " + texts.prose(r, sizes["system"]) + "\n",
                "questions": [[sentence(r, "?") for _ in range(sizes["turns"])] for _ in range(sizes["users"])]}
    r = rng("b")
    out["b"] = {n: texts.conversation(r, n) for n in sizes["regenerate"]}
    r = rng("c")
    out["c"] = {"first": texts.conversation(r, sizes["conversation"]),
                "others": [texts.conversation(r, sizes["conversation"]) for _ in range(sizes["others"])],
                "follow": f"\nUser: {sentence(r, '?')}\nAssistant:"}
    for w in ("d", "e"):
        r = rng(w)
        out[w] = {"document": texts.opening() + " " + texts.prose(r, sizes["document"]) + "\n",
                  "questions": [f"Question {i + 1}: {sentence(r, '?')}\nAnswer:" for i in range(sizes["questions"])]}
    return out


# ----------------------------------------------------------------------------
# engines: complete(prompt) -> Reply


class Heron:
    def __init__(self, url, model):
        self.url, self.model = url, model

    def post(self, body):
        r = httpx.post(self.url + "/api/generate", json=dict(body, model=self.model), timeout=TIMEOUT)
        r.raise_for_status()

    def load(self):
        self.post({"prompt": ""})

    def restart(self):
        """Unload the runner (keep_alive 0; it writes its disk tier first), then load it again."""
        self.post({"prompt": "", "keep_alive": 0})
        self.load()

    def disk_bytes(self):
        for m in httpx.get(self.url + "/api/ps", timeout=60).json().get("models", []):
            if "disk_bytes" in (m.get("prefix_cache") or {}):
                return m["prefix_cache"]["disk_bytes"]
        return None

    def complete(self, prompt):
        body = {"model": self.model, "prompt": prompt, "raw": True, "stream": True,
                "options": {"temperature": 0, "num_predict": GEN_TOKENS}}
        t0 = time.perf_counter()
        first, parts = None, []
        with httpx.stream("POST", self.url + "/api/generate", json=body, timeout=TIMEOUT) as r:
            r.raise_for_status()
            for line in r.iter_lines():
                if not line:
                    continue
                msg = json.loads(line)
                if "error" in msg:
                    raise RuntimeError("heron serve: " + msg["error"])
                first = first or time.perf_counter()
                parts.append(msg.get("response", ""))
                if msg.get("done"):
                    return Reply(first - t0, "".join(parts), msg.get("prompt_eval_count"), msg.get("cached_tokens"))
        raise RuntimeError("heron serve: stream ended without a final line")


class MlxLm:
    def __init__(self, url, model):
        self.client = openai.OpenAI(base_url=url + "/v1", api_key="none", timeout=TIMEOUT)
        self.model = model

    def complete(self, prompt):
        t0 = time.perf_counter()
        first, parts, usage = None, [], None
        stream = self.client.completions.create(model=self.model, prompt=prompt, max_tokens=GEN_TOKENS,
                                                temperature=0, stream=True,
                                                stream_options={"include_usage": True})
        for chunk in stream:
            if chunk.choices:
                first = first or time.perf_counter()
                parts.append(chunk.choices[0].text or "")
            usage = chunk.usage or usage
        details = usage and usage.prompt_tokens_details
        return Reply(first - t0, "".join(parts), usage and usage.prompt_tokens, details and details.cached_tokens)


class LlamaCpp:
    def __init__(self, gguf):
        from llama_cpp import Llama, LlamaRAMCache

        self.llm = Llama(model_path=str(gguf), n_ctx=N_CTX, n_threads=THREADS, n_threads_batch=THREADS,
                         seed=0, verbose=False)
        self.llm.set_cache(LlamaRAMCache(capacity_bytes=2 << 30))

    def complete(self, prompt):
        t0 = time.perf_counter()
        first, parts = None, []
        for chunk in self.llm(prompt, max_tokens=GEN_TOKENS, temperature=0, stream=True):
            first = first or time.perf_counter()
            parts.append(chunk["choices"][0]["text"])
        return Reply(first - t0, "".join(parts), len(self.llm.tokenize(prompt.encode())), None)


@contextlib.contextmanager
def heron_session(args, env, tmp, cache_dir=None):
    env = dict(env, HERON_CONTEXT_LENGTH=str(N_CTX))
    if cache_dir:
        env["HERON_CACHE_DIR"] = str(cache_dir)
    url, srv = heron_server(args, env, tmp)
    with srv:
        eng = Heron(url, str(DEFAULT_GGUF))
        eng.load()
        eng.complete(WARM_UP)
        yield eng


@contextlib.contextmanager
def mlx_session(args, env, tmp):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "mlx_lm", "server", "--model", str(DEFAULT_MLX), "--port", str(port)]
    with server(cmd, env, url, tmp / "mlx.log", "/v1/models"):
        eng = MlxLm(url, str(DEFAULT_MLX))
        eng.complete(WARM_UP)
        yield eng


@contextlib.contextmanager
def llamacpp_session(args, env, tmp):
    eng = LlamaCpp(DEFAULT_GGUF)
    eng.complete(WARM_UP)
    yield eng


# ----------------------------------------------------------------------------
# workloads: run_X(engine, prompts, log) -> ({key: Reply}, extra figures)


def run_a(eng, p, log):
    history = [p["system"]] * len(p["questions"])
    out = {}
    for t in range(len(p["questions"][0])):  # turn by turn, the users interleaved
        for u, questions in enumerate(p["questions"]):
            prompt = history[u] + f"User {u + 1}: {questions[t]}\nAssistant:"
            out[("turn", t + 1, u + 1)] = r = log(f"u{u + 1} t{t + 1}", eng.complete(prompt))
            history[u] = prompt + r.text + "\n"
    return out, {}


def run_b(eng, p, log):
    out = {}
    for n, prompt in p.items():
        out[(n, "cold")] = log(f"{n} cold", eng.complete(prompt))
        out[(n, "regenerate")] = log(f"{n} regenerate", eng.complete(prompt))
    return out, {}


def run_c(eng, p, log):
    first = log("first cold", eng.complete(p["first"]))
    out = {("first",): first}
    for i, prompt in enumerate(p["others"]):
        out[("other", i)] = log(f"other {i + 1}", eng.complete(prompt))
    out[("return",)] = log("return", eng.complete(p["first"] + first.text + p["follow"]))
    return out, {}


def run_d(eng, p, log, restart=False):
    out = {("document",): log("document cold", eng.complete(p["document"]))}
    if restart:
        eng.restart()
    for i, q in enumerate(p["questions"]):
        out[("question", i + 1)] = log(f"question {i + 1}", eng.complete(p["document"] + q))
    return out, {}


def run_e(eng, p, log):
    out, _ = run_d(eng, p, log, restart=True)
    return out, {"disk_bytes": eng.disk_bytes()}


RUNNERS = {"a": run_a, "b": run_b, "c": run_c, "d": run_d, "e": run_e}


# ----------------------------------------------------------------------------
# tables: rows of (label, selector) for TTFT or (label, (cold, warm)) for a speedup


def rows_for(w, sizes):
    def is_(*prefix):
        return lambda k: k[: len(prefix)] == prefix

    if w == "a":
        turns = [(f"turn {t}", is_("turn", t)) for t in range(1, sizes["turns"] + 1)]
        return turns + [("all turns", is_("turn")), ("turns >= 2", lambda k: k[1] >= 2)]
    if w == "b":
        return [row for n in sizes["regenerate"] for row in
                [(f"{n} cold", is_(n, "cold")), (f"{n} regenerate", is_(n, "regenerate")),
                 (f"{n} cold/regenerate", (is_(n, "cold"), is_(n, "regenerate")))]]
    if w == "c":
        return [("first, cold", is_("first")), ("others, cold (mean)", is_("other")),
                ("return to the first", is_("return")), ("cold/return", (is_("first"), is_("return")))]
    after = " after restart" if w == "e" else ""
    return ([("document cold", is_("document"))]
            + [(f"question {i}{after}", is_("question", i)) for i in range(1, sizes["questions"] + 1)]
            + [("questions (mean)", is_("question")), ("cold/questions", (is_("document"), is_("question")))])


def mean_of(replies, sel, field):
    vals = [getattr(r, field) for k, r in replies.items() if sel(k)]
    return None if not vals or None in vals else statistics.fmean(vals)


def row_value(replies, sel):
    if isinstance(sel, tuple):
        cold, warm = mean_of(replies, sel[0], "ttft"), mean_of(replies, sel[1], "ttft")
        return cold / warm
    return mean_of(replies, sel, "ttft")


def median_over_runs(runs, f):
    vals = [v for v in (f(r) for r in runs) if v is not None]
    return statistics.median(vals) if vals else None


def table_row(label, sel, runs):
    """runs[engine] = that engine's replies per run; the row's medians, heron's cached
    tokens and heron/peer ratios (TTFT rows only)."""
    speedup = isinstance(sel, tuple)
    vals = {e: median_over_runs(reps, lambda rep: row_value(rep, sel)) for e, reps in runs.items()}
    row = {"row": label, "unit": "x" if speedup else "s", "median": vals}
    if "heron" in runs:
        row["heron_cached_tokens"] = None if speedup else median_over_runs(
            runs["heron"], lambda rep: mean_of(rep, sel, "cached"))
        for p in runs:
            if p != "heron":
                row[f"heron/{p}"] = None if speedup or not vals[p] else vals["heron"] / vals[p]
    return row


def table(w, sizes, results):
    """Print workload w's table; return its rows."""
    runs = {e: [rep for rep, _ in results[e][w]] for e in ENGINES if results.get(e, {}).get(w)}
    if not runs:
        return []
    peers = [e for e in runs if e != "heron"] if "heron" in runs else []
    print(f"\n({w}) {TITLES[w]}: TTFT ms, median of {max(map(len, runs.values()))} run(s)")
    print(f"{'':28s}" + "".join(f"{e:>11s}" for e in runs) + f"{'heron cached':>14s}" * ("heron" in runs)
          + "".join(f"{'heron/' + p:>17s}" for p in peers))
    out = [table_row(label, sel, runs) for label, sel in rows_for(w, sizes)]
    for row in out:
        speedup = row["unit"] == "x"
        line = f"{row['row']:28s}" + "".join(f"{fmt(row['median'][e], speedup):>11s}" for e in runs)
        if "heron" in runs:
            cached = row["heron_cached_tokens"]
            line += f"{'' if speedup else '?' if cached is None else f'{cached:.0f}':>14s}"
        line += "".join(f"{fmt_ratio(row['heron/' + p]):>17s}" for p in peers)
        print(line)
    if w == "e":
        disk = [x["disk_bytes"] for _, x in results["heron"]["e"]]
        print("disk tier after each run (prefix_cache.disk_bytes): "
              + ", ".join("not reported" if d is None else f"{d / 2**20:.1f} MiB" for d in disk))
    return out


def fmt_ratio(v):
    return "" if v is None else f"{v:.2f}"


def fmt(v, speedup):
    if v is None:
        return "?"
    return f"{v:.2f}x" if speedup else f"{v * 1000:.1f}"


# ----------------------------------------------------------------------------
# driver


def sessions(args, env, tmp, engines, workloads):
    """(engine, session, workloads) in the order they run, one server at a time."""
    if "heron" in engines and [w for w in workloads if w != "e"]:
        yield "heron", heron_session(args, env, tmp), [w for w in workloads if w != "e"]
    if "heron" in engines and "e" in workloads:
        yield "heron", heron_session(args, env, tmp, Path(tempfile.mkdtemp(prefix="disk-", dir=tmp))), ["e"]
    peer_workloads = [w for w in workloads if w != "e"]
    if "mlx-lm" in engines and peer_workloads:
        yield "mlx-lm", mlx_session(args, env, tmp), peer_workloads
    if "llama.cpp" in engines and peer_workloads:
        yield "llama.cpp", llamacpp_session(args, env, tmp), peer_workloads


def logger(engine, run, w, requests):
    def log(label, r):
        cached = "?" if r.cached is None else r.cached
        print(f"  {engine:9s} run {run + 1} ({w}) {label:16s} prompt {r.prompt_tokens or '?':>5} tok, "
              f"cached {cached:>5}, TTFT {r.ttft * 1000:8.1f} ms", flush=True)
        requests.append(dict(asdict(r), engine=engine, run=run + 1, workload=w, label=label))
        return r
    return log


def measure(args, env, tmp, plans, engines, workloads, notes):
    """results[engine][workload] = [(replies, extra) per run]; requests: every request."""
    results, requests = {}, []
    for engine, session, wls in sessions(args, env, tmp, engines, workloads):
        print(f"{engine}: workloads {','.join(wls)}, {args.runs} run(s)", flush=True)
        try:
            with session as eng:
                for run, prompts in enumerate(plans):
                    for w in wls:
                        log = logger(engine, run, w, requests)
                        results.setdefault(engine, {}).setdefault(w, []).append(RUNNERS[w](eng, prompts[w], log))
        except (Exception, SystemExit) as e:  # SystemExit: bench_serve.server's "did not start"
            notes.append(f"{engine} stopped ({','.join(wls)}): {type(e).__name__}: {str(e).strip()[-1500:]}")
            print("  " + notes[-1], flush=True)
    return results, requests


def loadavg():
    return [round(x, 2) for x in os.getloadavg()]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="tiny sizes, for a smoke test")
    ap.add_argument("--heron", type=Path, default=DEFAULT_HERON)
    ap.add_argument("--json", type=Path, default=None, help="write every figure here")
    args = ap.parse_args()
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    workloads = [w.strip() for w in args.workloads.split(",") if w.strip()]
    for x, known in ((engines, ENGINES), (workloads, WORKLOADS)):
        if set(x) - set(known):
            raise SystemExit(f"unknown {sorted(set(x) - set(known))}; choose from {known}")
    sizes = QUICK if args.quick else FULL
    env = dict(os.environ, TOKENIZERS_PARALLELISM="false")
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[k] = str(THREADS)

    notes = []
    if "heron" in engines and not os.access(args.heron, os.X_OK):
        notes.append(f"heron skipped: {args.heron} not found (build it first)")
        engines.remove("heron")
    if not (DEFAULT_MLX / "config.json").exists():  # its tokenizer.json sizes the prompts too
        subprocess.run([sys.executable, str(ROOT / "tools/gguf_to_mlx.py"), "--gguf", str(DEFAULT_GGUF),
                        "--out", str(DEFAULT_MLX)], check=True, env=env)
    texts = Texts(DEFAULT_MLX / "tokenizer.json", seed=0)
    plans = [plan(texts, sizes, run) for run in range(args.runs)]

    load_start = loadavg()
    print(f"load average at start: {load_start}; engines {engines}; workloads {workloads}; "
          f"{args.runs} run(s); {GEN_TOKENS} tokens per request; sizes {sizes}", flush=True)
    with tempfile.TemporaryDirectory(prefix="heron-bench-prefix-") as tmp:
        results, requests = measure(args, env, Path(tmp), plans, engines, workloads, notes)
    tables = {w: table(w, sizes, results) for w in workloads}
    load_end = loadavg()
    print(f"\nload average at start {load_start}, at end {load_end}")
    for note in notes:
        print("note: " + note)
    if args.json:
        args.json.write_text(json.dumps({"sizes": sizes, "runs": args.runs, "engines": engines,
                                         "loadavg": {"start": load_start, "end": load_end},
                                         "tables": tables, "requests": requests, "notes": notes,
                                         "disk_bytes": [x["disk_bytes"] for _, x in
                                                        results.get("heron", {}).get("e", [])]},
                                        indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
