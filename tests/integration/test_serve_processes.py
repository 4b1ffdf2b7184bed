"""`heron serve` under duress: clients that leave, runners that die, two models at once."""
import concurrent.futures
import os
import signal
import subprocess
import time

import httpx
import ollama
import openai
import pytest
from conftest import start_serve

STORY = "Write a long story about a dragon."


@pytest.fixture(scope="module")
def client(serve):
    return ollama.Client(host=serve.url, timeout=120)


def runner_pid_for(serve, model_path):
    for pid in serve.runner_pids():
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        if b"runner" in cmd and str(model_path).encode() in cmd:
            return pid
    return None


def test_client_disconnect_frees_the_runner(serve, client):
    client.generate(model="default", prompt="hi", options={"num_predict": 1})  # loaded
    body = {"model": "default", "prompt": STORY, "options": {"temperature": 0, "num_predict": 2000}}
    with httpx.stream("POST", serve.url + "/api/generate", json=body, timeout=60) as r:
        lines = r.iter_lines()
        for _ in range(3):
            next(lines)
    # Were the first request still running, this one would wait for ~2000 tokens.
    start = time.time()
    r = client.generate(model="default", prompt="Say hi.", options={"num_predict": 3})
    assert r.done and time.time() - start < 15


@pytest.mark.parametrize("path,body", [
    ("/api/generate", {"model": "default", "prompt": STORY, "stream": False,
                       "options": {"temperature": 0, "num_predict": 2000}}),
    ("/v1/chat/completions", {"model": "default", "max_tokens": 2000, "temperature": 0,
                              "messages": [{"role": "user", "content": STORY}]}),
])
def test_non_streaming_client_that_leaves_frees_the_runner(serve, client, path, body):
    client.generate(model="default", prompt="hi", options={"num_predict": 1})  # loaded
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(serve.url + path, json=body, timeout=1.5)  # gives up mid-generation
    # Were the first request still running, this one would wait for ~2000 tokens.
    start = time.time()
    r = client.generate(model="default", prompt="Say hi.", options={"num_predict": 3})
    assert r.done and time.time() - start < 15


def test_runner_killed_mid_request_then_recovers(serve, client, default_model):
    client.generate(model="default", prompt="hi", options={"num_predict": 1})
    pid = runner_pid_for(serve, default_model.resolve())
    assert pid, serve.runner_pids()
    stream = client.generate(model="default", prompt=STORY, stream=True,
                             options={"temperature": 0, "num_predict": 2000})
    with pytest.raises(ollama.ResponseError) as e:
        for i, _ in enumerate(stream):
            if i == 2:
                os.kill(pid, signal.SIGKILL)
    assert "stopped unexpectedly" in str(e.value) and "signal 9" in str(e.value)
    r = client.generate(model="default", prompt="What is the capital of France?",
                        options={"temperature": 0, "num_predict": 16})
    assert "Paris" in r.response
    assert runner_pid_for(serve, default_model.resolve()) not in (None, pid)


def test_runner_killed_while_idle_is_replaced(serve, client, tiny_llama):
    tiny = str(tiny_llama.resolve())
    client.generate(model=tiny, prompt="hi", options={"num_predict": 1})
    pid = runner_pid_for(serve, tiny)
    os.kill(pid, signal.SIGKILL)
    time.sleep(0.2)
    r = client.generate(model=tiny, prompt="hi", options={"num_predict": 2})
    assert r.done and runner_pid_for(serve, tiny) != pid


def test_two_models_loaded_at_once(client, tiny_llama):
    tiny = str(tiny_llama.resolve())
    client.generate(model=tiny, prompt="hi", options={"num_predict": 1})
    client.generate(model="default", prompt="hi", options={"num_predict": 1})
    loaded = {m.model for m in client.ps().models}
    assert {tiny, "default:latest"} <= loaded


def test_bad_model_file_fails_clearly(client, tmp_path):
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"GGUF" + b"\0" * 64)
    with pytest.raises(ollama.ResponseError) as e:
        client.generate(model=str(junk), prompt="hi")
    assert e.value.status_code == 500 and "failed to start" in str(e.value)


def test_openai_stream_reports_a_dead_runner(serve, client, default_model):
    oai = openai.OpenAI(base_url=serve.url + "/v1", api_key="unused", timeout=120, max_retries=0)
    client.generate(model="default", prompt="hi", options={"num_predict": 1})
    pid = runner_pid_for(serve, default_model.resolve())
    stream = oai.chat.completions.create(model="default", stream=True, temperature=0, max_tokens=2000,
                                         messages=[{"role": "user", "content": STORY}])
    with pytest.raises(openai.APIError) as e:
        for i, _ in enumerate(stream):
            if i == 2:
                os.kill(pid, signal.SIGKILL)
    assert "stopped unexpectedly" in e.value.message
    r = oai.chat.completions.create(model="default", max_tokens=2, messages=[{"role": "user", "content": "hi"}])
    assert r.choices[0].message.content is not None


def test_concurrent_requests_queue_and_all_finish(serve, tiny_llama):
    tiny = str(tiny_llama.resolve())
    body = {"model": tiny, "prompt": "hi", "stream": False, "options": {"temperature": 0, "num_predict": 30}}

    def one(_):
        return httpx.post(serve.url + "/api/generate", json=body, timeout=60).json()

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = list(pool.map(one, range(6)))
    assert all(r["done"] and r["eval_count"] == 30 for r in results)
    assert len({r["response"] for r in results}) == 1  # greedy: the same answer every time


def test_memory_limit_unloads_the_idle_model_first(heron_bin, tmp_path, tiny_llama, default_model):
    tiny = str(tiny_llama.resolve())
    # Room for the default model alone: loading it must unload the idle tiny model.
    limit = default_model.resolve().stat().st_size + 1
    with start_serve(heron_bin, tmp_path, HERON_MAX_MEMORY=str(limit)) as s:
        c = ollama.Client(host=s.url, timeout=120)
        c.generate(model=tiny, prompt="hi", options={"num_predict": 1})
        assert {m.model for m in c.ps().models} == {tiny}
        c.generate(model="default", prompt="hi", options={"num_predict": 1})
        assert {m.model for m in c.ps().models} == {"default:latest"}


def test_model_larger_than_the_memory_limit_is_refused(heron_bin, tmp_path):
    with start_serve(heron_bin, tmp_path, HERON_MAX_MEMORY="1MiB") as s:
        c = ollama.Client(host=s.url, timeout=120)
        with pytest.raises(ollama.ResponseError) as e:
            c.generate(model="default", prompt="hi")
        assert e.value.status_code == 500 and "HERON_MAX_MEMORY" in str(e.value)


def test_bad_memory_limit_stops_serve(heron_bin):
    r = subprocess.run([str(heron_bin), "serve"], capture_output=True, text=True, timeout=30,
                       env=dict(os.environ, HERON_MAX_MEMORY="lots"))
    assert r.returncode == 2 and "HERON_MAX_MEMORY" in r.stderr
