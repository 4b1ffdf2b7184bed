#!/usr/bin/env python3
"""Soak and load test for `heron serve` (bounded, loopback only).

    .venv/bin/python tests/soak/soak.py                  # 5 minutes, 8 clients
    .venv/bin/python tests/soak/soak.py --duration 60    # a smoke

Starts its own `heron serve` on a free 127.0.0.1 port (private TMPDIR) and runs N client
threads against the default model until the duration is up, each picking at random:
chat or generate, streaming or not, a disconnect mid-stream, a malformed request
(bad JSON, wrong types, unknown model, over-limit options) or, rarely, an oversized
body. Once, at --kill-at of the run, the model runner is killed with SIGKILL.

At the end it prints a table and asserts:
  - the server is alive and answers;
  - every valid request was answered (200, or 503 "busy" with Retry-After), cleanly
    cancelled by the client, or, only around the runner kill, failed with a clean error;
    every malformed request got its 4xx;
  - after the kill, requests succeed again;
  - resident memory of the server and of the runner grew less than 5% after warm-up;
  - no leaked runner processes (one per loaded model; none after the server stops),
    file descriptors (idle count back to the warm baseline) or temporary files (only
    MLX's compiled-kernel cache may be in TMPDIR, unchanged since the warm-up);
  - p50 and p99 time to first token (streaming requests) are printed.
Exit status 0 only when every check passed.
"""
import argparse
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from procs import children, free_port  # noqa: E402

PROMPTS = ["Why is the sky blue?", "Name three fruits.", "Write a haiku about rain.",
           "What is 2+2?", "Tell me a story about a fox.", "Translate 'hello' to French."]


def rss_kib(pid):
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def fd_count(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.outcomes = Counter()     # (kind, outcome) -> n
        self.bad = []                 # (time, kind, what) for anything not clean
        self.ttft = []                # seconds, streaming requests
        self.after_kill_ok = 0        # valid requests that succeeded after the restart

    def add(self, kind, outcome, problem=None):
        with self.lock:
            self.outcomes[(kind, outcome)] += 1
            if problem:
                self.bad.append((time.time(), kind, problem))


class Soak:
    def __init__(self, args):
        self.args = args
        self.stats = Stats()
        self.stop = threading.Event()
        self.kill_window = None  # (start, end) during which valid requests may fail cleanly
        self.kill_time = None
        self.restart_time = None
        self.passed = False

    # --- the server -------------------------------------------------------------------
    def start_server(self):
        self.tmpdir = tempfile.mkdtemp(prefix="heron-soak-")
        self.log_path = Path(self.tmpdir).with_suffix(".log")
        port = free_port()
        env = dict(os.environ, HERON_HOST=f"127.0.0.1:{port}", TMPDIR=self.tmpdir,
                   HERON_KEEP_ALIVE="1h")
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen([self.args.heron_bin, "serve"], env=env, stdout=self.log,
                                     stderr=self.log)
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.time() + 30
        while True:
            try:
                httpx.get(self.url + "/", timeout=2)
                return
            except httpx.HTTPError:
                if self.proc.poll() is not None or time.time() > deadline:
                    raise SystemExit("heron serve did not start:\n" + self.log_path.read_text())
                time.sleep(0.1)

    def tmp_files(self):
        root = Path(self.tmpdir)
        return {str(p.relative_to(root)) for p in root.rglob("*") if not p.is_dir()}

    def runners(self):
        return [pid for pid, state in children(self.proc.pid) if state != "Z"]

    # --- one client ---------------------------------------------------------------------
    def valid_body(self, rng, api):
        opts = {"num_predict": rng.randint(4, self.args.max_tokens), "temperature": rng.choice([0, 0.7])}
        prompt = rng.choice(PROMPTS)
        if api == "chat":
            return "/api/chat", {"model": self.args.model, "options": opts,
                                 "messages": [{"role": "user", "content": prompt}]}
        if api == "generate":
            return "/api/generate", {"model": self.args.model, "prompt": prompt, "options": opts}
        if api == "openai_chat":
            return "/v1/chat/completions", {"model": self.args.model, "max_tokens": opts["num_predict"],
                                            "messages": [{"role": "user", "content": prompt}]}
        return "/v1/completions", {"model": self.args.model, "prompt": prompt,
                                   "max_tokens": opts["num_predict"]}

    def failure_ok(self, started):
        """A valid request may fail (cleanly) only if it overlapped the runner kill."""
        w = self.kill_window
        return w is not None and started <= w[1] and time.time() >= w[0]

    def valid(self, client, rng, stream, disconnect):
        api = rng.choice(["chat", "generate", "openai_chat", "openai_completion"])
        path, body = self.valid_body(rng, api)
        body["stream"] = stream
        if api.startswith("openai") and stream:
            body["stream_options"] = {"include_usage": True}
        kind = f"{api}{'/stream' if stream else ''}{'/disconnect' if disconnect else ''}"
        started = time.time()
        try:
            if not stream:
                r = client.post(path, json=body)
                self.finish(kind, started, r.status_code, r.headers, r.text, done=r.status_code == 200)
                return
            with client.stream("POST", path, json=body) as r:
                if r.status_code != 200:
                    self.finish(kind, started, r.status_code, r.headers, r.read().decode(errors="replace"))
                    return
                lines, first, done, error = 0, None, False, None
                for line in r.iter_lines():
                    if not line:
                        continue
                    data = line[6:] if line.startswith("data: ") else line
                    if data == "[DONE]":
                        done = True
                        break
                    j = json.loads(data)
                    if "error" in j:
                        error = j["error"]
                        break
                    text = (j.get("response") or j.get("message", {}).get("content")
                            or (j.get("choices") or [{}])[0].get("text")
                            or (j.get("choices") or [{}])[0].get("delta", {}).get("content"))
                    if text and first is None:
                        first = time.time() - started
                    if j.get("done"):
                        done = True
                    lines += 1
                    if disconnect and lines >= rng.randint(1, 3):
                        break  # leave mid-stream: closing the response drops the connection
                if first is not None:
                    with self.stats.lock:
                        self.stats.ttft.append(first)
                if disconnect and not done and error is None:
                    self.stats.add(kind, "cancelled by client")
                elif error is not None:
                    self.fail(kind, started, f"error line: {error}")
                elif done:
                    self.ok(kind, started)
                else:
                    self.fail(kind, started, "stream ended without a final line", clean=False)
        except (httpx.HTTPError, json.JSONDecodeError) as e:
            self.fail(kind, started, f"{type(e).__name__}: {e}", clean=False)

    def ok(self, kind, started):
        self.stats.add(kind, "ok")
        if self.restart_time and started > self.restart_time:
            with self.stats.lock:
                self.stats.after_kill_ok += 1

    def fail(self, kind, started, what, clean=True):
        if clean and self.failure_ok(started):
            self.stats.add(kind, "failed cleanly (runner killed)")
        else:
            self.stats.add(kind, "FAILED", what)

    def finish(self, kind, started, status, headers, text, done=False):
        if status == 200 and done:
            self.ok(kind, started)
        elif status == 503 and headers.get("retry-after"):
            self.stats.add(kind, "busy (503)")
        elif status >= 500 and ("stopped unexpectedly" in text or "lost the connection" in text):
            self.fail(kind, started, f"HTTP {status}: {text[:200]}")
        else:
            self.fail(kind, started, f"HTTP {status}: {text[:200]}", clean=False)

    MALFORMED = [
        ("/api/chat", "{not json", 400, "invalid JSON"),
        ("/api/generate", json.dumps({"model": "default", "prompt": 5}), 400, "prompt must be a string"),
        ("/api/generate", json.dumps({"model": "no-such-model", "prompt": "hi"}), 404, "not found"),
        ("/api/chat", json.dumps({"model": "default", "messages": [{"content": "hi"}]}), 400,
         "messages[0].role is required"),
        ("/api/generate", json.dumps({"model": "default", "prompt": "hi", "options": {"num_ctx": 1 << 21}}),
         400, "options.num_ctx"),
        ("/v1/chat/completions", json.dumps({"model": "default", "messages": []}), 400, "messages"),
        ("/v1/completions", json.dumps({"model": "default", "prompt": "x", "max_tokens": 0}), 400,
         "max_tokens"),
        ("/api/chat", "[]", 400, "must be a JSON object"),
    ]

    def malformed(self, client, rng):
        path, body, want, text = rng.choice(self.MALFORMED)
        started = time.time()
        try:
            r = client.post(path, content=body, headers={"Content-Type": "application/json"})
            if r.status_code == want and text in r.text:
                self.stats.add("malformed", f"{want} as expected")
            else:
                self.stats.add("malformed", "FAILED", f"{path} {body[:60]}: HTTP {r.status_code} {r.text[:200]}")
        except httpx.HTTPError as e:
            self.fail("malformed", started, f"{type(e).__name__}: {e}", clean=False)

    def oversized(self, client):
        body = b'{"model": "default", "prompt": "' + b"a" * (33 << 20) + b'"}'
        try:
            r = client.post("/api/generate", content=body, headers={"Content-Type": "application/json"})
            ok = r.status_code == 413 and "over the limit" in r.text
            self.stats.add("oversized", "413 as expected" if ok else "FAILED",
                           None if ok else f"HTTP {r.status_code} {r.text[:200]}")
        except httpx.HTTPError:
            # The server may answer 413 and close before reading the rest: a clean refusal.
            self.stats.add("oversized", "closed before reading (413)")

    def client_loop(self, seed):
        rng = random.Random(seed)
        with httpx.Client(base_url=self.url, timeout=self.args.request_timeout) as client:
            while not self.stop.is_set():
                x = rng.random()
                if x < 0.10:
                    self.malformed(client, rng)
                elif x < 0.11:
                    self.oversized(client)
                else:
                    stream = rng.random() < 0.6
                    self.valid(client, rng, stream, disconnect=stream and rng.random() < 0.3)

    # --- the run ----------------------------------------------------------------------
    def occupy_every_worker(self, connections=72):
        """Part of the warm-up: the server answers on a pool of 64 threads, each of which
        grows its stack and glibc's cache of its freed blocks the first time it serves.
        Holding more keep-alive connections than there are threads makes every one of them
        serve once, so that one-time growth falls before the memory baseline instead of
        looking like a leak. (The pool hands work to the worker idle last, so under the
        load only a few of them go on growing with the requests they serve.)"""
        port = int(self.url.rsplit(":", 1)[1])
        socks = []
        for _ in range(connections):
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.sendall(f"GET /api/version HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            socks.append(s)
        answered = 0
        for s in socks:
            try:
                answered += bool(s.recv(4096))
            except OSError:
                pass
            s.close()  # frees its worker for the connections still queued
        return answered

    def sample(self):
        runners = self.runners()
        return {"t": time.time(), "server_rss": rss_kib(self.proc.pid), "server_fds": fd_count(self.proc.pid),
                "runners": runners, "runner_rss": {pid: rss_kib(pid) for pid in runners}}

    def run(self):
        a = self.args
        self.start_server()
        # Load the model once, then take the idle baselines.
        httpx.post(self.url + "/api/generate", json={"model": a.model, "prompt": "hi", "stream": False,
                                                      "options": {"num_predict": 1}}, timeout=300)
        self.occupy_every_worker()
        time.sleep(1)
        idle_fds_start = fd_count(self.proc.pid)
        start = time.time()
        threads = [threading.Thread(target=self.client_loop, args=(i,), daemon=True) for i in range(a.clients)]
        for t in threads:
            t.start()
        warm = kill_sample = None
        samples = []
        killed_pid = None
        while time.time() - start < a.duration:
            time.sleep(1)
            s = self.sample()
            samples.append(s)
            elapsed = s["t"] - start
            if warm is None and elapsed >= a.warmup:
                warm = dict(s, tmp=self.tmp_files())
            if killed_pid is None and elapsed >= a.kill_at * a.duration and s["runners"]:
                kill_sample = s
                killed_pid = s["runners"][0]
                self.kill_window = (time.time(), time.time() + 10)
                self.kill_time = time.time()
                os.kill(killed_pid, signal.SIGKILL)
            if killed_pid and self.restart_time is None:
                fresh = [p for p in s["runners"] if p != killed_pid]
                if fresh:
                    self.restart_time = time.time()
                    self.kill_window = (self.kill_window[0], self.restart_time + 2)
        self.stop.set()
        for t in threads:
            t.join(timeout=a.request_timeout + 10)
        time.sleep(2)  # let the server close the last connections
        end = self.sample()
        self.passed = self.report(start, warm, kill_sample, killed_pid, samples, end, idle_fds_start)

    def report(self, start, warm, kill_sample, killed_pid, samples, end, idle_fds_start):
        a = self.args
        checks = []

        def check(name, passed, detail):
            checks.append((name, passed, detail))

        alive = self.proc.poll() is None
        try:
            alive = alive and httpx.get(self.url + "/", timeout=5).status_code == 200
        except httpx.HTTPError:
            alive = False
        check("server alive", alive, "answers GET /" if alive else "dead or not answering")

        valid = {k: n for k, n in self.stats.outcomes.items()}
        failures = sum(n for (k, o), n in valid.items() if o == "FAILED")
        check("every request answered or cleanly cancelled", failures == 0,
              f"{failures} failures" + (f"; first: {self.stats.bad[0][1]}: {self.stats.bad[0][2]}"
                                        if self.stats.bad else ""))

        if killed_pid:
            check("kill -9 of the runner survived", self.restart_time is not None and self.stats.after_kill_ok > 0,
                  f"runner {killed_pid} killed at {self.kill_time - start:.0f}s; "
                  f"{self.stats.after_kill_ok} requests succeeded after the restart")
        else:
            check("kill -9 of the runner survived", False, "no runner was running at the kill time")

        def growth(before, after):
            return (after - before) / before * 100 if before and after else None

        if warm:
            g = growth(warm["server_rss"], end["server_rss"])
            check("server RSS growth after warm-up < 5%", g is not None and g < 5,
                  f"{warm['server_rss']} -> {end['server_rss']} KiB ({g:+.1f}%)" if g is not None else "n/a")
            # The first runner until its kill; the replacement from its own warm-up to the end.
            if kill_sample and killed_pid in warm["runner_rss"]:
                g1 = growth(warm["runner_rss"][killed_pid], kill_sample["runner_rss"].get(killed_pid))
                check("runner RSS growth after warm-up < 5% (first runner, until the kill)",
                      g1 is not None and g1 < 5,
                      f"{warm['runner_rss'][killed_pid]} -> {kill_sample['runner_rss'].get(killed_pid)} KiB "
                      f"({g1:+.1f}%)" if g1 is not None else "n/a")
            if self.restart_time and end["runners"]:
                pid = end["runners"][0]
                later = [s for s in samples if pid in s["runner_rss"]
                         and s["t"] >= self.restart_time + a.warmup]
                if later:
                    g2 = growth(later[0]["runner_rss"][pid], end["runner_rss"].get(pid))
                    check("runner RSS growth after warm-up < 5% (replacement runner)",
                          g2 is not None and g2 < 5,
                          f"{later[0]['runner_rss'][pid]} -> {end['runner_rss'].get(pid)} KiB ({g2:+.1f}%)"
                          if g2 is not None else "n/a")
        else:
            check("server RSS growth after warm-up < 5%", False, "the run ended before the warm-up")

        zombies = [pid for pid, state in children(self.proc.pid) if state == "Z"]
        check("one runner per loaded model, no zombies", len(end["runners"]) <= 1 and not zombies,
              f"runners {end['runners']}, zombies {zombies}")
        check("no leaked file descriptors", end["server_fds"] is not None and idle_fds_start is not None
              and end["server_fds"] <= idle_fds_start + 2,
              f"idle before {idle_fds_start}, idle after {end['server_fds']}")

        # Stop the server: its runners must go with it, its TMPDIR must be empty.
        runner_pids = end["runners"]
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        time.sleep(1)
        left = [p for p in runner_pids if Path(f"/proc/{p}").exists()]
        for p in left:
            os.kill(p, signal.SIGKILL)
        check("no runner left after the server stops", not left, f"left: {left}" if left else "none left")
        # MLX keeps the CPU kernels it compiles in TMPDIR/mlx/<version>/cpu and reuses them;
        # that cache may exist, but nothing else, and nothing new after the warm-up.
        tmp_left = self.tmp_files()
        leaked = sorted(f for f in tmp_left if not f.startswith("mlx/") or f not in (warm or {}).get("tmp", set()))
        kernels = len(tmp_left) - len(leaked)
        check("no temporary files left", not leaked,
              f"leaked {leaked[:3]}" if leaked else f"none (MLX kernel cache: {kernels} files, from the warm-up)")
        shutil.rmtree(self.tmpdir, ignore_errors=True)

        timeline = [s for s in samples if warm and s["t"] >= warm["t"]]
        marks = [timeline[int(i * (len(timeline) - 1) / 4)] for i in range(5)] if timeline else []
        ttft = sorted(self.stats.ttft)
        p50 = statistics.median(ttft) if ttft else None
        p99 = ttft[min(len(ttft) - 1, int(len(ttft) * 0.99))] if ttft else None

        print()
        print(f"heron soak: {a.clients} clients, {a.duration:.0f} s, model {a.model}, warm-up {a.warmup:.0f} s")
        print(f"{'request kind':<40} {'outcome':<34} {'count':>6}")
        print("-" * 82)
        for (kind, outcome), n in sorted(self.stats.outcomes.items()):
            print(f"{kind:<40} {outcome:<34} {n:>6}")
        total = sum(self.stats.outcomes.values())
        print("-" * 82)
        print(f"{'total':<75} {total:>6}")
        if ttft:
            print(f"time to first token (streaming, n={len(ttft)}): p50 {p50 * 1000:.0f} ms, "
                  f"p99 {p99 * 1000:.0f} ms, max {ttft[-1] * 1000:.0f} ms")
        if marks:
            print("server RSS after warm-up (KiB): " + ", ".join(
                f"{m['t'] - start:.0f}s {m['server_rss']}" for m in marks) + f", end {end['server_rss']}")
        print()
        print(f"{'check':<70} {'result':<6} detail")
        print("-" * 110)
        for name, passed, detail in checks:
            print(f"{name:<70} {'pass' if passed else 'FAIL':<6} {detail}")
        for t, kind, what in self.stats.bad[:10]:
            print(f"  failure at {t - start:.1f}s {kind}: {what}")
        print(f"server log: {self.log_path}")
        return all(p for _, p, _ in checks) and bool(ttft)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--duration", type=float, default=300, help="seconds of load (default 300)")
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--warmup", type=float, default=None, help="seconds before the memory baseline "
                   "(default: a fifth of the duration, at most 60)")
    p.add_argument("--kill-at", type=float, default=0.6, help="fraction of the run at which the runner "
                   "is killed with SIGKILL (default 0.6)")
    p.add_argument("--model", default="default")
    p.add_argument("--max-tokens", type=int, default=24, help="largest num_predict of a request")
    p.add_argument("--request-timeout", type=float, default=120)
    p.add_argument("--heron-bin", default=os.environ.get("HERON_BIN", str(ROOT / "build" / "heron")))
    args = p.parse_args()
    if args.warmup is None:
        args.warmup = min(60.0, args.duration / 5)
    soak = Soak(args)
    ok = False
    try:
        soak.run()
        ok = soak.passed
    finally:
        if getattr(soak, "proc", None) and soak.proc.poll() is None:
            soak.proc.kill()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
