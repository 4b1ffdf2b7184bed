"""Speculative decoding through `heron generate` (and a served model's prediction head):
prompt lookup, draft models and prediction heads give the text plain decoding gives
(greedy, and seeded sampling with prompt lookup), statistics report the rounds, and bad
flags, drafts and HERON_SPECULATION values are refused."""
import json
import os
import re
import subprocess

import httpx
import pytest

from conftest import FIXTURES, start_serve

TINY_QWEN3 = FIXTURES / "models" / "tiny-qwen3"
# Output that repeats the input, so prompt lookup has something to propose.
ECHO = ("Repeat this list exactly: apple, banana, cherry, date, elderberry, fig, grape, "
        "apple, banana, cherry, date, elderberry, fig, grape.")


@pytest.fixture
def generate(heron_bin, tmp_path):
    """heron generate with its own store (where the depth controller keeps its costs)."""
    env = dict(os.environ, HERON_MODELS=str(tmp_path / "store"))

    def _generate(*args, extra_env=None):
        return subprocess.run([str(heron_bin), "generate", *map(str, args)], capture_output=True,
                              text=True, timeout=300, env=dict(env, **(extra_env or {})))

    return _generate


def stats_of(result):
    return json.loads(result.stderr.strip().splitlines()[-1])


def test_prompt_lookup_gives_the_plain_text_on_smollm2(generate):
    common = ["--model", "default", "--prompt", ECHO, "--max-tokens", "64", "--stats-json"]
    for sampling in (["--temperature", "0"], ["--temperature", "0.7", "--top-k", "40", "--seed", "3"]):
        plain = generate(*common, *sampling, "--speculation", "off")
        assert plain.returncode == 0, plain.stderr
        assert stats_of(plain)["speculation"]["rounds"] == 0
        for depth in ([], ["--draft-depth", "4"]):
            spec = generate(*common, *sampling, *depth)
            assert spec.returncode == 0, spec.stderr
            assert spec.stdout == plain.stdout
    # The echo is drafted and accepted.
    stats = stats_of(generate(*common, "--temperature", "0", "--draft-depth", "4"))
    assert stats["speculation"]["rounds"] > 0
    assert stats["speculation"]["accepted"] > stats["speculation"]["rounds"]


@pytest.mark.parametrize("draft", ["tiny-llama", "tiny-qwen3"])
def test_draft_models_give_the_plain_text(generate, tiny_llama, draft):
    common = ["--model", tiny_llama, "--prompt", "hello there", "--max-tokens", "24",
              "--ignore-eos", "--temperature", "0", "--stats-json"]
    plain = generate(*common, "--speculation", "off")
    assert plain.returncode == 0, plain.stderr
    spec = generate(*common, "--draft", FIXTURES / "models" / draft, "--draft-depth", "3")
    assert spec.returncode == 0, spec.stderr
    assert spec.stdout == plain.stdout
    s = stats_of(spec)["speculation"]
    assert s["rounds"] > 0
    if draft == "tiny-llama":  # the model drafting for itself: every draft is accepted
        assert s["accepted"] == s["drafted"]
    # The human-readable line.
    human = generate(*common[:-1], "--draft", FIXTURES / "models" / draft, "--draft-depth", "3")
    assert re.search(r"^speculation: \d+ rounds, mean depth [23]\.\d\d, mean accepted \d\.\d\d "
                     r"\(\d\.\d\d tokens per round\)$", human.stderr, re.M), human.stderr


@pytest.mark.parametrize("source, quant", [("tiny-qwen3-moe", "int8"),
                                           ("tiny-gpt-oss-mxfp4", None),
                                           ("tiny-glm4-moe-lite", None),
                                           ("tiny-qwen3-next", "int8"),
                                           ("tiny-qwen3-5", None)])
def test_each_architecture_speculates_to_the_plain_text(generate, heron_bin, tmp_path, source,
                                                         quant):
    """A mixture stored by create, drafting for itself and drafted for by tiny-qwen3:
    tiny-qwen3-moe quantized (on the CPU each verifying forward's expert products then run
    in one node), and gpt-oss as OpenAI ships it (MXFP4 experts, attention sinks, windows
    of 4 positions whose rings the rejected drafts roll back), and GLM-4.7-Flash (latent
    attention, whose latent caches the rejected drafts roll back), and the hybrid recurrent
    Qwen3-Next and Qwen3.5 (rejected drafts roll their linear attention's states back to
    the ones kept during the verifying forward)."""
    (tmp_path / "Modelfile").write_text(f"FROM {FIXTURES / 'models' / source}\n")
    made = subprocess.run([str(heron_bin), "create", "moe", "-f", str(tmp_path / "Modelfile"),
                           *(["--quantize", quant] if quant else [])],
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, HERON_MODELS=str(tmp_path / "store")))
    assert made.returncode == 0, made.stderr
    moe = tmp_path / "store/manifests/library/moe/latest"
    common = ["--model", moe, "--prompt", "hello there", "--max-tokens", "24", "--ignore-eos",
              "--temperature", "0", "--stats-json"]
    plain = generate(*common, "--speculation", "off")
    assert plain.returncode == 0, plain.stderr
    for draft in (moe, FIXTURES / "models" / "tiny-qwen3"):
        spec = generate(*common, "--draft", draft, "--draft-depth", "3")
        assert spec.returncode == 0, spec.stderr
        assert spec.stdout == plain.stdout
        s = stats_of(spec)["speculation"]
        assert s["rounds"] > 0
        if draft == moe:
            assert s["accepted"] == s["drafted"]


@pytest.mark.parametrize("temperature", ["0", "0.9"])
def test_a_models_own_prediction_head_drafts_by_default(generate, temperature):
    """Qwen3.5's files carry a multi-token-prediction head: without --draft it drafts, every
    round at the fixed depth (prompt lookup would propose only where an n-gram repeats),
    and greedy decoding gives the plain text."""
    common = ["--model", FIXTURES / "models" / "tiny-qwen3-5", "--prompt", "hello there",
              "--max-tokens", "24", "--ignore-eos", "--temperature", temperature, "--seed", "3",
              "--stats-json"]
    spec = generate(*common, "--draft-depth", "2")
    assert spec.returncode == 0, spec.stderr
    s = stats_of(spec)["speculation"]
    assert s["rounds"] >= 8 and s["drafted"] >= 2 * (s["rounds"] - 1), s  # the last one capped
    assert len(spec.stdout) > 0
    if temperature == "0":
        plain = generate(*common, "--speculation", "off")
        assert plain.returncode == 0, plain.stderr
        assert spec.stdout == plain.stdout


def test_a_served_models_prediction_head_drafts(heron_bin, tmp_path):
    """The runner picks the head too: Ollama's final response reports the rounds it
    drafted, and the greedy answer is the plain one."""
    with start_serve(heron_bin, tmp_path) as serve:
        r = httpx.post(serve.url + "/api/create", timeout=300, json={
            "model": "q5", "from": str(FIXTURES / "models" / "tiny-qwen3-5"), "stream": False})
        assert r.status_code == 200, r.text

        def answer(speculation):
            r = httpx.post(serve.url + "/api/generate", timeout=300, json={
                "model": "q5", "prompt": "hello there", "stream": False, "raw": True,
                "options": {"temperature": 0, "num_predict": 24, "speculation": speculation}})
            assert r.status_code == 200, r.text
            return r.json()
        plain, spec = answer(False), answer(True)
    assert "speculation" not in plain
    assert spec["speculation"]["rounds"] > 0 and spec["speculation"]["drafted"] > 0, spec
    assert spec["response"] == plain["response"]


def test_a_stored_models_prediction_head_drafts(generate, heron_bin, tmp_path):
    """Qwen3-Next stored by create at 8 bits: its head (with experts) stored apart drafts
    for it, and greedy decoding gives the plain text."""
    (tmp_path / "Modelfile").write_text(f"FROM {FIXTURES / 'models' / 'tiny-qwen3-next'}\n")
    made = subprocess.run([str(heron_bin), "create", "qn", "-f", str(tmp_path / "Modelfile"),
                           "--quantize", "int8"], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, HERON_MODELS=str(tmp_path / "store")))
    assert made.returncode == 0, made.stderr
    common = ["--model", tmp_path / "store/manifests/library/qn/latest", "--prompt",
              "hello there", "--max-tokens", "24", "--ignore-eos", "--temperature", "0",
              "--stats-json"]
    spec = generate(*common, "--draft-depth", "2")
    assert spec.returncode == 0, spec.stderr
    s = stats_of(spec)["speculation"]
    assert s["rounds"] >= 8 and s["drafted"] >= 2 * (s["rounds"] - 1), s
    plain = generate(*common, "--speculation", "off")
    assert plain.returncode == 0, plain.stderr
    assert spec.stdout == plain.stdout


@pytest.mark.parametrize("flags, message", [
    (["--speculation", "maybe"], "--speculation must be on or off"),
    (["--draft-depth", "-1"], "--draft-depth must be between 0 and"),
    (["--draft", str(TINY_QWEN3), "--speculation", "off"], "--draft needs speculation on"),
])
def test_bad_speculation_flags_are_usage_errors(generate, tiny_llama, flags, message):
    r = generate("--model", tiny_llama, "--prompt", "hi", *flags)
    assert r.returncode == 2 and message in r.stderr, r.stderr


def test_bad_environment_value_is_a_usage_error(generate, tiny_llama):
    r = generate("--model", tiny_llama, "--prompt", "hi", extra_env={"HERON_SPECULATION": "maybe"})
    assert r.returncode == 2 and "HERON_SPECULATION" in r.stderr, r.stderr
    r = generate("--model", tiny_llama, "--prompt", "hi", "--max-tokens", "3",
                 extra_env={"HERON_SPECULATION": "off"})
    assert r.returncode == 0, r.stderr


def test_bad_drafts_are_refused_with_their_reason(generate, tiny_llama):
    r = generate("--model", tiny_llama, "--prompt", "hi", "--draft", "/nonexistent/draft.gguf")
    assert r.returncode == 1 and "/nonexistent/draft.gguf: no such file or directory" in r.stderr
    r = generate("--model", "default", "--prompt", "hi", "--draft", tiny_llama)
    assert r.returncode == 1, r.stderr
    assert "has a vocabulary of 512 tokens, the model it drafts for 49152" in r.stderr, r.stderr


def test_unreadable_cost_tables_start_fresh(generate, tiny_llama, tmp_path):
    common = ["--model", tiny_llama, "--prompt", "hello hello hello hello", "--max-tokens", "16",
              "--ignore-eos", "--temperature", "0"]
    first = generate(*common)
    assert first.returncode == 0, first.stderr
    tables = list((tmp_path / "store" / "speculation").glob("*.json"))
    assert len(tables) == 1 and json.loads(tables[0].read_text())["version"] == 1
    tables[0].write_text("{not json")
    again = generate(*common)
    assert again.returncode == 0 and again.stdout == first.stdout
    assert "speculation costs start fresh" in again.stderr
    assert json.loads(tables[0].read_text())["version"] == 1  # rewritten
