"""The draft head shipped for SmolLM2 (models/smollm2-135m-instruct-draft-head, trained by
tools/draft_head/train.py): named with --draft, the model accepts its drafts on held-out
prompts (tools/draft_head/prompts.py's held-out part, whose topics it never saw), greedy
text stays plain decoding's; imported by `heron create` (DRAFT) it drafts from the store;
heads that do not fit are refused."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools" / "draft_head"))
from prompts import prompt_sets  # noqa: E402

HEAD = ROOT / "models" / "smollm2-135m-instruct-draft-head"


@pytest.fixture
def generate(heron_bin, tmp_path):
    env = dict(os.environ, HERON_MODELS=str(tmp_path / "store"))

    def _generate(*args):
        return subprocess.run([str(heron_bin), "generate", *map(str, args)], capture_output=True,
                              text=True, timeout=300, env=env)

    return _generate


def speculation_of(result):
    return json.loads(result.stderr.strip().splitlines()[-1])["speculation"]


def test_the_shipped_head_drafts_for_smollm2(generate):
    _, held_out = prompt_sets()
    drafted = accepted = 0
    for prompt in held_out[:3]:
        common = ["--model", "default", "--prompt", prompt, "--max-tokens", "48",
                  "--temperature", "0", "--stats-json"]
        plain = generate(*common, "--speculation", "off")
        assert plain.returncode == 0, plain.stderr
        spec = generate(*common, "--draft", HEAD, "--draft-depth", "1")
        assert spec.returncode == 0, spec.stderr
        assert spec.stdout == plain.stdout
        s = speculation_of(spec)
        drafted += s["drafted"]
        accepted += s["accepted"]
    # Its held-out rate at depth 1 is 0.57 (training.json); a head reading the wrong
    # hidden states, rows or positions is accepted a few percent of the time.
    assert drafted > 60 and accepted / drafted > 0.3, (accepted, drafted)


def test_a_created_model_drafts_with_its_imported_head(generate, heron_bin, default_model,
                                                       tmp_path):
    shutil.copytree(HEAD, tmp_path / "head")
    (tmp_path / "Modelfile").write_text(f"FROM {default_model}\nDRAFT ./head\n")
    def create(*flags):
        return subprocess.run([str(heron_bin), "create", "smol-head", "-f",
                               str(tmp_path / "Modelfile"), *flags], capture_output=True,
                              text=True, timeout=300,
                              env=dict(os.environ, HERON_MODELS=str(tmp_path / "store")))

    # The shipped head is 8-bit already: stored as it is, never quantized twice.
    made = create("--draft-quantize", "int8")
    assert made.returncode != 0 and "already quantized" in made.stderr, made.stderr
    made = create()
    assert made.returncode == 0, made.stderr
    common = ["--model", tmp_path / "store/manifests/library/smol-head/latest", "--prompt",
              "Write a haiku about the sea.", "--max-tokens", "32", "--temperature", "0",
              "--stats-json"]
    spec = generate(*common, "--draft-depth", "2")
    assert spec.returncode == 0, spec.stderr
    s = speculation_of(spec)
    assert s["rounds"] > 5 and s["accepted"] > 0, s
    plain = generate(*common, "--speculation", "off")
    assert spec.stdout == plain.stdout


def test_heads_that_do_not_fit_are_refused(generate, heron_bin, default_model, tiny_llama,
                                           tmp_path):
    shutil.copytree(HEAD, tmp_path / "head")
    # For the tiny llama (hidden size 64) it is another model's head.
    r = generate("--model", tiny_llama, "--prompt", "hi", "--draft", tmp_path / "head")
    assert r.returncode == 1, r.stderr
    assert "trained for a model of hidden size 576" in r.stderr, r.stderr
    # create refuses a head for a smaller vocabulary, and writes nothing.
    config = json.loads((tmp_path / "head/config.json").read_text())
    config["vocab_size"] = 1000
    (tmp_path / "head/config.json").write_text(json.dumps(config))
    (tmp_path / "Modelfile").write_text(f"FROM {default_model}\nDRAFT ./head\n")
    made = subprocess.run([str(heron_bin), "create", "bad", "-f", str(tmp_path / "Modelfile")],
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, HERON_MODELS=str(tmp_path / "store")))
    assert made.returncode != 0
    assert "is a draft head for a vocabulary of 1000 tokens" in made.stderr, made.stderr
    assert not (tmp_path / "store/manifests/library/bad").exists()
