"""`heron serve` under duress: clients that leave, runners that die, two models at once."""
import concurrent.futures
import os
import re
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


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def busy_seconds(pid, over):
    """CPU seconds `pid` uses in the next `over` seconds."""
    before = cpu_seconds(pid)
    time.sleep(over)
    return cpu_seconds(pid) - before


LONG = {"model": "default", "prompt": STORY, "options": {"temperature": 0, "num_predict": 2000}}


def open_long_stream(serve, client, kind):
    """A long greedy answer streamed through the real client; returns (stream, its close)."""
    if kind == "ollama":
        stream = client.generate(model="default", prompt=STORY, stream=True,
                                 options={"temperature": 0, "num_predict": 2000})
        return stream, stream.close
    oai = openai.OpenAI(base_url=serve.url + "/v1", api_key="unused", timeout=120, max_retries=0)
    stream = oai.chat.completions.create(model="default", stream=True, temperature=0, max_tokens=2000,
                                         messages=[{"role": "user", "content": STORY}])
    return iter(stream), stream.close


@pytest.mark.parametrize("kind", ["ollama", "openai"])
def test_client_disconnect_frees_the_runner(serve, client, default_model, kind):
    client.generate(model="default", prompt="hi", options={"num_predict": 1})  # loaded
    pid = runner_pid_for(serve, default_model.resolve())
    start = time.time()
    client.generate(model="default", prompt="Say hi.", options={"num_predict": 3})
    alone = time.time() - start  # what the queued request costs by itself (slow under ASan)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        stream, close = open_long_stream(serve, client, kind)
        for _ in range(3):
            next(stream)
        assert busy_seconds(pid, 0.5) > 0.05  # the runner is decoding (~2000 tokens: ~45 s here)
        queued = pool.submit(lambda: (client.generate(model="default", prompt="Say hi.",
                                                      options={"num_predict": 3}), time.time()))
        time.sleep(0.5)
        assert not queued.done()  # it waits behind the long request
        left = time.time()
        close()  # the client leaves mid-stream
        # The queued request starts at once...
        r, finished = queued.result(timeout=60)
        assert r.done and finished - left < alone + 4
    # ...and the runner does no more work for the one that left.
    assert busy_seconds(pid, 1.0) < 0.25


@pytest.mark.parametrize("path,body", [
    ("/api/generate", {"model": "default", "prompt": STORY, "stream": False,
                       "options": {"temperature": 0, "num_predict": 2000}}),
    ("/v1/chat/completions", {"model": "default", "max_tokens": 2000, "temperature": 0,
                              "messages": [{"role": "user", "content": STORY}]}),
])
def test_non_streaming_client_that_leaves_frees_the_runner(serve, client, default_model, path, body):
    client.generate(model="default", prompt="hi", options={"num_predict": 1})  # loaded
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(serve.url + path, json=body, timeout=1.5)  # gives up mid-generation
    # Were the first request still running, this one would wait for ~2000 tokens.
    start = time.time()
    r = client.generate(model="default", prompt="Say hi.", options={"num_predict": 3})
    assert r.done and time.time() - start < 15
    assert busy_seconds(runner_pid_for(serve, default_model.resolve()), 1.0) < 0.25


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


def test_runner_killed_during_a_non_streaming_request(serve, client, default_model):
    client.generate(model="default", prompt="hi", options={"num_predict": 1})
    pid = runner_pid_for(serve, default_model.resolve())
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        answer = pool.submit(client.generate, model="default", prompt=STORY,
                             options={"temperature": 0, "num_predict": 2000})
        while busy_seconds(pid, 0.2) < 0.05:  # until it decodes
            assert not answer.done()
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(ollama.ResponseError) as e:
            answer.result(timeout=60)
    assert e.value.status_code == 500 and "stopped unexpectedly" in str(e.value)
    assert client.generate(model="default", prompt="hi", options={"num_predict": 2}).done


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


@pytest.mark.parametrize("name,value", [("HERON_MAX_MEMORY", "lots"), ("HERON_MAX_QUEUE", "0"),
                                        ("HERON_MAX_QUEUE", "many"), ("HERON_NUM_PARALLEL", "0"),
                                        ("HERON_NUM_PARALLEL", "four")])
def test_bad_limits_stop_serve(heron_bin, name, value):
    r = subprocess.run([str(heron_bin), "serve"], capture_output=True, text=True, timeout=30,
                       env=dict(os.environ, **{name: value}))
    assert r.returncode == 2 and name in r.stderr


def test_requests_queue_in_arrival_order(serve, client):
    client.generate(model="default", prompt="hi", options={"num_predict": 1})  # loaded
    finished = []

    def one(i):
        client.generate(model="default", prompt=f"Count to {i + 3}.", options={"temperature": 0, "num_predict": 8})
        finished.append(i)

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        with httpx.stream("POST", serve.url + "/api/generate", json=LONG, timeout=60) as r:
            lines = r.iter_lines()  # kept: a dropped line iterator closes the connection
            next(lines)
            futures = []
            for i in range(4):
                futures.append(pool.submit(one, i))
                time.sleep(0.3)  # they arrive in order while the long request holds the model
            assert not finished  # all four wait behind it
        for f in futures:  # leaving the stream lets the queue drain
            f.result(timeout=60)
    assert finished == [0, 1, 2, 3]


def test_full_queue_is_503_with_retry_after(heron_bin, tmp_path):
    with start_serve(heron_bin, tmp_path, HERON_MAX_QUEUE="1") as s:
        c = ollama.Client(host=s.url, timeout=120)
        oai = openai.OpenAI(base_url=s.url + "/v1", api_key="unused", timeout=120, max_retries=0)
        c.generate(model="default", prompt="hi", options={"num_predict": 1})
        with httpx.stream("POST", s.url + "/api/generate", json=LONG, timeout=60) as busy:
            lines = busy.iter_lines()  # kept: a dropped line iterator closes the connection
            next(lines)  # the one place in the queue is taken
            with pytest.raises(ollama.ResponseError) as e:
                c.generate(model="default", prompt="hi")
            assert e.value.status_code == 503 and "queue is full" in str(e.value)
            with pytest.raises(openai.InternalServerError) as e:
                oai.chat.completions.create(model="default", messages=[{"role": "user", "content": "hi"}])
            assert e.value.status_code == 503 and e.value.response.headers["retry-after"] == "1"
            assert e.value.body["type"] == "overloaded_error"
            r = httpx.post(s.url + "/api/chat", json={"model": "default", "messages": [{"role": "user", "content": "hi"}]})
            assert r.status_code == 503 and r.headers["retry-after"] == "1"
        for _ in range(50):  # closing the stream cancelled the long request: the place frees
            try:
                assert c.generate(model="default", prompt="hi", options={"num_predict": 1}).done
                break
            except ollama.ResponseError as e:
                assert e.status_code == 503
                time.sleep(0.1)
        else:
            pytest.fail("the queue stayed full")


def test_keep_alive_default_forever_and_zero(heron_bin, tmp_path, tiny_llama):
    tiny = str(tiny_llama.resolve())
    with start_serve(heron_bin, tmp_path, HERON_KEEP_ALIVE="1s") as s:
        c = ollama.Client(host=s.url, timeout=120)

        def loaded():
            return {m.model: m for m in c.ps().models}

        first = c.generate(model=tiny, prompt="hi", options={"num_predict": 1})
        again = c.generate(model=tiny, prompt="hi", options={"num_predict": 1})
        assert first.load_duration > 0 and again.load_duration < first.load_duration
        deadline = time.time() + 10  # HERON_KEEP_ALIVE=1s is the default: unloaded soon
        while tiny in loaded():
            assert time.time() < deadline, "the runner outlived HERON_KEEP_ALIVE"
            time.sleep(0.2)
        c.generate(model=tiny, prompt="hi", keep_alive=-1, options={"num_predict": 1})
        assert loaded()[tiny].expires_at.year > 2300
        time.sleep(2.5)
        assert tiny in loaded()  # negative: forever
        r = c.generate(model=tiny, prompt="hi", keep_alive=0, options={"num_predict": 2})
        assert r.done and r.eval_count > 0  # 0 with a prompt: answer, then unload
        assert tiny not in loaded()


def test_max_loaded_models_unloads_the_least_recently_used(heron_bin, tmp_path, tiny_llama):
    a, b, c3 = (str((tiny_llama.parent / n).resolve()) for n in ("tiny-llama", "tiny-qwen3", "tiny-llama3"))
    with start_serve(heron_bin, tmp_path, HERON_MAX_LOADED_MODELS="2") as s:
        c = ollama.Client(host=s.url, timeout=120)

        def use(model):
            c.generate(model=model, prompt="hi", options={"num_predict": 1})
            return {m.model for m in c.ps().models}

        use(a)
        use(b)
        assert use(a) == {a, b}  # b is now the least recently used
        assert use(c3) == {a, c3}
        assert use(b) == {c3, b}


def listening_addresses(pid):
    """(hex address, port) of the TCP sockets `pid` listens on."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = []
    for table in ("tcp", "tcp6"):
        for row in open(f"/proc/{pid}/net/{table}").read().splitlines()[1:]:
            f = row.split()
            if f[3] == "0A" and f[9] in inodes:  # LISTEN
                address, port = f[1].split(":")
                found.append((address, int(port, 16)))
    return found


def test_runners_listen_on_loopback_with_a_secret_from_the_environment(serve, client, tiny_llama,
                                                                      default_model):
    tiny = str(tiny_llama.resolve())
    client.generate(model=tiny, prompt="hi", options={"num_predict": 1})
    client.generate(model="default", prompt="hi", options={"num_predict": 1})
    seen = []
    for pid in (runner_pid_for(serve, tiny), runner_pid_for(serve, default_model.resolve())):
        [(address, port)] = listening_addresses(pid)
        assert address == "0100007F"  # 127.0.0.1 only
        environ = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
        [token] = [e.split(b"=", 1)[1].decode() for e in environ if e.startswith(b"HERON_RUNNER_TOKEN=")]
        assert re.fullmatch("[0-9a-f]{64}", token)
        assert token.encode() not in open(f"/proc/{pid}/cmdline", "rb").read()
        url = f"http://127.0.0.1:{port}/status"
        assert httpx.get(url).status_code == 401
        assert httpx.get(url, headers={"Authorization": f"Bearer {token}"}).json()["state"] == "ready"
        seen.append((port, token))
    assert seen[0][0] != seen[1][0] and seen[0][1] != seen[1][1]  # a port and a secret each
