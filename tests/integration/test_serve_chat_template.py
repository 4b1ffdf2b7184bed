"""Chat prompts through the unmodified `ollama` and `openai` clients match transformers.

heron renders the model's own chat template on the server; the prompt's token count
(prompt_eval_count / usage.prompt_tokens) must equal the count of what jinja2 in
transformers' environment renders, tokenized by HF `tokenizers`:
- the default model (SmolLM2 GGUF, template from its metadata), conversations in each
  API's own shape (OpenAI content parts, developer role, tool calls with JSON-string
  arguments, tool results) against the transformers shape of the same conversation;
- a tiny Hugging Face model whose tokenizer_config.json has the list form of
  chat_template ("default": its own ChatML; "tool_use": Command R+'s tool_use template
  from tests/fixtures/templates/public/), so the tools must reach the template and pick
  "tool_use", against transformers' apply_chat_template.
"""
import json
import os
import re
import sys
from pathlib import Path

import httpx
import ollama
import openai
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather in a city.",
    "parameters": {"type": "object", "properties": {
        "location": {"type": "string", "description": "City name"},
        "unit": {"type": "string", "description": "Temperature unit", "enum": ["celsius", "fahrenheit"]}},
        "required": ["location"]}}}]

# The same conversation in transformers' shape (tool-call arguments as a dict).
CONVERSATION = [
    {"role": "system", "content": "You answer briefly."},
    {"role": "user", "content": "What is the weather in Paris?"},
    {"role": "assistant", "content": "", "tool_calls": [{"id": "call_abc", "type": "function", "function": {
        "name": "get_weather", "arguments": {"location": "Paris", "unit": "celsius"}}}]},
    {"role": "tool", "content": "sunny and mild", "tool_call_id": "call_abc"},
    {"role": "user", "content": "Thanks. And tomorrow?"},
]

# The OpenAI client's shape of it: developer role, content parts, JSON-string arguments.
OPENAI_CONVERSATION = [
    {"role": "developer", "content": [{"type": "text", "text": "You answer "}, {"type": "text", "text": "briefly."}]},
    {"role": "user", "content": "What is the weather in Paris?"},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "call_abc", "type": "function", "function": {
        "name": "get_weather", "arguments": json.dumps({"location": "Paris", "unit": "celsius"})}}]},
    {"role": "tool", "content": "sunny and mild", "tool_call_id": "call_abc"},
    {"role": "user", "content": [{"type": "text", "text": "Thanks. And tomorrow?"}]},
]


def heron_prompt_tokens(call, error_type):
    """Prompt tokens heron counted: from the stats, or from the context-overflow 400."""
    try:
        return call()
    except error_type as e:
        found = re.search(r"the prompt has (\d+) tokens", str(e))
        assert found, str(e)
        return int(found.group(1))


# --- the default model: SmolLM2's GGUF template ---------------------------------------

@pytest.fixture(scope="module")
def smollm2_reference(default_model):
    from gen_tokenizer_refs import hf_from_gguf
    from gguf import GGUFReader
    from tokenizers import Tokenizer
    from transformers.utils.chat_template_utils import render_jinja_template

    field = GGUFReader(str(default_model)).fields["tokenizer.chat_template"]
    source = bytes(field.parts[field.data[0]]).decode("utf-8")
    # SmolLM2's own pipeline splits digits (see tools/gen_tokenizer_refs.py: smollm2).
    converted, _ = hf_from_gguf(str(default_model))
    pipeline = json.loads(converted.to_str())
    pipeline["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Digits", "individual_digits": True},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}]}
    tok = Tokenizer.from_str(json.dumps(pipeline))

    def count(messages, tools=None):
        rendered = render_jinja_template([messages], tools=tools, chat_template=source,
                                         add_generation_prompt=True,
                                         bos_token="<|im_start|>", eos_token="<|im_end|>")
        text = rendered[0][0] if isinstance(rendered, tuple) else rendered
        text = text[0] if isinstance(text, list) else text
        return len(tok.encode(text, add_special_tokens=False).ids)
    return count


def test_ollama_chat_prompt_matches_transformers(serve, smollm2_reference):
    client = ollama.Client(host=serve.url, timeout=120)
    r = client.chat(model="default", messages=CONVERSATION, tools=TOOLS, think=False,
                    options={"temperature": 0, "num_predict": 1})
    assert r.prompt_eval_count == smollm2_reference(CONVERSATION, TOOLS)
    # Without a system message SmolLM2's template inserts its own: a different prompt.
    short = [{"role": "user", "content": "Hi there"}]
    r = client.chat(model="default", messages=short, options={"num_predict": 1})
    assert r.prompt_eval_count == smollm2_reference(short) > 20
    r = client.generate(model="default", system="You answer briefly.", prompt="Hi there",
                        options={"num_predict": 1})
    assert r.prompt_eval_count == smollm2_reference(
        [{"role": "system", "content": "You answer briefly."}, short[0]])


def test_openai_chat_prompt_matches_transformers(serve, smollm2_reference):
    client = openai.OpenAI(base_url=serve.url + "/v1", api_key="unused", timeout=120, max_retries=0)
    r = client.chat.completions.create(model="default", messages=OPENAI_CONVERSATION, tools=TOOLS,
                                       temperature=0, max_tokens=1)
    assert r.usage.prompt_tokens == smollm2_reference(CONVERSATION, TOOLS)


@pytest.mark.parametrize("message, error", [
    ({"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:,"}}]},
     "messages[0].content[0]: images are not supported"),
    ({"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {
        "name": "f", "arguments": "{oops"}}]}, "messages[0].tool_calls[0].function.arguments is not valid JSON"),
    ({"role": "robot", "content": "x"}, "messages[0].role must be"),
])
def test_bad_messages_are_400s_on_both_apis(serve, message, error):
    r = httpx.post(serve.url + "/v1/chat/completions", timeout=60,
                   json={"model": "default", "messages": [message]})
    assert r.status_code == 400 and error in r.json()["error"]["message"], r.text
    if not isinstance(message["content"], list) and "{oops" not in json.dumps(message):
        r = httpx.post(serve.url + "/api/chat", timeout=60, json={"model": "default", "messages": [message]})
        assert r.status_code == 400 and error in r.json()["error"], r.text


# --- a model with named templates: "tool_use" when tools are given ---------------------

TOOL_USE = ROOT / "tests" / "fixtures" / "templates" / "public" / "command-r-plus-tool_use.jinja"


def tiny_with_template(tiny_llama, out, template_of):
    """tiny-llama's files with tokenizer_config.json's chat_template replaced."""
    for f in tiny_llama.iterdir():
        if f.name != "tokenizer_config.json":
            os.symlink(f.resolve(), out / f.name)
    cfg = json.loads((tiny_llama / "tokenizer_config.json").read_text())
    cfg["chat_template"] = template_of(cfg["chat_template"])
    (out / "tokenizer_config.json").write_text(json.dumps(cfg))
    return out


@pytest.fixture(scope="module")
def named_templates_model(tiny_llama, tmp_path_factory):
    return tiny_with_template(tiny_llama, tmp_path_factory.mktemp("named-templates"), lambda own: [
        {"name": "default", "template": own},
        {"name": "tool_use", "template": TOOL_USE.read_text(encoding="utf-8")}])


@pytest.fixture(scope="module")
def mistral_nemo_model(tiny_llama, tmp_path_factory):
    nemo = ROOT / "tests" / "fixtures" / "templates" / "public" / "mistral-nemo-instruct-2407.jinja"
    return tiny_with_template(tiny_llama, tmp_path_factory.mktemp("mistral-nemo"),
                              lambda own: nemo.read_text(encoding="utf-8"))


def test_template_errors_are_400s_with_the_templates_message(serve, mistral_nemo_model):
    # Mistral Nemo's template raises_exception unless user/assistant turns alternate.
    body = {"model": str(mistral_nemo_model), "stream": False,
            "messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]}
    wanted = "conversation roles must alternate user/assistant/user/assistant/..."
    r = httpx.post(serve.url + "/api/chat", json=body, timeout=120)
    assert r.status_code == 400 and wanted in r.json()["error"], r.text
    r = httpx.post(serve.url + "/v1/chat/completions", json=body, timeout=120)
    assert r.status_code == 400 and wanted in r.json()["error"]["message"], r.text
    body["messages"][1]["role"] = "assistant"
    body["messages"].append({"role": "user", "content": "c"})
    r = httpx.post(serve.url + "/api/chat", json={**body, "options": {"num_predict": 1}}, timeout=120)
    assert r.status_code == 200, r.text


def test_tools_select_the_tool_use_template(serve, named_templates_model):
    from transformers import AutoTokenizer
    hf = AutoTokenizer.from_pretrained(str(named_templates_model))
    model = str(named_templates_model)

    def reference(messages, tools):
        ids = hf.apply_chat_template(messages, tools=tools, add_generation_prompt=True, tokenize=True)
        return len(ids["input_ids"] if isinstance(ids, dict) or hasattr(ids, "keys") else ids)

    client = ollama.Client(host=serve.url, timeout=120)
    messages = CONVERSATION[1:]
    with_tools = heron_prompt_tokens(lambda: client.chat(
        model=model, messages=messages, tools=TOOLS, options={"num_predict": 1}).prompt_eval_count,
        ollama.ResponseError)
    without = heron_prompt_tokens(lambda: client.chat(
        model=model, messages=messages, options={"num_predict": 1}).prompt_eval_count,
        ollama.ResponseError)
    assert with_tools == reference(messages, TOOLS)
    assert without == reference(messages, None)
    assert with_tools > without + 100  # the tool signature and Command R+'s preamble

    oai = openai.OpenAI(base_url=serve.url + "/v1", api_key="unused", timeout=120, max_retries=0)
    via_openai = heron_prompt_tokens(lambda: oai.chat.completions.create(
        model=model, messages=OPENAI_CONVERSATION[1:], tools=TOOLS, max_tokens=1).usage.prompt_tokens,
        openai.BadRequestError)
    assert via_openai == with_tools
