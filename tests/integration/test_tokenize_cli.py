"""`heron tokenize` / `heron detokenize` end to end, against HF `tokenizers`."""
import json
import subprocess
from pathlib import Path

import pytest
from tokenizers import Tokenizer

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "tests" / "fixtures" / "tokenizers"  # real tokenizers, sources in its README

TEXTS = ["Hello world", "  leading spaces\tand tabs\r\nnew line", "naïve café 日本語 👋🏽",
         "<|im_start|>user\nHi<|im_end|>", "1234567 x**2"]


def reference(path):
    tok = Tokenizer.from_file(str(path / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


@pytest.fixture(scope="module")
def llama2_dir(tmp_path_factory):
    """The real llama2 tokenizer (SentencePiece-style BPE), decompressed."""
    d = tmp_path_factory.mktemp("llama2")
    for name in ("tokenizer.json", "tokenizer_config.json"):
        data = subprocess.run(["zstd", "-dc", str(REAL / "llama2" / f"{name}.zst")],
                              check=True, capture_output=True).stdout
        (d / name).write_bytes(data)
    return d


def ids_of(result):
    assert result.returncode == 0, result.stderr
    return [int(x) for x in result.stdout.split()]


@pytest.mark.parametrize("text", TEXTS)
def test_ids_match_reference(run, tiny_llama, llama2_dir, text):
    for model in (tiny_llama, llama2_dir):
        ref = reference(model)
        assert ids_of(run("tokenize", "--model", model, "--ids", text)) == ref.encode(text).ids
        ref.encode_special_tokens = True
        plain = ref.encode(text, add_special_tokens=False).ids
        assert ids_of(run("tokenize", "--model", model, "--ids", "--no-special", text)) == plain


def test_stdin_and_output_forms(run, tiny_llama):
    text = "line one\nline two: naïve 👋🏽\n"
    ref = reference(tiny_llama).encode(text)
    assert ids_of(run("tokenize", "--model", tiny_llama, "--ids", "-", stdin=text)) == ref.ids

    r = run("tokenize", "--model", tiny_llama, "--pieces", text)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == ref.tokens

    r = run("tokenize", "--model", tiny_llama, text)
    assert r.returncode == 0, r.stderr
    lines = [line.split("\t") for line in r.stdout.splitlines()]
    assert [int(i) for i, _ in lines] == ref.ids
    assert [json.loads(p) for _, p in lines] == ref.tokens


def test_detokenize_matches_reference(heron_bin, tiny_llama, llama2_dir):
    def detokenize(*args):  # bytes: text mode would turn "\r\n" into "\n"
        r = subprocess.run([str(heron_bin), "detokenize", *map(str, args)], capture_output=True)
        assert r.returncode == 0, r.stderr
        return r.stdout.decode()

    for model in (tiny_llama, llama2_dir):
        ref = reference(model)
        for text in TEXTS:
            ids = ref.encode(text).ids
            want = ref.decode(ids, skip_special_tokens=False)
            assert detokenize("--model", model, *ids) == want + "\n"
            want = ref.decode(ids, skip_special_tokens=True)
            assert detokenize("--model", model, "--skip-special", json.dumps(ids)) == want + "\n"


def test_round_trip_through_ids(run, llama2_dir):
    text = "Round trip: ünïcode, emoji 🧑‍🚀 and   spaces"
    ids = run("tokenize", "--model", llama2_dir, "--ids", "--no-special", text).stdout.split()
    r = run("detokenize", "--model", llama2_dir, *ids)
    assert r.stdout == text + "\n"


@pytest.mark.parametrize("raw", [b"a\xffb", b"x\xe2\x82y", b"\xed\xa0\x80<|im_start|>\xc3",
                                 b"ok \xf0\x9f\x98", b"\xc0\xaf\x80\x80 naive"])
def test_invalid_utf8_reads_as_replacement(heron_bin, tiny_llama, llama2_dir, default_model, raw):
    """The one rule: each maximal invalid subpart is one U+FFFD (Python's errors="replace"),
    for the text argument and for standard input alike."""
    text = raw.decode("utf-8", "replace")
    for model in (tiny_llama, llama2_dir, default_model):
        if model == default_model:  # GGUF: as the U+FFFD text (tests/unit checks that vs HF)
            want = subprocess.run([str(heron_bin), "tokenize", "--model", str(model), "--ids", text],
                                  capture_output=True).stdout
            assert want.strip()
        else:
            want = (" ".join(map(str, reference(model).encode(text).ids)) + "\n").encode()
        for args, stdin in (([raw], None), ([b"-"], raw)):
            r = subprocess.run([str(heron_bin), "tokenize", "--model", str(model), "--ids", *args],
                               input=stdin, capture_output=True)
            assert r.returncode == 0, r.stderr
            assert r.stdout == want, (model, raw)


def test_default_model_and_gguf(run, default_model):
    by_name = ids_of(run("tokenize", "--model", "default", "--ids", "Hello world"))
    assert by_name == ids_of(run("tokenize", "--model", default_model, "--ids", "Hello world"))
    assert by_name == [19556, 905]  # SmolLM2's vocabulary; no BOS
    r = run("detokenize", "--model", default_model, "19556,905")
    assert r.stdout == "Hello world\n"


@pytest.mark.parametrize(
    "args, message",
    [
        (["tokenize", "--ids", "--pieces", "x"], "at most one of --ids, --pieces"),
        (["tokenize"], "give the text as one argument"),
        (["tokenize", "a", "b"], "give the text as one argument"),
        (["detokenize"], "give the token ids"),
        (["detokenize", "12", "x3"], "'x3' is not a list of token ids"),
        (["detokenize", "99999999"], "outside the vocabulary"),
        (["tokenize", "--bogus", "x"], "unknown flag --bogus"),
    ],
)
def test_usage_errors(run, tiny_llama, args, message):
    r = run(*args, "--model", tiny_llama)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr
    assert r.stdout == ""


def test_missing_and_bad_models(run, tmp_path):
    r = run("tokenize", "--model", tmp_path / "nope", "x")
    assert r.returncode == 1 and "not found" in r.stderr
    (tmp_path / "tokenizer.json").write_text('{"model": {"type": "Mystery"}}')
    r = run("tokenize", "--model", tmp_path, "x")
    assert r.returncode == 1 and "Mystery" in r.stderr
    bad = tmp_path / "junk.gguf"
    bad.write_bytes(b"not a gguf file at all")
    r = run("detokenize", "--model", bad, "1")
    assert r.returncode == 1 and "junk.gguf" in r.stderr
