"""The issue's client checks on both models: the default (SmolLM2 GGUF) and a tiny Hugging
Face model, through the unmodified `ollama` and `openai` clients: chat and generate,
streaming or not; num_predict / max_tokens; logprobs (tiny: top_logprobs against mlx-lm);
seeded reproducibility; stop strings; context overflow; bad options."""
import math

import mlx.core as mx
import ollama
import openai
import pytest

# Greedy without Ollama's default repeat penalty: the same choice as OpenAI's defaults.
GREEDY = {"temperature": 0, "repeat_penalty": 1}
QUESTION = [{"role": "user", "content": "What is the capital of France?"}]
PROMPT = "Once upon a time, in a small village,"  # raw text both models go on with


@pytest.fixture(scope="module", params=["default", "tiny"])
def model(request, tiny_llama):
    return "default" if request.param == "default" else str(tiny_llama.resolve())


def ollama_call(client, api, model, stream, **kw):
    """(text, final response) of one /api/generate or /api/chat call."""
    if api == "chat":
        r = client.chat(model=model, messages=QUESTION, stream=stream, **kw)
        text = lambda p: p.message.content  # noqa: E731
    else:
        r = client.generate(model=model, prompt=PROMPT, stream=stream, **kw)
        text = lambda p: p.response  # noqa: E731
    if not stream:
        return text(r), r
    parts = list(r)
    assert all(not p.done for p in parts[:-1]) and parts[-1].done
    return "".join(text(p) for p in parts), parts[-1]


@pytest.mark.parametrize("api", ["generate", "chat"])
def test_ollama_stream_equals_whole_and_num_predict(oll, model, api):
    whole, r = ollama_call(oll, api, model, False, options={**GREEDY, "num_predict": 6})
    streamed, last = ollama_call(oll, api, model, True, options={**GREEDY, "num_predict": 6})
    assert streamed == whole and whole
    for x in (r, last):
        assert x.done_reason == "length" and x.eval_count == 6
        assert x.prompt_eval_count == r.prompt_eval_count > 0
        assert x.total_duration >= x.prompt_eval_duration + x.eval_duration > 0


@pytest.mark.parametrize("api", ["chat", "completions"])
def test_openai_stream_equals_whole_and_max_tokens(oai, model, api):
    if api == "chat":
        call = lambda **kw: oai.chat.completions.create(model=model, messages=QUESTION, **kw)  # noqa: E731
        text = lambda c: c.message.content if hasattr(c, "message") else c.delta.content or ""  # noqa: E731
    else:
        call = lambda **kw: oai.completions.create(model=model, prompt=PROMPT, **kw)  # noqa: E731
        text = lambda c: c.text  # noqa: E731
    whole = call(temperature=0, max_tokens=6)
    chunks = list(call(temperature=0, max_tokens=6, stream=True, stream_options={"include_usage": True}))
    assert "".join(text(c.choices[0]) for c in chunks if c.choices) == text(whole.choices[0])
    assert whole.choices[0].finish_reason == "length" and whole.usage.completion_tokens == 6
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "length"
    assert chunks[-1].usage.completion_tokens == 6
    assert chunks[-1].usage.prompt_tokens == whole.usage.prompt_tokens > 0


def check_top_logprobs(entries, n, top):
    assert len(entries) == n
    for e in entries:
        values = [t.logprob for t in e.top_logprobs]
        assert len(values) == top and values == sorted(values, reverse=True)
        assert e.logprob == pytest.approx(values[0], abs=1e-5)  # greedy picks the top token
        assert sum(math.exp(v) for v in values) <= 1 + 1e-4


def test_logprobs_on_both_apis_agree(oll, oai, model):
    g = oll.generate(model=model, prompt="hello", logprobs=True, top_logprobs=3,
                     options={**GREEDY, "num_predict": 4})
    check_top_logprobs(g.logprobs, 4, 3)
    c = oll.chat(model=model, messages=QUESTION, logprobs=True, top_logprobs=3,
                 options={**GREEDY, "num_predict": 4})
    check_top_logprobs(c.logprobs, 4, 3)
    o = oai.chat.completions.create(model=model, messages=QUESTION, temperature=0, max_tokens=4,
                                    logprobs=True, top_logprobs=3)
    check_top_logprobs(o.choices[0].logprobs.content, 4, 3)
    # The same prompt and greedy choices on both APIs: the same numbers.
    assert [e.logprob for e in o.choices[0].logprobs.content] == pytest.approx(
        [e.logprob for e in c.logprobs], abs=1e-5)


def test_top_logprobs_match_mlx_lm(oll, tiny_llama):
    """Raw log-softmax of the unmodified logits, top-K by probability, as mlx-lm computes it."""
    from mlx_lm import load

    ref_model, tok = load(str(tiny_llama))
    prompt, n, k = "the quick brown fox", 5, 4
    ids = tok.encode(prompt)
    r = oll.generate(model=str(tiny_llama.resolve()), prompt=prompt, raw=True, logprobs=True,
                     top_logprobs=k, options={**GREEDY, "num_predict": n})
    assert len(r.logprobs) == n
    for got in r.logprobs:
        logits = ref_model(mx.array([ids]))[0, -1].astype(mx.float32)
        lp = logits - mx.logsumexp(logits)
        order = mx.argsort(-lp).tolist()[:k]
        assert [t.token for t in got.top_logprobs] == [tok.decode([i]) for i in order]
        assert [t.logprob for t in got.top_logprobs] == pytest.approx([lp[i].item() for i in order],
                                                                      abs=2e-3)
        ids.append(order[0])


def test_seeded_sampling_is_reproducible(oll, oai, model):
    def ollama_run(seed):
        return oll.generate(model=model, prompt="Once upon a time",
                            options={"temperature": 1.0, "seed": seed, "num_predict": 16}).response

    def openai_run(seed):
        return oai.chat.completions.create(model=model, messages=QUESTION, seed=seed, temperature=1.0,
                                           max_tokens=16).choices[0].message.content
    for run in (ollama_run, openai_run):
        assert run(7) == run(7)
        assert run(7) != run(8)


def test_stop_strings_are_cut_on_both_apis(oll, oai, model):
    full = oll.chat(model=model, messages=QUESTION, options={**GREEDY, "num_predict": 24}).message.content
    # Four printable ASCII characters from the middle (the tiny model's random text also has
    # invalid UTF-8, sent as U+FFFD): on both models they span token boundaries.
    starts = [i for i in range(len(full) // 3, len(full) - 4)
              if full[i:i + 4].isprintable() and full[i:i + 4].isascii() and full[i:i + 4].strip()]
    assert starts, full
    stop = full[starts[len(starts) // 2]:][:4]
    want = full[: full.index(stop)]
    for stream in (False, True):
        text, last = ollama_call(oll, "chat", model, stream, options={**GREEDY, "num_predict": 24,
                                                                     "stop": [stop]})
        assert text == want and last.done_reason == "stop"
    r = oai.chat.completions.create(model=model, messages=QUESTION, temperature=0, max_tokens=24,
                                    stop=["zzzz", stop])
    assert r.choices[0].message.content == want and r.choices[0].finish_reason == "stop"


def test_context_overflow_names_both_numbers(oll, oai, model, tiny_llama):
    trained = 256 if model != "default" else 8192
    with pytest.raises(ollama.ResponseError) as e:
        oll.generate(model=model, prompt="hello " * 40, options={"num_ctx": 16})
    assert e.value.status_code == 400
    assert "tokens, which does not fit the context length of 16 tokens" in str(e.value)
    # num_ctx is capped at the trained length.
    with pytest.raises(ollama.ResponseError) as e:
        oll.generate(model=model, prompt="hello " * (trained + 10), options={"num_ctx": 10**6})
    assert e.value.status_code == 400 and f"context length of {trained} tokens" in str(e.value)
    with pytest.raises(openai.BadRequestError) as e:
        oai.completions.create(model=model, prompt="hello " * (trained + 10))
    assert "does not fit the context length of" in e.value.message


@pytest.mark.parametrize("options, message", [
    ({"top_k": -1}, "options.top_k must be between 0 and"),
    ({"temperature": -1}, "options.temperature must be between 0"),
    ({"num_ctx": 10**12}, "options.num_ctx must be between 1 and"),
    ({"top_p": 1.5}, "options.top_p must be between 0 and 1"),
])
def test_bad_options_through_the_ollama_client(oll, model, options, message):
    with pytest.raises(ollama.ResponseError) as e:
        oll.chat(model=model, messages=QUESTION, options=options)
    assert e.value.status_code == 400 and message in str(e.value)


@pytest.mark.parametrize("args, message", [
    ({"temperature": 2.5}, "temperature must be between 0 and 2"),
    ({"top_p": 0}, "top_p must be greater than 0"),
    ({"presence_penalty": 3}, "presence_penalty must be between -2 and 2"),
    ({"max_tokens": -5}, "max_tokens must be between 1 and"),
    ({"logprobs": True, "top_logprobs": 21}, "top_logprobs must be between 0 and 20"),
])
# (The clients themselves refuse to send NaN; test_serve_ollama sends it raw.)
def test_bad_options_through_the_openai_client(oai, model, args, message):
    with pytest.raises(openai.BadRequestError) as e:
        oai.chat.completions.create(model=model, messages=QUESTION, **args)
    assert message in e.value.message
    assert e.value.body["type"] == "invalid_request_error"
