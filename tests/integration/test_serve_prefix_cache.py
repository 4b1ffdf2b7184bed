"""The prefix cache through `heron serve`: conversations interleaved (one after another
and at once) answer exactly as they do cold, every API reports what it reused, /api/ps
shows the cache, and the disk tier brings a conversation back after the runner restarts."""
import concurrent.futures

import httpx
import openai
import pytest

from conftest import start_serve

GREEDY = {"temperature": 0, "num_predict": 6}
SYSTEM = " ".join(f"rule{i}" for i in range(20))  # a shared system prompt


@pytest.fixture(scope="module")
def cached_serve(heron_bin, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("prefix")
    with start_serve(heron_bin, tmp, HERON_CACHE_DIR=str(tmp / "cache")) as s:
        yield s


@pytest.fixture(scope="module")
def tiny(tiny_llama):
    return str(tiny_llama.resolve())


def prompt(user, turn):
    return f"{SYSTEM} user{user}: " + " ".join(f"q{user}x{t}" for t in range(turn + 1))


def generate(serve, model, text, **extra):
    """/api/generate's final object as JSON (the ollama client drops heron's cached_tokens)."""
    body = {"model": model, "prompt": text, "raw": True, "stream": False, "options": GREEDY, **extra}
    r = httpx.post(serve.url + "/api/generate", json=body, timeout=300)
    assert r.status_code == 200, r.text
    return r.json()


def test_interleaved_conversations_answer_as_cold(cached_serve, heron_bin, tmp_path_factory, tiny):
    order = [(u, t) for t in range(3) for u in range(4)]  # users 0..3, turn by turn
    prompts = [prompt(u, t) for u, t in order]
    with start_serve(heron_bin, tmp_path_factory.mktemp("cold")) as cold_serve:
        cold = []
        for p in prompts:  # each from a fresh runner: unloaded before every request
            generate(cold_serve, tiny, "", keep_alive=0)
            cold.append(generate(cold_serve, tiny, p)["response"])
    system_tokens = generate(cached_serve, tiny, SYSTEM)["prompt_eval_count"]
    counts = {}
    for (u, t), p, want in zip(order, prompts, cold):
        r = generate(cached_serve, tiny, p)
        assert r["response"] == want, (u, t)
        counts[u, t] = r["prompt_eval_count"]
        if t > 0:  # the conversation's earlier turn came back from the cache
            assert r["cached_tokens"] >= counts[u, t - 1] - 1, (u, t)
        else:  # the shared system prompt
            assert r["cached_tokens"] >= system_tokens - 1, (u, t)
    # At once: every answer is still the cold one.
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda p: generate(cached_serve, tiny, p)["response"], prompts))
    assert answers == cold
    ps = httpx.get(cached_serve.url + "/api/ps", timeout=30).json()
    (loaded,) = [m for m in ps["models"] if m["model"] == tiny]
    cache = loaded["prefix_cache"]
    assert cache["entries"] > 4 and cache["hits"] > 12 and cache["memory_bytes"] > 0
    assert cache["disk_bytes"] > 0 and cache["live_bytes"] > 0


def test_openai_reports_cached_tokens(cached_serve, tiny):
    client = openai.OpenAI(base_url=cached_serve.url + "/v1", api_key="none")
    p = prompt(9, 0)
    first = client.completions.create(model=tiny, prompt=p, max_tokens=4, temperature=0)
    again = client.completions.create(model=tiny, prompt=p, max_tokens=4, temperature=0)
    assert again.choices[0].text == first.choices[0].text
    assert again.usage.prompt_tokens == first.usage.prompt_tokens
    assert again.usage.prompt_tokens_details.cached_tokens == again.usage.prompt_tokens - 1


def test_the_disk_tier_survives_a_runner_restart(cached_serve, tiny):
    document = prompt(7, 12)
    first = generate(cached_serve, tiny, document)
    generate(cached_serve, tiny, "", keep_alive=0)  # the runner exits
    ps = httpx.get(cached_serve.url + "/api/ps", timeout=30).json()
    assert not [m for m in ps["models"] if m["model"] == tiny]
    again = generate(cached_serve, tiny, document)
    assert again["response"] == first["response"]
    # Everything up to the restore point 4 tokens before the prompt's end came from disk.
    assert again["cached_tokens"] == again["prompt_eval_count"] - 4
