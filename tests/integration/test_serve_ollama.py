"""`heron serve` through the unmodified `ollama` client: chat, generate, options, errors."""
import time

import httpx
import ollama
import pytest

GREEDY = {"temperature": 0}


@pytest.fixture(scope="module")
def client(serve):
    return ollama.Client(host=serve.url, timeout=120)


@pytest.fixture(scope="module")
def tiny(tiny_llama):
    return str(tiny_llama.resolve())


def test_root_version_tags(serve, client):
    assert httpx.get(serve.url + "/").text.endswith("is running")
    assert httpx.head(serve.url + "/").status_code == 200
    assert httpx.get(serve.url + "/api/version").json()["version"]
    names = [m.model for m in client.list().models]
    assert "smollm2:latest" in names


def test_generate_default_model(client):
    r = client.generate(model="default", prompt="What is the capital of France?",
                        options={**GREEDY, "num_predict": 32})
    assert "Paris" in r.response
    assert r.done and r.done_reason == "stop"
    assert r.prompt_eval_count > 0 and r.eval_count > 0
    assert r.total_duration >= r.prompt_eval_duration + r.eval_duration > 0


def test_chat_streaming_matches_non_streaming(client):
    messages = [{"role": "user", "content": "What is the capital of France?"}]
    whole = client.chat(model="default", messages=messages, options={**GREEDY, "num_predict": 32})
    parts = list(client.chat(model="default", messages=messages, stream=True,
                             options={**GREEDY, "num_predict": 32}))
    assert all(not p.done for p in parts[:-1]) and parts[-1].done
    assert "".join(p.message.content for p in parts) == whole.message.content
    assert whole.message.role == "assistant" and "Paris" in whole.message.content
    # The second request reuses the cached prompt but reports the whole prompt.
    assert parts[-1].prompt_eval_count == whole.prompt_eval_count


@pytest.mark.parametrize("stream", [False, True])
def test_tiny_model_generate_and_num_predict(client, tiny, stream):
    r = client.generate(model=tiny, prompt="hello", stream=stream, options={**GREEDY, "num_predict": 7})
    if stream:
        parts = list(r)
        r, text = parts[-1], "".join(p.response for p in parts)
    else:
        text = r.response
    assert r.done_reason == "length" and r.eval_count == 7
    assert text


def test_seeded_sampling_is_reproducible(client, tiny):
    def run(seed):
        return client.generate(model=tiny, prompt="once upon a time",
                               options={"temperature": 1.0, "seed": seed, "num_predict": 24}).response
    a, b, c = run(7), run(7), run(8)
    assert a == b
    assert a != c


def test_stop_strings_span_tokens_and_are_never_emitted(client):
    prompt = "Write a long story about a dragon."
    full = client.generate(model="default", prompt=prompt, options={**GREEDY, "num_predict": 40}).response
    words = full.split()
    stop = " ".join(words[8:10])  # several tokens, mid-text
    assert len(stop) > 4 and stop in full
    for stream in (False, True):
        r = client.generate(model="default", prompt=prompt, stream=stream,
                            options={**GREEDY, "num_predict": 40, "stop": [stop]})
        if stream:
            parts = list(r)
            text, last = "".join(p.response for p in parts), parts[-1]
        else:
            text, last = r.response, r
        assert text == full[: full.index(stop)]
        assert last.done_reason == "stop"


def test_logprobs(client, tiny):
    r = client.generate(model=tiny, prompt="hello", logprobs=True, top_logprobs=3,
                        options={**GREEDY, "num_predict": 5})
    assert len(r.logprobs) == 5
    for lp in r.logprobs:
        assert lp.logprob <= 0
        assert len(lp.top_logprobs) == 3
        values = [t.logprob for t in lp.top_logprobs]
        assert values == sorted(values, reverse=True)
        assert lp.logprob == pytest.approx(values[0], abs=1e-5)  # greedy picks the top token


def test_context_overflow_names_both_numbers(client, tiny):
    with pytest.raises(ollama.ResponseError) as e:
        client.generate(model=tiny, prompt="hello " * 400)
    assert e.value.status_code == 400
    assert "tokens, which does not fit the context length of 256" in str(e.value)
    with pytest.raises(ollama.ResponseError) as e:
        client.generate(model="default", prompt="hello " * 50, options={"num_ctx": 16})
    assert e.value.status_code == 400 and "context length of 16" in str(e.value)


def test_generation_stops_at_the_context_limit(client, tiny):
    r = client.generate(model=tiny, prompt="hello", raw=True, options={**GREEDY, "num_ctx": 20})
    assert r.done_reason == "length"
    assert r.prompt_eval_count + r.eval_count == 20


def test_long_answers_report_durations_in_nanoseconds(client):
    start = time.time()
    r = client.generate(model="default", prompt="Write a long story about a dragon.",
                        options={**GREEDY, "num_predict": 150})
    wall = time.time() - start
    assert r.eval_count == 150  # several seconds here: past 2^31 ns
    assert 0 < r.prompt_eval_duration + r.eval_duration <= r.total_duration <= wall * 1e9
    assert r.eval_duration >= 0.5 * wall * 1e9  # decoding is most of the time


def test_template_replaces_the_models(client, tiny):
    import jinja2

    template = "{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}\n{% endfor %}>"
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hello"}]
    rendered = jinja2.Environment().from_string(template).render(messages=messages)
    options = {**GREEDY, "num_predict": 5}
    templated = client.generate(model=tiny, prompt="hello", system="Be brief.", template=template,
                                options=options)
    raw = client.generate(model=tiny, prompt=rendered, raw=True, options=options)
    assert templated.response == raw.response
    assert templated.prompt_eval_count == raw.prompt_eval_count
    own = client.generate(model=tiny, prompt="hello", system="Be brief.", options=options)
    assert own.prompt_eval_count != templated.prompt_eval_count  # the model's ChatML differs
    with pytest.raises(ollama.ResponseError) as e:  # an Ollama (Go) template is no Jinja
        client.generate(model=tiny, prompt="hello", template="{{ .Prompt }}")
    assert e.value.status_code == 400


def test_unknown_model_is_404(client):
    with pytest.raises(ollama.ResponseError) as e:
        client.generate(model="no-such-model", prompt="hi")
    assert e.value.status_code == 404 and "no-such-model" in str(e.value)
    with pytest.raises(ollama.ResponseError) as e:
        client.chat(model="/nonexistent/model.gguf", messages=[{"role": "user", "content": "hi"}])
    assert e.value.status_code == 404


@pytest.mark.parametrize(
    "body, message",
    [
        ({"prompt": 5}, "prompt must be a string"),
        ({"stream": "yes"}, "stream must be a boolean"),
        ({"options": {"top_k": -1}}, "options.top_k must be between 0 and"),
        ({"options": {"temperature": "hot"}}, "options.temperature must be a number"),
        ({"options": {"temperature": -1}}, "options.temperature must be between 0"),
        ({"options": {"top_p": 0}}, "options.top_p must be greater than 0"),
        ({"options": {"num_ctx": 10**12}}, "options.num_ctx must be between 1 and"),
        ({"options": {"repeat_last_n": -2}}, "options.repeat_last_n must be between -1"),
        ({"options": {"min_p": 2}}, "options.min_p must be between 0 and 1"),
        ({"options": {"stop": [1]}}, "options.stop must be a string or an array of strings"),
        ({"options": "fast"}, "options must be an object"),
        ({"top_logprobs": 50}, "top_logprobs must be between 0 and 20"),
        ({"keep_alive": "soon"}, "keep_alive must be a duration"),
        ({"images": ["aGk="]}, "images are not supported"),
        ({"suffix": "end"}, "suffix"),
    ],
)
def test_bad_requests_are_400_naming_the_field(serve, tiny, body, message):
    r = httpx.post(serve.url + "/api/generate", json={"model": tiny, "prompt": "hi", **body}, timeout=60)
    assert r.status_code == 400, r.text
    assert message in r.json()["error"]


def test_malformed_json_and_nan(serve, tiny):
    r = httpx.post(serve.url + "/api/chat", content=b'{"model": "x", "messages": [', timeout=30)
    assert r.status_code == 400 and "invalid JSON" in r.json()["error"]
    r = httpx.post(serve.url + "/api/generate", timeout=30,
                   content=('{"model": "%s", "prompt": "hi", "options": {"temperature": NaN}}' % tiny).encode())
    assert r.status_code == 400 and "invalid JSON" in r.json()["error"]
    r = httpx.post(serve.url + "/api/chat", json={"model": tiny, "messages": [{"role": "robot", "content": "x"}]})
    assert r.status_code == 400 and "messages[0].role" in r.json()["error"]
    r = httpx.get(serve.url + "/api/nothing")
    assert r.status_code == 404


def test_show_ps_and_keep_alive_unload(client, tiny):
    assert client.show("default").details.format == "gguf"
    client.generate(model=tiny, prompt="hi", options={"num_predict": 1})
    loaded = [m.model for m in client.ps().models]
    assert tiny in loaded
    r = client.generate(model=tiny, keep_alive=0)
    assert r.done_reason == "unload"
    assert tiny not in [m.model for m in client.ps().models]
    r = client.generate(model=tiny)  # empty prompt: load only
    assert r.done_reason == "load" and tiny in [m.model for m in client.ps().models]


def test_keep_alive_expires(client, tiny):
    client.generate(model=tiny, prompt="hi", keep_alive="1s", options={"num_predict": 1})
    assert tiny in [m.model for m in client.ps().models]
    deadline = time.time() + 10
    while tiny in [m.model for m in client.ps().models]:
        assert time.time() < deadline, "the runner outlived its keep_alive"
        time.sleep(0.2)
