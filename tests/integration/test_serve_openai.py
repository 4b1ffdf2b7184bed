"""`heron serve` through the unmodified `openai` client: chat and legacy completions."""
import httpx
import openai
import pytest


@pytest.fixture(scope="module")
def client(serve):
    return openai.OpenAI(base_url=serve.url + "/v1", api_key="unused", timeout=120, max_retries=0)


@pytest.fixture(scope="module")
def tiny(tiny_llama):
    return str(tiny_llama.resolve())


QUESTION = [{"role": "user", "content": "What is the capital of France?"}]


def test_chat_completion_default_model(client):
    r = client.chat.completions.create(model="default", messages=QUESTION, temperature=0, max_tokens=32)
    assert r.object == "chat.completion" and r.id.startswith("chatcmpl-")
    choice = r.choices[0]
    assert "Paris" in choice.message.content and choice.message.role == "assistant"
    assert choice.finish_reason == "stop"
    assert r.usage.prompt_tokens > 0 and r.usage.completion_tokens > 0
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens


def test_chat_stream_with_usage_matches_non_stream(client):
    args = dict(model="default", messages=QUESTION, temperature=0, max_completion_tokens=32)
    whole = client.chat.completions.create(**args).choices[0].message.content
    chunks = list(client.chat.completions.create(**args, stream=True,
                                                 stream_options={"include_usage": True}))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == whole
    assert chunks[0].choices[0].delta.role == "assistant"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens > 0


def test_max_tokens_gives_length(client, tiny):
    r = client.chat.completions.create(model=tiny, messages=QUESTION, temperature=0, max_tokens=5)
    assert r.choices[0].finish_reason == "length" and r.usage.completion_tokens == 5


def test_seed_reproducible(client, tiny):
    def run(seed):
        return client.completions.create(model=tiny, prompt="once upon a time", seed=seed,
                                         temperature=1.0, max_tokens=24).choices[0].text
    assert run(3) == run(3)
    assert run(3) != run(4)


def test_stop_and_penalties(client):
    args = dict(model="default", messages=[{"role": "user", "content": "Write a long story about a dragon."}],
                temperature=0, max_tokens=40)
    full = client.chat.completions.create(**args).choices[0].message.content
    stop = " ".join(full.split()[6:8])
    r = client.chat.completions.create(**args, stop=[stop, "zzzz"])
    assert r.choices[0].message.content == full[: full.index(stop)]
    assert r.choices[0].finish_reason == "stop"
    penalised = client.chat.completions.create(**args, frequency_penalty=2.0, presence_penalty=2.0)
    assert penalised.choices[0].message.content != full


def test_chat_logprobs(client, tiny):
    r = client.chat.completions.create(model=tiny, messages=QUESTION, temperature=0, max_tokens=4,
                                       logprobs=True, top_logprobs=2)
    content = r.choices[0].logprobs.content
    assert len(content) == 4
    for entry in content:
        assert entry.logprob <= 0 and len(entry.top_logprobs) == 2
        assert entry.top_logprobs[0].logprob >= entry.top_logprobs[1].logprob
        assert entry.bytes is not None


def test_legacy_completion_stream_and_logprobs(client, tiny):
    r = client.completions.create(model=tiny, prompt="hello", temperature=0, max_tokens=6, logprobs=2)
    lp = r.choices[0].logprobs
    assert len(lp.tokens) == len(lp.token_logprobs) == 6
    assert r.object == "text_completion"
    chunks = list(client.completions.create(model=tiny, prompt="hello", temperature=0, max_tokens=6,
                                            stream=True))
    assert "".join(c.choices[0].text for c in chunks) == r.choices[0].text
    assert chunks[-1].choices[0].finish_reason == "length"


def test_models(client):
    ids = [m.id for m in client.models.list().data]
    assert "smollm2:latest" in ids
    assert client.models.retrieve("smollm2:latest").id == "smollm2:latest"
    with pytest.raises(openai.NotFoundError) as e:
        client.models.retrieve("nope")
    assert e.value.code == "model_not_found" and e.value.type == "invalid_request_error"


def test_errors(client, serve, tiny):
    with pytest.raises(openai.NotFoundError) as e:
        client.chat.completions.create(model="nope", messages=QUESTION)
    assert "nope" in e.value.message and e.value.code == "model_not_found"
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model=tiny, messages=QUESTION, n=2)
    assert "n must be 1" in e.value.message
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model=tiny, messages=QUESTION, temperature=3)
    assert "temperature must be between 0 and 2" in e.value.message
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model=tiny, messages=QUESTION, response_format={"type": "yaml"})
    assert "response_format.type must be text, json_object or json_schema" in e.value.message
    with pytest.raises(openai.BadRequestError) as e:
        client.completions.create(model=tiny, prompt="")
    assert e.value.body["message"] == "the prompt is empty"
    with pytest.raises(openai.BadRequestError) as e:
        client.completions.create(model=tiny, prompt="hello " * 400)
    assert "does not fit the context length of 256" in e.value.message
    r = httpx.post(serve.url + "/v1/chat/completions", content=b"{", timeout=30)
    assert r.status_code == 400 and r.json()["error"]["type"] == "invalid_request_error"
    r = httpx.post(serve.url + "/v1/chat/completions", json={"model": tiny, "messages": "hi"}, timeout=30)
    assert r.status_code == 400 and "messages must be" in r.json()["error"]["message"]


def test_stream_framing_and_errors_outside_the_handlers(serve, tiny):
    body = {"model": tiny, "messages": QUESTION, "max_tokens": 3, "stream": True}
    with httpx.stream("POST", serve.url + "/v1/chat/completions", json=body, timeout=60) as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        events = [line for line in r.iter_lines() if line]
    assert all(e.startswith("data: ") for e in events) and events[-1] == "data: [DONE]"
    # Refusals before any handler (unknown path, Host check, body limit) keep OpenAI's shape.
    r = httpx.get(serve.url + "/v1/nothing")
    assert r.status_code == 404 and "no such endpoint" in r.json()["error"]["message"]
    r = httpx.get(serve.url + "/v1/models", headers={"Host": "evil.example"})
    assert r.status_code == 403 and r.json()["error"]["type"] == "permission_error"
    r = httpx.post(serve.url + "/v1/completions", content=b" " * (33 << 20), timeout=60)
    assert r.status_code == 413 and "limit" in r.json()["error"]["message"]
