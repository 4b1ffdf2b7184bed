"""GET /metrics on `heron serve`, read with Prometheus' own parser: request counts by
endpoint and status, token counts equal to what the responses reported, the histograms,
the loaded model and its prefix cache, and the runner's queue while a request waits."""
import concurrent.futures
import json
import time

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from conftest import start_serve

GREEDY = {"temperature": 0, "num_predict": 8}
QUESTION = "What is the capital of France?"
MODEL = "default:latest"  # what the pool calls "default"


@pytest.fixture(scope="module")
def metrics_serve(heron_bin, tmp_path_factory):
    """A server of its own: the counts start at zero."""
    with start_serve(heron_bin, tmp_path_factory.mktemp("metrics")) as s:
        yield s


def scrape(serve):
    r = httpx.get(serve.url + "/metrics", timeout=60)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    samples = {}
    types = {}
    for family in text_string_to_metric_families(r.text):
        types[family.name] = family.type
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return samples, types


def value(samples, name, **labels):
    return samples.get((name, tuple(sorted(labels.items()))), 0)


def post(serve, path, body):
    r = httpx.post(serve.url + path, json=body, timeout=300)
    assert r.status_code == 200, r.text
    return r.json()


def stream_generate(serve, body):
    """A streamed /api/generate's final line."""
    with httpx.stream("POST", serve.url + "/api/generate", json={**body, "stream": True},
                      timeout=300) as r:
        assert r.status_code == 200
        lines = [json.loads(line) for line in r.iter_lines() if line]
    assert lines[-1]["done"]
    return lines[-1]


def test_metrics_count_what_the_responses_reported(metrics_serve):
    serve = metrics_serve
    samples, types = scrape(serve)
    assert value(samples, "heron_loaded_models") == 0
    assert types["heron_requests"] == "counter"
    assert types["heron_time_to_first_token_seconds"] == "histogram"
    assert types["heron_model_memory_bytes"] == "gauge"

    finals = [
        post(serve, "/api/chat", {"model": "default", "stream": False, "options": GREEDY,
                                  "messages": [{"role": "user", "content": QUESTION}]}),
        stream_generate(serve, {"model": "default", "prompt": QUESTION, "options": GREEDY}),
        # The same prompt again: the prefix cache supplies all but its last tokens.
        post(serve, "/api/generate", {"model": "default", "prompt": QUESTION, "stream": False,
                                      "options": GREEDY}),
    ]
    assert finals[2]["cached_tokens"] > 0
    usage = post(serve, "/v1/chat/completions", {
        "model": "default", "max_tokens": 1, "temperature": 0,
        "messages": [{"role": "user", "content": "Hi"}]})["usage"]
    assert httpx.post(serve.url + "/api/chat", json={
        "model": "no-such-model", "messages": [{"role": "user", "content": "x"}]}).status_code == 404
    assert httpx.get(serve.url + "/no/such/path").status_code == 404
    # The request guard stands in front of /metrics as of every route.
    assert httpx.get(serve.url + "/metrics", headers={"Host": "evil.example"}).status_code == 403

    samples, _ = scrape(serve)
    requests = {labels: v for (name, labels), v in samples.items()
                if name == "heron_requests_total"}
    assert requests == {
        (("endpoint", "/"), ("status", "200")): 1,  # start_serve's probe
        (("endpoint", "/metrics"), ("status", "200")): 1,  # the first scrape
        (("endpoint", "/api/chat"), ("status", "200")): 1,
        (("endpoint", "/api/generate"), ("status", "200")): 2,
        (("endpoint", "/v1/chat/completions"), ("status", "200")): 1,
        (("endpoint", "/api/chat"), ("status", "404")): 1,
        (("endpoint", "other"), ("status", "404")): 1,
        (("endpoint", "/metrics"), ("status", "403")): 1,
    }

    m = {"model": MODEL}
    assert all(f["model"] == MODEL for f in finals)
    prompt = sum(f["prompt_eval_count"] for f in finals) + usage["prompt_tokens"]
    generated = sum(f["eval_count"] for f in finals) + usage["completion_tokens"]
    cached = (sum(f["cached_tokens"] for f in finals)
              + usage["prompt_tokens_details"]["cached_tokens"])
    hits = sum(f["cached_tokens"] > 0 for f in finals) + (
        usage["prompt_tokens_details"]["cached_tokens"] > 0)
    assert value(samples, "heron_prompt_tokens_total", **m) == prompt
    assert value(samples, "heron_generated_tokens_total", **m) == generated
    assert value(samples, "heron_prompt_cached_tokens_total", **m) == cached > 0
    assert value(samples, "heron_prefix_cache_hits_total", **m) == hits >= 1
    reasons = {}
    for f in finals:
        reasons[f["done_reason"]] = reasons.get(f["done_reason"], 0) + 1
    reasons["length"] = reasons.get("length", 0) + 1  # max_tokens 1
    for reason, n in reasons.items():
        assert value(samples, "heron_completions_total", reason=reason, **m) == n

    # One first token per completion; a decode speed for each of two tokens or more (the
    # OpenAI one generated a single token).
    assert value(samples, "heron_time_to_first_token_seconds_count", **m) == 4
    timed = [f for f in finals if f["eval_count"] >= 2]
    assert timed and value(samples, "heron_decode_tokens_per_second_count", **m) == len(timed)
    speeds = sum((f["eval_count"] - 1) * 1e9 / f["eval_duration"] for f in timed)
    assert value(samples, "heron_decode_tokens_per_second_sum", **m) == pytest.approx(speeds)
    for hist in ("heron_time_to_first_token_seconds", "heron_decode_tokens_per_second"):
        buckets = sorted((float(dict(labels)["le"]), v) for (name, labels), v in samples.items()
                         if name == hist + "_bucket")
        counts = [v for _, v in buckets]
        assert counts == sorted(counts) and buckets[-1] == (float("inf"), value(
            samples, hist + "_count", **m))
    # Speculation: what the Ollama responses reported (the one-token OpenAI answer had none).
    for metric, key in (("rounds", "rounds"), ("drafted_tokens", "drafted"),
                        ("accepted_tokens", "accepted")):
        reported = sum(f.get("speculation", {}).get(key, 0) for f in finals)
        assert value(samples, f"heron_speculation_{metric}_total", **m) == reported

    # The loaded model, as /api/ps shows it.
    ps = httpx.get(serve.url + "/api/ps").json()["models"]
    assert value(samples, "heron_loaded_models") == 1 and len(ps) == 1
    assert value(samples, "heron_model_memory_bytes", **m) >= ps[0]["size"] > 0
    cache = ps[0]["prefix_cache"]
    for tier in ("live", "memory", "disk"):
        assert value(samples, "heron_prefix_cache_bytes", tier=tier, **m) == cache[f"{tier}_bytes"]
    assert value(samples, "heron_prefix_cache_bytes", tier="live", **m) > 0
    assert value(samples, "heron_prefix_cache_entries", **m) == cache["entries"] > 0
    assert value(samples, "heron_runner_queue_length", **m) == 0
    assert value(samples, "heron_requests_waiting_for_runner") == 0


def test_runner_queue_length_counts_a_waiting_request(metrics_serve):
    serve = metrics_serve
    long_body = {"model": "default", "prompt": "Write a long story about a dragon.",
                 "stream": True, "options": {"temperature": 0, "num_predict": 2000}}
    with httpx.stream("POST", serve.url + "/api/generate", json=long_body, timeout=300) as long:
        lines = long.iter_lines()
        next(lines)  # decoding now
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            queued = pool.submit(post, serve, "/api/generate", {
                "model": "default", "prompt": "Say hi.", "stream": False,
                "options": {"num_predict": 2}})
            deadline = time.time() + 30
            while value(scrape(serve)[0], "heron_runner_queue_length", model=MODEL) != 1:
                assert time.time() < deadline and not queued.done()
                time.sleep(0.1)
            # /api/ps shows the same per model: both requests hold it, one waits.
            ps = httpx.get(serve.url + "/api/ps").json()["models"]
            assert ps[0]["requests"] == {"active": 2, "waiting": 1}
            long.close()  # cancels the long request; the queued one runs
            assert queued.result(timeout=60)["done"]
    assert value(scrape(serve)[0], "heron_runner_queue_length", model=MODEL) == 0
    # The long request's lease ends as the server notices its client left: within moments.
    deadline = time.time() + 10
    while (requests := httpx.get(serve.url + "/api/ps").json()["models"][0]["requests"]) != {
            "active": 0, "waiting": 0}:
        assert time.time() < deadline, requests
        time.sleep(0.1)


def test_requests_waiting_for_runner_counts_a_request_without_room(heron_bin, tmp_path_factory,
                                                                   tiny_llama):
    tmp = tmp_path_factory.mktemp("metrics-room")
    with start_serve(heron_bin, tmp, HERON_MAX_LOADED_MODELS="1") as serve:
        long_body = {"model": "default", "prompt": "Write a long story about a dragon.",
                     "stream": True, "options": {"temperature": 0, "num_predict": 2000}}
        with httpx.stream("POST", serve.url + "/api/generate", json=long_body,
                          timeout=300) as long:
            lines = long.iter_lines()  # kept: a dropped iterator closes the stream
            next(lines)  # the default model is loaded and busy
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                other = pool.submit(post, serve, "/api/generate", {
                    "model": str(tiny_llama.resolve()), "prompt": "hello", "stream": False,
                    "options": {"num_predict": 2}})
                deadline = time.time() + 30
                while value(scrape(serve)[0], "heron_requests_waiting_for_runner") != 1:
                    assert time.time() < deadline and not other.done()
                    time.sleep(0.1)
                long.close()  # the default model goes idle, is unloaded, the tiny one loads
                assert other.result(timeout=120)["done"]
        samples, _ = scrape(serve)
        assert value(samples, "heron_requests_waiting_for_runner") == 0
        assert value(samples, "heron_loaded_models") == 1
        loaded = [dict(labels)["model"] for name, labels in samples
                  if name == "heron_model_memory_bytes"]
        assert len(loaded) == 1 and loaded[0] != MODEL  # the default model's series went
