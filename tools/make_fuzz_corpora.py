#!/usr/bin/env python3
"""Seed corpora for the libFuzzer targets in fuzz/, made from the test fixtures.

    .venv/bin/python tools/make_fuzz_corpora.py OUT_DIR

Writes OUT_DIR/<target>/<name> files (rebuilt from scratch each run):
  gguf_header         small GGUF files written by MLX (mx.save_gguf): tensors of several
                      dtypes, metadata of every kind, and the tiny fixture's BPE vocabulary
                      as tokenizer.ggml.* (so the GGUF tokenizer path is reachable)
  safetensors_header  small safetensors files written by MLX, with and without metadata
  tokenizer_json      fixture tokenizer.json files (tiny BPE, Unigram, BPE with suffixes)
                      plus variants with other normalizers/pre-tokenizers/decoders,
                      each followed by NUL and a text to encode
  jinja_template      every template fixture (tests/fixtures/templates: features.json
                      snippets with their contexts, model templates with a chat),
                      as source NUL context-JSON
  api_request         Ollama and OpenAI request bodies
  runner_ndjson       runner streams as runner/ndjson.cpp writes them (first byte: piece size)
  modelfile           Modelfiles using every instruction, quoting style and comment form
  chat_output         model outputs with tool calls and <think> reasoning in each syntax
                      (first byte: syntax, thinking flags and piece size)
  json_schema         JSON schemas using every supported keyword, and a few unsupported
"""
import copy
import json
import shutil
import subprocess
import sys
from pathlib import Path

import mlx.core as mx

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "tests" / "fixtures"
MAX_SEED = 64 << 10  # larger seeds slow every run for little extra coverage


def write(out, target, name, data):
    if isinstance(data, str):
        data = data.encode()
    if len(data) > MAX_SEED:
        return
    d = out / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data)


def tiny_tokenizer():
    return json.loads((FIX / "models" / "tiny-llama" / "tokenizer.json").read_text())


def gguf_seeds(out, tmp):
    tok = tiny_tokenizer()
    vocab = sorted(tok["model"]["vocab"].items(), key=lambda kv: kv[1])
    merges = [m if isinstance(m, str) else " ".join(m) for m in tok["model"]["merges"]]
    tensors = {"a": mx.arange(8, dtype=mx.float32).reshape(2, 4), "b": mx.ones((3,), dtype=mx.float16)}
    cases = {
        "plain": ({"general.architecture": "llama", "general.name": "tiny"}, tensors),
        "numbers": ({"llama.context_length": mx.array(128, dtype=mx.uint32),
                     "llama.rope.freq_base": mx.array(10000.0, dtype=mx.float32),
                     "ids": mx.array([1, 2, 3], dtype=mx.int32)}, {"w": mx.zeros((2, 2), dtype=mx.float16)}),
        "tokenizer": ({"general.architecture": "llama", "tokenizer.ggml.model": "gpt2",
                       "tokenizer.ggml.pre": "smollm",
                       "tokenizer.ggml.tokens": [t for t, _ in vocab],
                       "tokenizer.ggml.merges": merges[:200],
                       "tokenizer.ggml.token_type": mx.array([3 if i < 3 else 1 for i in range(len(vocab))],
                                                             dtype=mx.int32),
                       "tokenizer.ggml.bos_token_id": mx.array(0, dtype=mx.uint32),
                       "tokenizer.ggml.eos_token_id": mx.array(2, dtype=mx.uint32)}, {"t": mx.zeros((1,))}),
        "spm": ({"tokenizer.ggml.model": "llama",
                 "tokenizer.ggml.tokens": ["<unk>", "<s>", "</s>", "\u2581", "\u2581a", "a", "b", "<0x0A>"],
                 "tokenizer.ggml.scores": mx.array([0, 0, 0, -1, -2, -3, -4, -5], dtype=mx.float32),
                 "tokenizer.ggml.token_type": mx.array([2, 3, 3, 1, 1, 1, 1, 6], dtype=mx.int32)},
                {"t": mx.zeros((1,))}),
    }
    for name, (meta, arrays) in cases.items():
        path = tmp / f"{name}.gguf"
        mx.save_gguf(str(path), arrays, meta)
        write(out, "gguf_header", name, path.read_bytes())


def safetensors_seeds(out, tmp):
    cases = {
        "plain": ({"x": mx.arange(6, dtype=mx.float32).reshape(2, 3)}, None),
        "dtypes": ({"f16": mx.ones((4,), dtype=mx.float16), "bf16": mx.ones((2, 2), dtype=mx.bfloat16),
                    "i32": mx.array([1, -2], dtype=mx.int32), "u8": mx.array([7], dtype=mx.uint8)},
                   {"format": "mlx"}),
        "scalar": ({"s": mx.array(3.0)}, {"note": "scalar"}),
    }
    for name, (arrays, meta) in cases.items():
        path = tmp / f"{name}.safetensors"
        mx.save_safetensors(str(path), arrays, meta) if meta else mx.save_safetensors(str(path), arrays)
        write(out, "safetensors_header", name, path.read_bytes())


def tokenizer_variants(tok):
    """The tiny BPE tokenizer with other pipeline stages, to reach their loaders."""
    v = {}
    t = copy.deepcopy(tok)
    t["normalizer"] = {"type": "Sequence", "normalizers": [
        {"type": "NFKC"}, {"type": "Lowercase"},
        {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]}
    t["pre_tokenizer"] = None
    t["decoder"] = {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
        {"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
    v["metaspace_style"] = t
    t = copy.deepcopy(tok)
    t["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": "\\p{N}{1,3}"}, "behavior": "Isolated", "invert": False},
        {"type": "Digits", "individual_digits": True}, {"type": "Whitespace"},
        {"type": "Punctuation", "behavior": "Isolated"}]}
    v["split_digits"] = t
    t = copy.deepcopy(tok)
    t["post_processor"] = {"type": "TemplateProcessing",
                           "single": [{"SpecialToken": {"id": "<|im_start|>", "type_id": 0}},
                                      {"Sequence": {"id": "A", "type_id": 0}}],
                           "pair": [], "special_tokens": {"<|im_start|>": {"id": "<|im_start|>", "ids": [1],
                                                                            "tokens": ["<|im_start|>"]}}}
    v["template_post"] = t
    t = copy.deepcopy(tok)
    t["model"] = {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100,
                  "vocab": {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "hello": 3, "##lo": 4, "he": 5, "world": 6}}
    t["normalizer"] = {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": True}
    t["pre_tokenizer"] = {"type": "BertPreTokenizer"}
    t["decoder"] = {"type": "WordPiece", "prefix": "##", "cleanup": True}
    t["added_tokens"] = []
    t["post_processor"] = None
    v["wordpiece"] = t
    return v


def tokenizer_seeds(out):
    text = "Hello world! <|im_start|>user\n123 4567 caf\u00e9 \u2581x \U0001F600 \t end"
    tok = tiny_tokenizer()
    sources = {"tiny_bpe": tok, **tokenizer_variants(tok)}
    for name in ["unigram", "bpe_suffix"]:
        raw = subprocess.run(["zstd", "-dc", str(FIX / "tokenizer" / f"{name}.tokenizer.json.zst")],
                             check=True, capture_output=True).stdout
        sources[name] = json.loads(raw)
    for name, t in sources.items():
        write(out, "tokenizer_json", name, json.dumps(t, ensure_ascii=False) + "\0" + text)


def jinja_seeds(out):
    features = json.loads((FIX / "templates" / "features.json").read_text())
    for i, f in enumerate(features):
        write(out, "jinja_template", f"feature_{i:03d}", f["source"] + "\0" + json.dumps(f["context"]))
    chat = json.loads((FIX / "templates" / "cases.json").read_text())
    contexts = list(chat.values())
    for i, path in enumerate(sorted((FIX / "templates").glob("*-*.json"))):
        t = json.loads(path.read_text())
        ctx = dict(contexts[i % len(contexts)], bos_token=t.get("bos_token", ""),
                   eos_token=t.get("eos_token", ""))
        write(out, "jinja_template", path.stem, t["source"] + "\0" + json.dumps(ctx))


def api_seeds(out):
    bodies = {
        "generate": {"model": "default", "prompt": "Why is the sky blue?", "system": "Be brief.",
                     "stream": False, "raw": False, "keep_alive": "5m",
                     "options": {"temperature": 0.7, "top_k": 40, "top_p": 0.9, "min_p": 0.05,
                                 "num_predict": 64, "num_ctx": 2048, "seed": 42, "stop": ["\n\n"],
                                 "repeat_penalty": 1.1, "repeat_last_n": 64, "presence_penalty": 0.5,
                                 "frequency_penalty": 0.2}},
        "chat": {"model": "smollm2:latest", "messages": [
            {"role": "system", "content": "You are terse."}, {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello."}, {"role": "tool", "content": "{}"}],
            "stream": True, "keep_alive": -1, "logprobs": True, "top_logprobs": 3, "think": False,
            "format": "", "images": []},
        "openai_chat": {"model": "default", "messages": [
            {"role": "developer", "content": [{"type": "text", "text": "Be kind."}]},
            {"role": "user", "content": "Count to 3"}], "max_tokens": 16, "temperature": 1.2,
            "top_p": 0.5, "stop": ["4", "four"], "n": 1, "seed": -7, "logprobs": True,
            "top_logprobs": 2, "stream": True, "stream_options": {"include_usage": True},
            "response_format": {"type": "text"}, "presence_penalty": -1.5, "frequency_penalty": 2},
        "openai_completion": {"model": "/abs/model.gguf", "prompt": ["Once upon"], "logprobs": 3,
                              "max_completion_tokens": 8, "best_of": 1, "echo": False, "suffix": ""},
        "options_edge": {"model": "m", "options": {"num_predict": -2, "top_k": 0, "num_ctx": 1,
                                                   "stop": "x", "seed": 18446744073709551615}},
    }
    for name, body in bodies.items():
        write(out, "api_request", name, json.dumps(body))


def ndjson_seeds(out):
    lp = {"id": 5, "token": " the", "bytes": [32, 116, 104, 101], "logprob": -0.25,
          "top_logprobs": [{"id": 5, "token": " the", "bytes": [32, 116, 104, 101], "logprob": -0.25},
                           {"id": 9, "token": " a", "bytes": [32, 97], "logprob": -1.5}]}
    done = {"content": "", "done": True, "done_reason": "stop", "prompt_eval_count": 12,
            "prompt_eval_duration": 1234567, "cached_tokens": 3, "eval_count": 2, "eval_duration": 7654321}
    streams = {
        "plain": [{"content": "Hello"}, {"content": " world"}, done],
        "logprobs": [{"content": " the", "logprobs": [lp]}, dict(done, done_reason="length")],
        "error": [{"content": "x"}, {"error": {"status": 500, "message": "out of memory"}}],
        "error_string": [{"error": "boom"}],
    }
    for i, (name, lines) in enumerate(streams.items()):
        body = "".join(json.dumps(x) + "\n" for x in lines)
        write(out, "runner_ndjson", name, bytes([i * 5 % 16]) + body.encode())


def modelfile_seeds(out):
    seeds = {
        "all": 'FROM ./model\nDRAFT ./draft.gguf\nPARAMETER temperature 0.7\nPARAMETER stop "<|end|>"\n'
               'PARAMETER stop "User:"\nPARAMETER num_ctx 4096\nTEMPLATE """{% for m in messages %}'
               '{{ m.content }}{% endfor %}"""\nSYSTEM "Be brief."\nMESSAGE user Hi\n'
               'MESSAGE assistant "Hello!"\nLICENSE """MIT\nline two"""\n',
        "case_comments": "# a comment\r\nfrom /abs/model.gguf\r\n  parameter TOP_K 40\r\nsystem hi\r\n",
        "multiline": 'FROM x\nSYSTEM """\nfirst\n  second\n"""\nPARAMETER seed 42\n',
    }
    for name, text in seeds.items():
        write(out, "modelfile", name, text.encode())


def chat_output_seeds(out):
    call = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
    seeds = {  # syntax: 0 none, 1 hermes, 2 llama3, 3 mistral, 4 qwen3-coder, 5 glm, 6 deepseek,
             # 7 harmony, 8 gemma4
        "hermes": (1, True, False,
                   f"<think>\nwhy\n</think>\n\nSure.\n<tool_call>\n{call}\n</tool_call>"),
        "hermes_bad": (1, False, False, '<tool_call>{"name": "x", "arguments": [}</tool_call> after'),
        "llama3": (2, False, False, '{"name": "f", "parameters": {"a": 1}}'),
        "llama3_tag": (2, False, False,
                       '<|python_tag|>{"name": "f", "parameters": {}}; {"name": "get_weather"}'),
        "mistral": (3, False, False, f"[TOOL_CALLS] [{call}]"),
        "mistral_named": (3, False, False,
                          '[TOOL_CALLS]f[ARGS]{"a": "b"}[TOOL_CALLS]get_weather[ARGS]{}'),
        "qwen3_coder": (4, True, False, "<tool_call>\n<function=f>\n<parameter=a>\n1\n"
                        "</parameter>\n</function>\n</tool_call>"),
        "glm": (5, False, False, "<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>x</arg_value>\n"
                "</tool_call>"),
        "deepseek": (6, False, False, "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>"
                     "f\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"),
        "opened_think": (0, True, True, "reasoning\n</think>\n\nanswer"),
        "harmony": (7, False, False, "<|channel|>analysis<|message|>why<|end|><|start|>assistant"
                    "<|channel|>commentary to=functions.f <|constrain|>json<|message|>{}<|call|>"),
        "gemma4": (8, False, False, 'Sure.<|tool_call>call:f{a:<|"|>x, y<|"|>,b:[1,true,null],'
                   'c:{d:2.5}}<tool_call|>'),
    }
    for name, (syntax, thinks, opened, text) in seeds.items():
        for piece in (0, 1, 3):
            first = syntax | thinks << 4 | opened << 5 | piece << 6
            write(out, "chat_output", f"{name}_{piece}", bytes([first]) + text.encode())


def json_schema_seeds(out):
    seeds = {
        "object": {"type": "object", "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 5},
            "age": {"type": "integer", "minimum": 0, "exclusiveMaximum": 150},
            "score": {"type": "number", "minimum": -1.5, "maximum": 2},
            "tags": {"type": "array", "items": {"enum": ["a", "b", 1, None]}, "maxItems": 3},
            "kind": {"const": {"x": [True]}}}, "required": ["name"],
            "additionalProperties": {"type": ["string", "null"]}},
        "tuple": {"prefixItems": [{"type": "boolean"}, {"anyOf": [{"type": "null"},
                                                                  {"oneOf": [{"type": "integer"}]}]}],
                  "items": False, "minItems": 1},
        "recursive": {"$defs": {"n": {"type": "object", "properties": {
            "kids": {"type": "array", "items": {"$ref": "#/$defs/n"}}}}}, "$ref": "#/$defs/n"},
        "strings": {"anyOf": [{"type": "string", "pattern": "^(?:[a-f\\d]{2}|x+)\\w*$"},
                              {"type": "string", "format": "date-time"},
                              {"type": "string", "format": "email"},
                              {"type": "string", "format": "uuid"}]},
        "any": {},
        "unsupported": {"not": {"type": "string"}},
    }
    for name, schema in seeds.items():
        write(out, "json_schema", name, json.dumps(schema))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = Path(sys.argv[1])
    shutil.rmtree(out, ignore_errors=True)
    tmp = out / ".tmp"
    tmp.mkdir(parents=True)
    gguf_seeds(out, tmp)
    safetensors_seeds(out, tmp)
    tokenizer_seeds(out)
    jinja_seeds(out)
    api_seeds(out)
    ndjson_seeds(out)
    modelfile_seeds(out)
    chat_output_seeds(out)
    json_schema_seeds(out)
    shutil.rmtree(tmp)
    for d in sorted(p for p in out.iterdir()):
        print(f"{d.name}: {len(list(d.iterdir()))} seeds")


if __name__ == "__main__":
    main()
