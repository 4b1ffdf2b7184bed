"""`heron runner` on its own: token auth, endpoints, NDJSON framing, queue limit, prefix reuse."""
import json
import os
import subprocess
import time

import httpx
import pytest


@pytest.fixture(scope="module")
def runner(heron_bin, default_model):
    env = dict(os.environ, HERON_RUNNER_TOKEN="secret-for-tests")
    proc = subprocess.Popen([str(heron_bin), "runner", "--model", str(default_model), "--max-queue", "1"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line, proc.stderr.read()
        port = json.loads(line)["port"]
        yield httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120,
                           headers={"Authorization": "Bearer secret-for-tests"})
    finally:
        proc.kill()
        proc.wait(timeout=10)


def lines(response):
    return [json.loads(x) for x in response.iter_lines() if x]


def test_token_required(runner):
    r = httpx.get(str(runner.base_url) + "/status", headers={"Authorization": "Bearer wrong"})
    assert r.status_code == 401
    r = httpx.get(str(runner.base_url) + "/status")
    assert r.status_code == 401
    # Near misses: a prefix, an extension, another scheme, the token without "Bearer".
    for auth in ["Bearer secret-for-test", "Bearer secret-for-testsX", "Basic secret-for-tests",
                 "secret-for-tests", "Bearer"]:
        for method, path in [("GET", "/status"), ("POST", "/completion"), ("POST", "/tokenize")]:
            r = httpx.request(method, str(runner.base_url) + path, headers={"Authorization": auth},
                              json={"prompt": "hi"})
            assert r.status_code == 401 and r.json()["error"] == "missing or wrong runner token", auth


def test_runner_refuses_to_start_without_a_token(heron_bin, default_model):
    env = {k: v for k, v in os.environ.items() if k != "HERON_RUNNER_TOKEN"}
    for token_env in [env, dict(env, HERON_RUNNER_TOKEN="")]:
        r = subprocess.run([str(heron_bin), "runner", "--model", str(default_model)], env=token_env,
                           capture_output=True, text=True, timeout=60)
        assert r.returncode != 0 and "HERON_RUNNER_TOKEN must be set" in r.stderr


def test_status_tokenize_detokenize(runner):
    s = runner.get("/status").json()
    assert s["state"] == "ready" and s["context_length"] == 4096 and "im_start" in s["chat_template"]
    ids = runner.post("/tokenize", json={"content": "Hello world"}).json()["tokens"]
    assert ids and runner.post("/detokenize", json={"tokens": ids}).json()["content"] == "Hello world"


def test_invalid_utf8_body_is_a_400(runner):
    # Text inside a JSON body must be valid UTF-8 (RFC 8259): raw invalid bytes and lone
    # surrogate escapes are refused before the tokenizer sees them; the error is valid JSON.
    for body in [b'{"content": "a\xffb"}', b'{"content": "a\\udcffb"}']:
        r = runner.post("/tokenize", content=body, headers={"Content-Type": "application/json"})
        assert r.status_code == 400, r.text
        assert "invalid JSON in the request body" in r.json()["error"]
    r = runner.post("/completion", content=b'{"prompt": "\xc3", "options": {"num_predict": 1}}')
    assert r.status_code == 400 and "UTF-8" in r.json()["error"]
    # U+FFFD itself is ordinary text.
    assert runner.post("/tokenize", json={"content": "a\ufffdb"}).json()["tokens"] == [81, 24211, 82]


def test_completion_stream_and_prefix_reuse(runner):
    body = {"prompt": "The capital of France is", "options": {"temperature": 0, "num_predict": 5}}
    with runner.stream("POST", "/completion", json=body) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("application/x-ndjson")
        first = lines(r)
    with runner.stream("POST", "/completion", json=body) as r:
        second = lines(r)
    text = lambda ls: "".join(x["content"] for x in ls)  # noqa: E731
    assert text(first) == text(second)
    done = second[-1]
    assert done["done"] and done["done_reason"] == "length" and done["eval_count"] == 5
    # All but the last prompt token came from the cache; the count is still the whole prompt.
    assert done["cached_tokens"] == done["prompt_eval_count"] - 1
    tokens = runner.post("/tokenize", json={"content": "The capital of France is"}).json()["tokens"]
    with runner.stream("POST", "/completion", json={"tokens": tokens, "options": body["options"]}) as r:
        assert text(lines(r)) == text(first)


def test_longer_prompt_reuses_the_shared_prefix(runner):
    def complete(prompt):
        body = {"prompt": prompt, "options": {"temperature": 0, "num_predict": 5}}
        with runner.stream("POST", "/completion", json=body) as r:
            ls = lines(r)
        return "".join(x["content"] for x in ls), ls[-1]

    def tokens(text):
        return runner.post("/tokenize", json={"content": text}).json()["tokens"]

    first, longer = "The capital of France is", "The capital of France is a city where"
    assert tokens(longer)[: len(tokens(first))] == tokens(first)
    complete(first)
    text, done = complete(longer)
    assert done["cached_tokens"] == len(tokens(first))
    assert done["prompt_eval_count"] == len(tokens(longer))
    complete("Zebras")  # another conversation takes the live caches
    back_text, back = complete(longer)  # the first one comes back from the prefix cache
    assert back["cached_tokens"] == len(tokens(longer)) - 1 and back_text == text
    status = runner.get("/status").json()["cache"]
    assert status["memory_bytes"] > 0 and status["entries"] >= 3 and status["hits"] >= 2


def test_errors_before_streaming(runner):
    r = runner.post("/completion", json={"prompt": ""})
    assert r.status_code == 400 and r.json()["error"] == "the prompt is empty"
    r = runner.post("/completion", json={"tokens": [10**9]})
    assert r.status_code == 400 and "tokens must be integers in [0," in r.json()["error"]
    r = runner.post("/completion", json={"prompt": "hi " * 40, "options": {"num_ctx": 8}})
    assert r.status_code == 400 and "does not fit the context length of 8 tokens" in r.json()["error"]


def test_sequential_requests_never_find_the_queue_full(runner):
    # One queue place: each request's place must be free by the time its client sees "done".
    for i in range(40):
        r = runner.post("/completion", json={"prompt": f"Count {i}", "options": {"num_predict": 1}})
        assert r.status_code == 200, (i, r.text)


def test_full_queue_is_503_with_retry_after(runner):
    body = {"prompt": "Write a long story.", "options": {"temperature": 0, "num_predict": 400}}
    with runner.stream("POST", "/completion", json=body) as busy:
        lines = busy.iter_lines()  # kept: a dropped line iterator closes the connection
        next(lines)  # the one queue slot is taken
        r = runner.post("/completion", json={"prompt": "hi"})
        assert r.status_code == 503 and r.headers["retry-after"] == "1"
        start = time.time()  # /status never waits for the MLX thread
        assert runner.get("/status").json()["state"] == "busy" and time.time() - start < 1
    # Closing the stream cancelled the long request: the slot frees at once.
    for _ in range(50):
        r = runner.post("/completion", json={"prompt": "hi", "options": {"num_predict": 1}})
        if r.status_code == 200:
            break
        time.sleep(0.1)
    assert r.status_code == 200
