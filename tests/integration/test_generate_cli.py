"""`heron generate` end to end: flags, errors, determinism, the default model."""
import json
import shutil
import subprocess
from pathlib import Path

import pytest


def stats_of(result):
    return json.loads(result.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--max-tokens", "0"], "--max-tokens must be between 1 and"),
        (["--max-tokens", "ten"], "--max-tokens must be an integer, got 'ten'"),
        (["--temperature", "nan"], "--temperature must be a finite number"),
        (["--temperature", "-0.5"], "--temperature must be between 0 and"),
        (["--top-p", "0"], "--top-p must be greater than 0"),
        (["--top-p", "1.5"], "--top-p must be between 0 and 1"),
        (["--top-k", "-1"], "--top-k must be between 0 and"),
        (["--seed", "x"], "--seed must be an integer"),
        (["--bogus"], "unknown flag --bogus"),
        (["--max-tokens"], "--max-tokens needs a value"),
        (["--raw=yes"], "--raw takes no value"),
        (["--prompt-file", "/nonexistent/prompt.txt"], "give exactly one of --prompt or --prompt-file"),
    ],
)
def test_bad_flags_are_usage_errors(run, tiny_llama, flags, message):
    r = run("generate", "--model", tiny_llama, "--prompt", "hi", *flags)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr
    assert r.stdout == ""


def test_missing_prompt_and_unreadable_prompt_file(run, tiny_llama):
    r = run("generate", "--model", tiny_llama)
    assert r.returncode == 2 and "give exactly one of --prompt or --prompt-file" in r.stderr
    r = run("generate", "--model", tiny_llama, "--prompt-file", "/nonexistent/p.txt")
    assert r.returncode == 2 and "cannot read --prompt-file '/nonexistent/p.txt'" in r.stderr


def test_unknown_command_and_help(run):
    r = run("frobnicate")
    assert r.returncode == 2 and "unknown command 'frobnicate'" in r.stderr
    r = run("generate", "--help")
    assert r.returncode == 0 and "--temperature" in r.stdout


def test_missing_model_path(run):
    r = run("generate", "--model", "/nonexistent/model.gguf", "--prompt", "hi")
    assert r.returncode == 1
    assert "/nonexistent/model.gguf: no such file or directory" in r.stderr


def test_truncated_gguf_names_the_file(run, tmp_path, default_model):
    bad = tmp_path / "cut.gguf"
    bad.write_bytes(default_model.read_bytes()[:100_000])
    r = run("generate", "--model", bad, "--prompt", "hi")
    assert r.returncode == 1
    assert str(bad) in r.stderr


def test_glm_gguf_answers_as_its_hugging_face_files(run, tmp_path):
    """GLM-4.7-Flash as llama.cpp's GGUF (deepseek2) generates the Hugging Face files' text;
    one stating softmax gating (DeepSeek-V2's, which heron does not run) is a clear error."""
    from safetensors.numpy import load_file

    from make_tiny_glm4_moe_lite import CONFIG, write_gguf

    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    hf = fixtures / "models" / "tiny-glm4-moe-lite"
    args = ["--prompt", "the quick brown fox", "--raw", "--temperature", "0", "--max-tokens", "12",
            "--ignore-eos"]
    a = run("generate", "--model", fixtures / "gguf" / "tiny-glm4-moe-lite.gguf", *args)
    b = run("generate", "--model", hf, *args)
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    assert a.stdout == b.stdout and a.stdout.strip()
    softmax = tmp_path / "softmax.gguf"
    write_gguf(load_file(str(hf / "model.safetensors")), CONFIG, hf, softmax, gating="SOFTMAX")
    r = run("generate", "--model", softmax, *args)
    assert r.returncode == 1
    assert f"{softmax}: only sigmoid expert gating (expert_gating_func 2) is supported" in r.stderr


def test_not_a_model(run, tmp_path):
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"hello world" * 10)
    r = run("generate", "--model", junk, "--prompt", "hi")
    assert r.returncode == 1 and "not a model" in r.stderr


def test_model_dir_without_weights(run, tmp_path, tiny_llama):
    shutil.copy(tiny_llama / "config.json", tmp_path / "config.json")
    r = run("generate", "--model", tmp_path, "--prompt", "hi")
    assert r.returncode == 1
    assert "no model.safetensors or model.safetensors.index.json" in r.stderr


def test_budget_and_stats(run, tiny_llama):
    r = run("generate", "--model", tiny_llama, "--prompt", "hello there", "--raw",
            "--max-tokens", "7", "--ignore-eos", "--temperature", "0", "--stats-json")
    assert r.returncode == 0, r.stderr
    stats = stats_of(r)
    assert stats["decode_tokens"] == 7
    assert stats["done_reason"] == "length"
    assert stats["prompt_tokens"] > 0 and stats["decode_tps"] > 0


def test_statistics_start_on_their_own_line(heron_bin, tiny_llama):
    # One terminal gets both streams: the answer ends its line before the statistics.
    r = subprocess.run([str(heron_bin), "generate", "--model", str(tiny_llama), "--prompt", "hi",
                        "--raw", "--max-tokens", "5", "--ignore-eos", "--temperature", "0"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    assert r.returncode == 0, r.stdout
    answer, stats = r.stdout.rsplit("prompt: ", 1)
    assert answer.endswith("\n"), r.stdout
    assert "tokens/s | decode: 5 tokens" in stats


def test_seeded_sampling_is_reproducible(run, tiny_llama):
    args = ["generate", "--model", tiny_llama, "--prompt", "once upon a time", "--max-tokens", "24",
            "--ignore-eos", "--temperature", "1.0", "--seed"]
    a, b, c = run(*args, "7"), run(*args, "7"), run(*args, "8")
    assert a.returncode == 0, a.stderr
    assert a.stdout == b.stdout
    assert a.stdout != c.stdout


def test_default_model_answers(run):
    r = run("generate", "--model", "default", "--prompt", "What is the capital of France?",
            "--temperature", "0", "--max-tokens", "32", "--stats-json")
    assert r.returncode == 0, r.stderr
    assert "Paris" in r.stdout
    assert stats_of(r)["done_reason"] == "stop"
