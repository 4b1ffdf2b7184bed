"""Tool calls and reasoning through the unmodified `ollama` and `openai` clients.

The runner emits scripted text (HERON_TEST_SCRIPTED_OUTPUT, a test-only switch read from
the environment heron serve starts with) through the real SmolLM2 tokenizer and the usual
detokenizer, so the server reads back exactly what a model of each family would write. The
syntax comes from the chat template: store models created with Qwen3's template (Hermes
<tool_call> JSON, <think>), Llama 3.2's (bare {"name", "parameters"} JSON), Qwen3.5's
(<function=...> XML), a GLM-style one (laguna: <arg_key>/<arg_value>), DeepSeek V3's and
Gemma 4's (<|tool_call>call:NAME{..})."""
import json
import os
import subprocess

import ollama
import openai
import pytest

from conftest import FIXTURES, start_serve

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Current weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]}}}]
ASK = [{"role": "user", "content": "What is the weather in Paris?"}]

HERMES_CALL = ('<think>\nThe user wants the weather.\n</think>\n\nLet me check.\n'
               '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>')
LLAMA3_CALL = '{"name": "get_weather", "parameters": {"city": "Paris"}}'
UNKNOWN_TOOL = '<tool_call>\n{"name": "delete_everything", "arguments": {}}\n</tool_call>'
BAD_JSON = '<tool_call>\n{"name": "get_weather", "arguments": {"city": }\n</tool_call>'
REASONED = '<think>\nTwo plus two is four.\n</think>\n\nThe answer is 4.'


# No Mistral template with [TOOL_CALLS] is among the fixtures: this one renders tools and
# past calls the way Mistral's do ([AVAILABLE_TOOLS], [TOOL_CALLS] + a JSON array).
MISTRAL_STYLE_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}{% if m.role == 'user' %}"
    "{% if tools %}[AVAILABLE_TOOLS]{{ tools|tojson }}[/AVAILABLE_TOOLS]{% endif %}"
    "[INST]{{ m.content }}[/INST]{% elif m.tool_calls %}[TOOL_CALLS]"
    "{{ m.tool_calls|map(attribute='function')|list|tojson }}{{ eos_token }}"
    "{% else %}{{ m.content }}{{ eos_token }}{% endif %}{% endfor %}")


def tokenizer_template(family):
    raw = subprocess.run(["zstd", "-dc", FIXTURES / "tokenizers" / family /
                          "tokenizer_config.json.zst"], capture_output=True, check=True).stdout
    return json.loads(raw)["chat_template"]


def ollama_template(name):
    return (FIXTURES / "templates" / "ollama" / name).read_text()


@pytest.fixture(scope="module")
def served(heron_bin, default_model, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tools")
    store, script = tmp / "models", tmp / "script.txt"
    script.write_text("")
    templates = {"qwen3-style": tokenizer_template("qwen3"),
                 "llama3-style": ollama_template("ollama-index-24-llama3-instruct.jinja"),
                 "qwen35-style": ollama_template("ollama-testdata-qwen38_chat_template.jinja"),
                 "glm-style": ollama_template("ollama-testdata-laguna_v2_chat_template.jinja2"),
                 "deepseek-style": tokenizer_template("deepseek_v3"),
                 "gemma4-style": ollama_template("ollama-testdata-gemma4_e2b_chat_template.jinja2"),
                 "mistral-style": MISTRAL_STYLE_TEMPLATE}
    for name, template in templates.items():
        modelfile = tmp / f"{name}.Modelfile"
        modelfile.write_text(f'FROM {default_model}\nTEMPLATE """{template}"""\n')
        done = subprocess.run([str(heron_bin), "create", name, "-f", str(modelfile)],
                              env={**os.environ, "HERON_MODELS": str(store)},
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    with start_serve(heron_bin, tmp, HERON_MODELS=str(store),
                     HERON_TEST_SCRIPTED_OUTPUT=str(script)) as s:
        yield s, script


@pytest.fixture
def say(served):
    """Sets what the runner answers next."""
    return lambda text: served[1].write_text(text)


@pytest.fixture(scope="module")
def oll(served):
    return ollama.Client(host=served[0].url)


@pytest.fixture(scope="module")
def oai(served):
    return openai.OpenAI(base_url=served[0].url + "/v1", api_key="unused", timeout=120,
                         max_retries=0)


def ollama_stream(oll, **kw):
    chunks = list(oll.chat(stream=True, **kw))
    text = "".join(c.message.content or "" for c in chunks)
    thinking = "".join(c.message.thinking or "" for c in chunks)
    calls = [tc for c in chunks for tc in (c.message.tool_calls or [])]
    return chunks, text, thinking, calls


def openai_stream(oai, **kw):
    """Reassembles a stream the way the openai client's users do: calls by index."""
    content, reasoning, calls, finish = "", "", {}, None
    for chunk in oai.chat.completions.create(stream=True, **kw):
        choice = chunk.choices[0]
        delta = choice.delta
        content += delta.content or ""
        reasoning += (delta.model_extra or {}).get("reasoning_content") or ""
        for tc in delta.tool_calls or []:
            slot = calls.setdefault(tc.index, {"id": None, "name": "", "arguments": ""})
            if tc.id:
                slot["id"] = tc.id
            if tc.function and tc.function.name:
                slot["name"] += tc.function.name
            if tc.function and tc.function.arguments:
                slot["arguments"] += tc.function.arguments
        finish = choice.finish_reason or finish
    return content, reasoning, [calls[i] for i in sorted(calls)], finish


# --- Ollama /api/chat ---------------------------------------------------------------------

def test_ollama_hermes_call_and_thinking(oll, say):
    say(HERMES_CALL)
    r = oll.chat(model="qwen3-style", messages=ASK, tools=TOOLS, think=True)
    assert r.message.thinking == "The user wants the weather."
    assert r.message.content == "Let me check.\n"
    assert [(c.function.name, dict(c.function.arguments)) for c in r.message.tool_calls] == \
        [("get_weather", {"city": "Paris"})]


def test_ollama_streams_the_call_in_one_chunk_after_the_text(oll, say):
    say(HERMES_CALL)
    chunks, text, thinking, calls = ollama_stream(oll, model="qwen3-style", messages=ASK,
                                                  tools=TOOLS, think=True)
    assert text == "Let me check.\n" and thinking == "The user wants the weather."
    assert [(c.function.name, dict(c.function.arguments)) for c in calls] == \
        [("get_weather", {"city": "Paris"})]
    with_call = [i for i, c in enumerate(chunks) if c.message.tool_calls]
    with_text = [i for i, c in enumerate(chunks) if c.message.content]
    assert len(with_call) == 1 and max(with_text) < with_call[0]
    assert chunks[-1].done


def test_ollama_llama3_call(oll, say):
    say(LLAMA3_CALL)
    for r in [oll.chat(model="llama3-style", messages=ASK, tools=TOOLS)]:
        assert r.message.content == ""
        assert r.message.tool_calls[0].function.name == "get_weather"
        assert dict(r.message.tool_calls[0].function.arguments) == {"city": "Paris"}
    _, text, _, calls = ollama_stream(oll, model="llama3-style", messages=ASK, tools=TOOLS)
    assert text == "" and [c.function.name for c in calls] == ["get_weather"]


@pytest.mark.parametrize("script", [UNKNOWN_TOOL, BAD_JSON])
def test_ollama_malformed_calls_stay_content(oll, say, script):
    say(script)
    r = oll.chat(model="qwen3-style", messages=ASK, tools=TOOLS)
    assert r.message.content == script and not r.message.tool_calls
    _, text, _, calls = ollama_stream(oll, model="qwen3-style", messages=ASK, tools=TOOLS)
    assert text == script and calls == []


def test_without_tools_or_a_call_syntax_the_text_is_content(oll, say):
    say(UNKNOWN_TOOL.replace("delete_everything", "get_weather"))
    r = oll.chat(model="qwen3-style", messages=ASK)  # no tools in the request
    assert "<tool_call>" in r.message.content and not r.message.tool_calls
    r = oll.chat(model="default", messages=ASK, tools=TOOLS)  # SmolLM2's template: no syntax
    assert "<tool_call>" in r.message.content and not r.message.tool_calls


# --- thinking on Ollama --------------------------------------------------------------------

def test_ollama_thinking_chat_generate_and_stream(oll, say):
    say(REASONED)
    r = oll.chat(model="qwen3-style", messages=ASK, think=True)
    assert (r.message.thinking, r.message.content) == ("Two plus two is four.", "The answer is 4.")
    _, text, thinking, _ = ollama_stream(oll, model="qwen3-style", messages=ASK)
    assert (thinking, text) == ("Two plus two is four.", "The answer is 4.")
    g = oll.generate(model="qwen3-style", prompt="2+2?", think=True)
    assert (g.thinking, g.response) == ("Two plus two is four.", "The answer is 4.")
    parts = list(oll.generate(model="qwen3-style", prompt="2+2?", stream=True))
    assert "".join(p.thinking or "" for p in parts) == "Two plus two is four."
    assert "".join(p.response for p in parts) == "The answer is 4."


def test_think_false_renders_the_template_without_thinking(oll, say):
    say("4")
    on = oll.chat(model="qwen3-style", messages=ASK, think=True)
    off = oll.chat(model="qwen3-style", messages=ASK, think=False)
    # Qwen3's enable_thinking=false writes an empty <think>\n\n</think>\n\n into the prompt.
    assert off.prompt_eval_count > on.prompt_eval_count
    assert off.message.content == "4" and not off.message.thinking


# --- OpenAI /v1/chat/completions ----------------------------------------------------------

def test_openai_hermes_call_and_reasoning(oai, say):
    say(HERMES_CALL)
    r = oai.chat.completions.create(model="qwen3-style", messages=ASK, tools=TOOLS)
    choice = r.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "Let me check.\n"
    assert choice.message.model_extra["reasoning_content"] == "The user wants the weather."
    [call] = choice.message.tool_calls
    assert call.id.startswith("call_") and call.type == "function"
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"city": "Paris"}


def test_openai_streamed_call_reassembles(oai, say):
    say(HERMES_CALL)
    content, reasoning, calls, finish = openai_stream(oai, model="qwen3-style", messages=ASK,
                                                      tools=TOOLS)
    assert (content, reasoning, finish) == ("Let me check.\n", "The user wants the weather.",
                                            "tool_calls")
    assert len(calls) == 1 and calls[0]["id"].startswith("call_")
    assert calls[0]["name"] == "get_weather"
    assert json.loads(calls[0]["arguments"]) == {"city": "Paris"}


def test_openai_two_llama3_calls(oai, say):
    say('<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}; '
        '{"name": "get_weather", "parameters": {"city": "Oslo"}}')
    r = oai.chat.completions.create(model="llama3-style", messages=ASK, tools=TOOLS)
    assert r.choices[0].message.content is None
    assert [json.loads(c.function.arguments)["city"] for c in r.choices[0].message.tool_calls] == \
        ["Paris", "Oslo"]
    _, _, calls, finish = openai_stream(oai, model="llama3-style", messages=ASK, tools=TOOLS)
    assert finish == "tool_calls"
    assert [json.loads(c["arguments"])["city"] for c in calls] == ["Paris", "Oslo"]


@pytest.mark.parametrize("script", [UNKNOWN_TOOL, BAD_JSON])
def test_openai_malformed_calls_stay_content(oai, say, script):
    say(script)
    r = oai.chat.completions.create(model="qwen3-style", messages=ASK, tools=TOOLS)
    assert r.choices[0].message.content == script and not r.choices[0].message.tool_calls
    assert r.choices[0].finish_reason == "stop"
    content, _, calls, finish = openai_stream(oai, model="qwen3-style", messages=ASK, tools=TOOLS)
    assert (content, calls, finish) == (script, [], "stop")


def test_openai_reasoning_streams_apart_from_the_answer(oai, say):
    say(REASONED)
    r = oai.chat.completions.create(model="qwen3-style", messages=ASK)
    assert r.choices[0].message.content == "The answer is 4."
    assert r.choices[0].message.model_extra["reasoning_content"] == "Two plus two is four."
    content, reasoning, _, finish = openai_stream(oai, model="qwen3-style", messages=ASK)
    assert (content, reasoning, finish) == ("The answer is 4.", "Two plus two is four.", "stop")


# --- the other syntaxes, each through its real template ----------------------------------

OTHER_SYNTAXES = {
    # Qwen3.5's generation prompt opens <think>: the answer starts inside it.
    "qwen35-style": "The user asks for weather.\n</think>\n\nChecking.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n"
                    "</parameter>\n</function>\n</tool_call>",
    "glm-style": "Checking.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n"
                 "<arg_value>Paris</arg_value>\n</tool_call>",
    "deepseek-style": "Checking.\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>"
                      "get_weather\n```json\n{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜>"
                      "<｜tool▁calls▁end｜>",
    "gemma4-style": 'Checking.\n<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|>',
    "mistral-style": 'Checking.\n[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]',
}


@pytest.mark.parametrize("model", sorted(OTHER_SYNTAXES))
def test_other_syntaxes_on_both_apis(oll, oai, say, model):
    say(OTHER_SYNTAXES[model])
    _, text, thinking, calls = ollama_stream(oll, model=model, messages=ASK, tools=TOOLS)
    assert text == "Checking.\n"
    assert thinking == ("The user asks for weather." if model == "qwen35-style" else "")
    assert [(c.function.name, dict(c.function.arguments)) for c in calls] == \
        [("get_weather", {"city": "Paris"})]
    r = oai.chat.completions.create(model=model, messages=ASK, tools=TOOLS)
    assert r.choices[0].finish_reason == "tool_calls"
    [call] = r.choices[0].message.tool_calls
    assert (call.function.name, json.loads(call.function.arguments)) == ("get_weather",
                                                                         {"city": "Paris"})
