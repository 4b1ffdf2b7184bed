#!/usr/bin/env python3
"""Speculative decoding benchmark (not a test): heron's prompt lookup and its trained draft
head for SmolLM2 against llama.cpp's prompt lookup and mlx-lm's draft model.

    .venv/bin/python bench/bench_speculation.py [--runs 3] [--gen-tokens 200] \
        [--workloads edit,prose] [--depths 2,4,8] [--llama-pred 10] [--head [DIR]]
        [--json-out F]

Two chat workloads on SmolLM2-135M-Instruct (Q4_1 GGUF), fixed text in this file:
  edit   the user pastes ~340 tokens of Python and asks for it back with one variable
         renamed: the answer repeats the prompt, so prompt lookup pays. (The code comes
         before the request: SmolLM2-135M then copies it most faithfully, if without
         doing the renaming well; only the copying matters here.)
  prose  "Write a short story about a lighthouse keeper.": lookup finds little; the
         depth controller should fall back to plain decoding and match its speed.

Configurations (interleaved, the order rotating every run; tables show medians):
  heron plain      build/heron generate --speculation off
  heron dD         --speculation on --draft-depth D, for each D in --depths
  heron ctrl       --speculation on (the depth controller picks the depth every round)
  heron head dD    with --head: --draft HEAD (a trained draft head, behind prompt lookup)
  heron head ctrl  at each depth and under the controller
  llama plain      llama-cpp-python's Llama.generate, greedy, no draft model
  llama plP        the same with draft_model=LlamaPromptLookupDecoding(num_pred_tokens=P),
                   for each P in --llama-pred (10 is its default; max_ngram_size 2)

heron runs `generate --model GGUF --prompt-file F --max-tokens N --ignore-eos
--temperature 0 --stats-json` in chat mode (no --raw: its chat template applies); its
last stderr line gives prompt_tokens, prompt_tps, decode_tokens, decode_tps (the N-1
tokens after the first, timed from the first token to the last) and speculation
{rounds, drafted, accepted}. heron keeps the costs its depth controller measures under
the store root ($HERON_MODELS): every configuration gets its own fresh temporary store
for this invocation, so nothing leaks between them; the controller's store is shared by
all its runs and both workloads, so it learns across runs as on a user's machine (its
first run starts cold; the learned costs are printed at the end).

llama.cpp runs in a fresh subprocess per run (like bench_generate.py's --worker, so
peak RSS and caches are separate), with n_ctx 4096 and n_threads = n_threads_batch =
--threads. It gets the same prompt tokens as heron: the GGUF's own chat template
(tokenizer.chat_template) rendered with jinja2, tokenized with special tokens and no BOS
(the GGUF says add_bos_token false); the count is checked against heron's prompt_tokens.
It is driven through Llama.generate, the loop create_completion runs (draft model
included), rather than create_completion itself: create_completion stops at EOS and could
only be kept going by a Python logits processor over the whole vocabulary every token
(cost heron does not pay), and it detokenizes and checks stop strings on the way.
Llama.generate feeds EOS back and carries on, as heron does with --ignore-eos, so both
engines produce exactly --gen-tokens tokens. prefill = time to the first token, decode =
the other N-1 tokens from the first to the last yielded token (heron's definitions).
Its rounds / drafted / accepted count the evaluations that carried a non-empty draft,
the drafted tokens, and the tokens each yielded beyond the first (heron's definitions).
Note that llama-cpp-python turns on logits_all with a draft model (it copies every
evaluated position's logits to numpy): that cost is part of its prompt lookup.

The edit answer (the function is longer than 200 tokens) stays inside the copy for the
default --gen-tokens; prose may pass the model's own EOS, after which both engines carry
on with whatever the model predicts.

Correctness: greedy speculative decoding must reproduce plain decoding exactly, so
heron's answer text is compared across all its configurations and runs per workload, and
any difference prints a MISMATCH line. llama.cpp's lookup text is compared with its plain
text too (informational), and heron's with llama.cpp's (informational: the numerics
differ, so the two engines may part ways).

Threads: --threads (default 2) goes to llama.cpp and is exported as OMP_NUM_THREADS /
OPENBLAS_NUM_THREADS to every run. The load average is printed at the start and end.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import bench_generate as bg  # noqa: E402

ROOT = bg.ROOT
DEFAULT_HERON = ROOT / "build/heron"
WORKLOADS = ["edit", "prose"]

EDIT_CODE = '''\
def summarize_orders(orders, tax_rate=0.2, discount_threshold=100.0):
    """Return the item count, discount, tax and total of a list of orders.

    Each order is a dict with a "price" and a "quantity"; orders with a
    quantity of zero or less are skipped.
    """
    total = 0.0
    count = 0
    for order in orders:
        quantity = order.get("quantity", 0)
        if quantity <= 0:
            continue
        price = float(order["price"])
        total += price * quantity
        count += quantity
    discount = 0.0
    if total > discount_threshold:
        discount = round(total * 0.05, 2)
        total -= discount
    tax = round(total * tax_rate, 2)
    total += tax
    average = total / count if count else 0.0
    return {
        "items": count,
        "discount": discount,
        "tax": tax,
        "total": round(total, 2),
        "average_per_item": round(average, 2),
    }


def print_summary(summary, currency="EUR"):
    for key in ("items", "discount", "tax", "total", "average_per_item"):
        value = summary[key]
        if key == "items":
            print(f"{key:>18}: {value}")
        else:
            print(f"{key:>18}: {value:.2f} {currency}")
'''

PROMPTS = {
    "edit": ("```python\n" + EDIT_CODE + "```\n\nRewrite the code above, renaming the "
             "variable `total` to `sum_total`. Output the complete code."),
    "prose": "Write a short story about a lighthouse keeper.",
}


# ----------------------------------------------------------------------------
# worker (runs in a subprocess; prints one JSON line on stdout)


def chat_prompt_ids(llm, user_text):
    """The prompt tokens heron's chat mode gives: the GGUF's chat template, special tokens
    parsed, no BOS added."""
    import jinja2

    template = jinja2.Environment().from_string(llm.metadata["tokenizer.chat_template"])
    text = template.render(messages=[{"role": "user", "content": user_text}],
                           add_generation_prompt=True)
    return llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)


def worker_llamacpp(args):
    from llama_cpp import Llama, llama_vocab_is_eog
    from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

    state = {"yielded": 0, "calls": []}  # calls: [drafted, tokens yielded before the call]

    class CountingLookup(LlamaPromptLookupDecoding):
        def __call__(self, input_ids, /, **kwargs):
            draft = super().__call__(input_ids, **kwargs)
            state["calls"].append((len(draft), state["yielded"]))
            return draft

    draft = CountingLookup(num_pred_tokens=args.pred) if args.pred > 0 else None
    # logits_all with a draft model, as llama-cpp-python needs it: left to itself it sizes
    # its scores buffer for n_batch positions and fails once the sequence passes 512.
    llm = Llama(model_path=str(args.gguf), draft_model=draft, logits_all=draft is not None,
                n_ctx=4096, n_threads=args.threads, n_threads_batch=args.threads, seed=0,
                verbose=False)
    ids = chat_prompt_ids(llm, Path(args.prompt_file).read_text())
    n = args.gen_tokens
    out = []
    tic = time.perf_counter()
    t_first = t_last = tic
    for token in llm.generate(ids, temp=0.0, repeat_penalty=1.0):
        out.append(token)
        state["yielded"] = len(out)
        t_last = time.perf_counter()
        if len(out) == 1:
            t_first = t_last
        if len(out) >= n:
            break
    # A call with a non-empty draft is one verifying evaluation; it yields the accepted
    # drafts plus one token, up to the next call (or the end, cut short by the budget).
    calls = state["calls"]
    rounds = drafted = accepted = 0
    for i, (d, before) in enumerate(calls):
        after = calls[i + 1][1] if i + 1 < len(calls) else len(out)
        if d > 0 and after > before:
            rounds += 1
            drafted += d
            accepted += min(d, after - before - 1)
    eog = [i for i, t in enumerate(out) if llama_vocab_is_eog(llm._model.vocab, t)]
    print_worker_result(ids, out, tic, t_first, t_last, llm.detokenize(out),
                        speculation={"rounds": rounds, "drafted": drafted,
                                     "accepted": accepted},
                        first_eos_at=eog[0] if eog else None)


def print_worker_result(ids, out, tic, t_first, t_last, text_bytes, **extra):
    """A worker's one JSON line: prompt rate to the first token, decode rate over tokens
    2..N (first to last), peak RSS and the text, with engine-specific fields."""
    print(json.dumps({
        "prompt_tokens": len(ids),
        "prompt_tps": len(ids) / (t_first - tic),
        "decode_tokens": len(out),
        "decode_tps": (len(out) - 1) / (t_last - t_first) if len(out) > 1 else 0.0,
        "peak_rss_mib": bg._rss_mib(),
        **extra,
        "text": text_bytes.decode("utf-8", errors="replace"),
    }))


def worker_mlx(args):
    """mlx-lm on the GGUF's own weights converted to MLX (bench_generate's conversion):
    plain generate_step, or speculative_generate_step with SmolLM2 as its own draft
    (--mlx-draft N tokens a round: every draft is accepted, so this measures the
    overhead of mlx-lm's speculation loop at 100% acceptance)."""
    import mlx.core as mx
    from llama_cpp import Llama
    from mlx_lm import load
    from mlx_lm.generate import generate_step, speculative_generate_step

    vocab = Llama(model_path=str(args.gguf), vocab_only=True, verbose=False)
    ids = chat_prompt_ids(vocab, Path(args.prompt_file).read_text())
    model, _ = load(str(args.mlx_dir))
    n = args.gen_tokens
    if args.mlx_draft > 0:
        steps = speculative_generate_step(mx.array(ids), model, model,
                                          num_draft_tokens=args.mlx_draft, max_tokens=n)
    else:
        steps = generate_step(mx.array(ids), model, max_tokens=n)
    out, drafted_hits = [], 0
    tic = time.perf_counter()
    t_first = t_last = tic
    for step in steps:
        out.append(int(step[0]))
        if len(step) > 2 and step[2]:
            drafted_hits += 1
        t_last = time.perf_counter()
        if len(out) == 1:
            t_first = t_last
        if len(out) >= n:
            break
    print_worker_result(ids, out, tic, t_first, t_last, vocab.detokenize(out))


# ----------------------------------------------------------------------------
# driver


def make_configs(args):
    configs = [{"name": "heron plain", "engine": "heron", "spec": "off", "depth": None}]
    for d in args.depths:
        configs.append({"name": f"heron d{d}", "engine": "heron", "spec": "on", "depth": d})
    configs.append({"name": "heron ctrl", "engine": "heron", "spec": "on", "depth": None})
    if args.head:
        for d in args.depths:
            configs.append({"name": f"heron head d{d}", "engine": "heron", "spec": "on",
                            "depth": d, "draft": str(args.head)})
        configs.append({"name": "heron head ctrl", "engine": "heron", "spec": "on",
                        "depth": None, "draft": str(args.head)})
    if args.self_draft:
        configs.append({"name": "heron self4", "engine": "heron", "spec": "on", "depth": 4,
                        "draft": str(args.gguf)})
    if args.mlx_lm:
        configs.append({"name": "mlx plain", "engine": "mlx-lm", "mlx_draft": 0})
        configs.append({"name": "mlx self4", "engine": "mlx-lm", "mlx_draft": 4})
    if not args.no_llama:
        configs.append({"name": "llama plain", "engine": "llama.cpp", "pred": 0})
        for p in args.llama_pred:
            configs.append({"name": f"llama pl{p}", "engine": "llama.cpp", "pred": p})
    return configs


def config_cmd(cfg, args, prompt_file):
    if cfg["engine"] == "heron":
        cmd = [str(args.heron), "generate", "--model", str(args.gguf),
               "--prompt-file", str(prompt_file), "--max-tokens", str(args.gen_tokens),
               "--ignore-eos", "--temperature", "0", "--stats-json",
               "--speculation", cfg["spec"]]
        if cfg["depth"] is not None:
            cmd += ["--draft-depth", str(cfg["depth"])]
        if cfg.get("draft"):
            cmd += ["--draft", cfg["draft"]]
        return cmd
    if cfg["engine"] == "mlx-lm":
        return [sys.executable, str(Path(__file__).resolve()), "--worker-mlx",
                "--prompt-file", str(prompt_file), "--gen-tokens", str(args.gen_tokens),
                "--gguf", str(args.gguf), "--mlx-dir", str(args.mlx_dir),
                "--mlx-draft", str(cfg["mlx_draft"])]
    return [sys.executable, str(Path(__file__).resolve()), "--worker",
            "--prompt-file", str(prompt_file), "--gen-tokens", str(args.gen_tokens),
            "--threads", str(args.threads), "--gguf", str(args.gguf), "--pred", str(cfg["pred"])]


def wait_for(path, seconds):
    """True once path is an executable file (heron may be being rebuilt), within seconds."""
    deadline = time.time() + seconds
    while not os.access(path, os.X_OK):
        if time.time() > deadline:
            return False
        time.sleep(5)
    return True


def run_config(cfg, args, prompt_file, env):
    """One run; returns (stats dict or None, answer text, peak RSS MiB, error message)."""
    cmd = config_cmd(cfg, args, prompt_file)
    attempts = 2 if cfg["engine"] == "heron" else 1
    for attempt in range(attempts):
        if cfg["engine"] == "heron" and not wait_for(args.heron, args.heron_wait):
            return None, "", 0.0, f"{args.heron} missing for {args.heron_wait:.0f}s"
        try:
            rc, out, err, rss = bg.run_child(cmd, env, args.timeout)
        except OSError as e:  # the binary vanished between the check and the exec
            rc, out, err, rss = "exec failed", "", str(e), 0.0
        stats = bg.last_json_line(err if cfg["engine"] == "heron" else out)
        if rc == 0 and stats is not None:
            if cfg["engine"] == "heron":
                text = out[:-1] if out.endswith("\n") else out  # heron ends the answer's line
            else:
                text = stats.pop("text")
            return stats, text, rss, None
        tail = " | ".join((err or out).strip().splitlines()[-3:])
        crashed = isinstance(rc, int) and rc < 0
        msg = f"rc {rc}" + (" (killed by a signal: a crash?)" if crashed else "") + f": {tail}"
        if attempt + 1 < attempts:
            print(f"    {cfg['name']} failed ({msg}); retrying once", flush=True)
            time.sleep(10)
    return None, "", 0.0, msg


def per_round(stats, key):
    s = stats.get("speculation") or {}
    return s[key] / s["rounds"] if s.get("rounds") else None


def first_difference(a, b):
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n if len(a) != len(b) else None


def describe_difference(a, b):
    i = first_difference(a, b)
    return f"at char {i}: {a[i:i + 40]!r} vs {b[i:i + 40]!r}"


def fmt(v, spec, width):
    return f"{v:{width}{spec}}" if v is not None else f"{'-':>{width}s}"


def summarize(workload, configs, results, texts, notes):
    """Prints the table, ratios and text checks of one workload; returns its summary."""
    summary = {}
    print(f"\n== {workload} ==")
    print(f"{'config':12s} {'decode tok/s':>12s} {'tokens':>7s} {'prefill tok/s':>13s} "
          f"{'acc/round':>9s} {'depth/round':>11s} {'peak RSS MiB':>12s} {'runs':>4s}")
    for cfg in configs:
        runs = results[cfg["name"]]
        if not runs:
            continue

        def med(k):
            return statistics.median(s[k] for s in runs)

        spec = {k: sum((s.get("speculation") or {}).get(k, 0) for s in runs)
                for k in ("rounds", "drafted", "accepted")}
        row = {"decode_tps": med("decode_tps"), "decode_tokens": med("decode_tokens"),
               "prompt_tokens": med("prompt_tokens"), "prompt_tps": med("prompt_tps"),
               "peak_rss_mib_wait4": med("peak_rss_mib_wait4"), "runs": len(runs),
               "speculation_total": spec,
               "accepted_per_round": spec["accepted"] / spec["rounds"] if spec["rounds"] else None,
               "depth_per_round": spec["drafted"] / spec["rounds"] if spec["rounds"] else None}
        summary[cfg["name"]] = row
        print(f"{cfg['name']:12s} {row['decode_tps']:12.2f} {row['decode_tokens']:7.0f} "
              f"{row['prompt_tps']:13.1f} {fmt(row['accepted_per_round'], '.2f', 9)} "
              f"{fmt(row['depth_per_round'], '.2f', 11)} {row['peak_rss_mib_wait4']:12.0f} "
              f"{row['runs']:4d}")

    def tps(name):
        return summary[name]["decode_tps"] if name in summary else None

    ratios = {}
    fixed = [c["name"] for c in configs
             if c["engine"] == "heron" and c.get("depth") and not c.get("draft")]
    fixed = [n for n in fixed if n in summary]
    lookups = [c["name"] for c in configs if c.get("pred") and c["name"] in summary]
    best_fixed = max(fixed, key=tps) if fixed else None
    best_lookup = max(lookups, key=tps) if lookups else None
    for label, a, b in (("heron ctrl / heron plain", "heron ctrl", "heron plain"),
                        (f"heron ctrl / best fixed ({best_fixed})", "heron ctrl", best_fixed),
                        (f"heron ctrl / {best_lookup}", "heron ctrl", best_lookup),
                        ("heron plain / llama plain", "heron plain", "llama plain"),
                        ("heron self4 / heron plain", "heron self4", "heron plain"),
                        ("mlx self4 / mlx plain", "mlx self4", "mlx plain"),
                        ("heron self4 / mlx self4", "heron self4", "mlx self4"),
                        ("heron ctrl / mlx plain", "heron ctrl", "mlx plain")):
        if b is not None and tps(a) and tps(b):
            ratios[label] = tps(a) / tps(b)
            print(f"{label}: x{ratios[label]:.2f}")

    # Correctness: greedy speculation must give plain decoding's text, token for token.
    mismatches = []
    heron = [c["name"] for c in configs if c["engine"] == "heron" and texts[c["name"]]]
    if heron:
        ref_name = "heron plain" if texts.get("heron plain") else heron[0]
        ref = texts[ref_name][0]
        for name in heron:
            for r, t in enumerate(texts[name]):
                if t != ref:
                    m = (f"MISMATCH ({workload}): {name} run {r + 1} differs from {ref_name} "
                         f"run 1 {describe_difference(t, ref)}")
                    mismatches.append(m)
                    print("!!! " + m)
        if not mismatches:
            n = sum(len(texts[name]) for name in heron)
            print(f"text check: heron's {n} answers ({len(heron)} configs) are identical "
                  f"({len(ref)} chars)")
    llama_plain = texts.get("llama plain") or []
    for name in lookups:
        for r, t in enumerate(texts[name]):
            if llama_plain and t != llama_plain[0]:
                notes.append(f"{workload}: llama.cpp {name} run {r + 1} text differs from "
                             f"llama plain {describe_difference(t, llama_plain[0])}")
    if heron and llama_plain:
        i = first_difference(texts[heron[0]][0], llama_plain[0])
        same = "identical" if i is None else f"agree on their first {i} chars"
        print(f"heron vs llama.cpp plain text (informational): {same}")
    prompt_counts = {n: r["prompt_tokens"] for n, r in summary.items()}
    if len(set(prompt_counts.values())) > 1:
        notes.append(f"{workload}: prompt token counts differ between engines: {prompt_counts}")
    return {"summary": summary, "ratios": ratios, "mismatches": mismatches}


def parse_ints(text):
    return [int(x) for x in text.split(",") if x.strip()]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--gen-tokens", type=int, default=200)
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--depths", type=parse_ints, default=[2, 4, 8],
                    help="heron fixed draft depths (default 2,4,8)")
    ap.add_argument("--llama-pred", type=parse_ints, default=[10],
                    help="llama.cpp num_pred_tokens values (default 10)")
    ap.add_argument("--no-llama", action="store_true", help="run heron only")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--gguf", type=Path, default=bg.DEFAULT_GGUF)
    ap.add_argument("--heron", type=Path, default=DEFAULT_HERON)
    ap.add_argument("--heron-wait", type=float, default=600,
                    help="seconds to wait for build/heron to reappear (it may be rebuilding)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per run")
    ap.add_argument("--json-out", type=Path, default=None, help="also write all results here")
    ap.add_argument("--head", type=Path, nargs="?", const=ROOT / "models/smollm2-135m-instruct-draft-head",
                    default=None, help="also heron with this draft head (default: the shipped "
                    "SmolLM2 head) at each depth and under the controller")
    ap.add_argument("--self-draft", action="store_true",
                    help="also heron with SmolLM2 as its own draft model at depth 4")
    ap.add_argument("--mlx-lm", action="store_true",
                    help="also mlx-lm plain and with SmolLM2 as its own draft (slow on CPUs)")
    ap.add_argument("--mlx-dir", type=Path, default=bg.DEFAULT_MLX)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--worker-mlx", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--mlx-draft", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--prompt-file", help=argparse.SUPPRESS)
    ap.add_argument("--pred", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.worker:
        return worker_llamacpp(args)
    if args.worker_mlx:
        return worker_mlx(args)

    workloads = [w.strip() for w in args.workloads.split(",") if w.strip()]
    for w in workloads:
        if w not in WORKLOADS:
            raise SystemExit(f"unknown workload {w}; choose from {WORKLOADS}")
    notes = []
    load_start = os.getloadavg()
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in load_start)}", flush=True)
    if load_start[0] > 0.5:
        notes.append(f"the machine was busy at the start (1-minute load {load_start[0]:.2f} on "
                     f"{os.cpu_count()} CPUs): timings are unreliable, llama.cpp's spinning "
                     f"threads suffer most")
        print("note: " + notes[-1], flush=True)

    env = dict(os.environ)
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[k] = str(args.threads)
    env["TOKENIZERS_PARALLELISM"] = "false"
    env.pop("HERON_SPECULATION", None)  # --speculation decides every heron run

    configs = make_configs(args)
    if args.mlx_lm and not (args.mlx_dir / "config.json").exists():
        print(f"converting {args.gguf.name} -> {args.mlx_dir} (tools/gguf_to_mlx.py)", flush=True)
        subprocess.run([sys.executable, str(ROOT / "tools/gguf_to_mlx.py"), "--gguf",
                        str(args.gguf), "--out", str(args.mlx_dir)], check=True, env=env)
    tmpdir = Path(tempfile.mkdtemp(prefix="heron-spec-bench-"))
    stores = {}
    for cfg in configs:
        if cfg["engine"] == "heron":
            stores[cfg["name"]] = tmpdir / ("store-" + cfg["name"].replace(" ", "-"))
            stores[cfg["name"]].mkdir()
    prompt_files = {}
    for w in workloads:
        prompt_files[w] = tmpdir / f"{w}.txt"
        prompt_files[w].write_text(PROMPTS[w])
    print(f"workloads {workloads}; generating {args.gen_tokens}; threads {args.threads}; "
          f"{args.runs} runs; configs {[c['name'] for c in configs]}", flush=True)

    results = {w: {c["name"]: [] for c in configs} for w in workloads}
    texts = {w: {c["name"]: [] for c in configs} for w in workloads}
    failed = set()
    for r in range(args.runs):
        k = r % len(configs)
        order = configs[k:] + configs[:k]
        for w in workloads:
            for cfg in order:
                if (w, cfg["name"]) in failed:
                    continue
                run_env = dict(env)
                if cfg["name"] in stores:
                    run_env["HERON_MODELS"] = str(stores[cfg["name"]])
                t0 = time.time()
                stats, text, rss, err = run_config(cfg, args, prompt_files[w], run_env)
                if stats is None:
                    msg = f"{w}: {cfg['name']} run {r + 1} failed ({err})"
                    print("  " + msg, flush=True)
                    notes.append(msg + "; its later runs skipped")
                    failed.add((w, cfg["name"]))
                    continue
                stats["peak_rss_mib_wait4"] = rss
                stats["wall_s"] = time.time() - t0
                results[w][cfg["name"]].append(stats)
                texts[w][cfg["name"]].append(text)
                acc, depth = per_round(stats, "accepted"), per_round(stats, "drafted")
                spec = (f"acc/round {acc:5.2f} depth {depth:5.2f}" if acc is not None
                        else f"{'':25s}")
                if stats.get("first_eos_at") is not None:
                    spec += f" | EOS at token {stats['first_eos_at']}"
                print(f"  run {r + 1} {w:5s} {cfg['name']:12s} "
                      f"prompt {stats['prompt_tokens']:4d} tok {stats['prompt_tps']:7.1f} tok/s | "
                      f"decode {stats['decode_tokens']:4d} tok {stats['decode_tps']:7.2f} tok/s | "
                      f"{spec} | RSS {rss:5.0f} MiB | {stats['wall_s']:5.1f}s wall", flush=True)

    report = {}
    for w in workloads:
        report[w] = summarize(w, configs, results[w], texts[w], notes)
        report[w]["runs"] = results[w]
        report[w]["texts"] = texts[w]
    costs = {}
    if "heron ctrl" in stores:
        for f in sorted((stores["heron ctrl"] / "speculation").glob("*.json")):
            costs[f.name] = json.loads(f.read_text())
    if costs:
        print("\nheron ctrl learned costs (seconds):")
        for name, c in costs.items():
            print(f"  {name[:16]}…: {json.dumps(c)}")
    load_end = os.getloadavg()
    print(f"\nload average at end: {' '.join(f'{x:.2f}' for x in load_end)}")
    for note in notes:
        print("note: " + note)
    mismatches = [m for w in workloads for m in report[w]["mismatches"]]
    if mismatches:
        print(f"!!! {len(mismatches)} MISMATCH(ES): heron speculation changed greedy output")
    if args.json_out:
        args.json_out.write_text(json.dumps({
            "workloads": report, "notes": notes, "controller_costs": costs,
            "loadavg_start": load_start, "loadavg_end": load_end,
            "gen_tokens": args.gen_tokens, "threads": args.threads, "runs": args.runs,
            "prompts": {w: PROMPTS[w] for w in workloads}}, indent=1) + "\n")
    shutil.rmtree(tmpdir, ignore_errors=True)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
