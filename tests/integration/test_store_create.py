"""`heron create`, the model store and its Ollama endpoints, checked against mlx-lm's
quantization (mx.quantize with mlx-lm's per-layer layout, mlx_lm.load) and the PyPI
ollama client."""
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import mlx.core as mx
import numpy as np
import ollama
import pytest

from conftest import FIXTURES, ROOT, _free_port

sys.path.insert(0, str(ROOT / "tools"))
from tiny_gguf import gguf_tensors, write_gguf  # noqa: E402

MODELS = FIXTURES / "models"


@pytest.fixture
def store(tmp_path):
    return tmp_path / "store"


@pytest.fixture
def create(heron_bin, store, tmp_path):
    """heron create NAME with a Modelfile written from `text`; returns the CompletedProcess."""

    def _create(name, text, *flags, timeout=300):
        mf = tmp_path / f"Modelfile-{abs(hash((name, text)))}"
        mf.write_text(text)
        env = dict(os.environ, HERON_MODELS=str(store))
        return subprocess.run([str(heron_bin), "create", name, "-f", str(mf), *flags],
                              capture_output=True, text=True, timeout=timeout, env=env)

    return _create


def manifest(store, name, tag="latest"):
    return json.loads((store / "manifests" / "library" / name / tag).read_text())


def blob(store, digest):
    return store / "blobs" / digest.replace(":", "-")


def load_st(path):
    return mx.load(str(path), format="safetensors")


def layer(store, name, file):
    m = manifest(store, name)
    (entry,) = [l for l in m["layers"] if l["name"] == file]
    return blob(store, entry["digest"])


def as_hf_dir(store, name, dest):
    """The stored model's files under their own names (symlinks to the blobs)."""
    dest.mkdir()
    for l in manifest(store, name)["layers"]:
        if not l["name"].startswith("draft."):
            (dest / l["name"]).symlink_to(blob(store, l["digest"]))
    return dest


SCHEMES = {"int4": ("affine", 4, 64), "int8": ("affine", 8, 64), "mxfp4": ("mxfp4", 4, 32),
           "mxfp8": ("mxfp8", 8, 32), "nvfp4": ("nvfp4", 4, 16)}


def expected_scheme(name, quant, tied):
    """The documented plan as (mode, bits, group_size): the head at 8 bits in the same
    family (int8, or mxfp8 for the float modes); at int4 also k_proj, v_proj, down_proj."""
    head = name == "lm_head" or (tied and name == "model.embed_tokens")
    eight = SCHEMES["int8" if SCHEMES[quant][0] == "affine" else "mxfp8"]
    if head or (quant == "int4" and name.rsplit(".", 1)[-1] in ("k_proj", "v_proj", "down_proj")):
        return eight
    return SCHEMES[quant]


def mlx_quantize(w, scheme):
    """MLX's own quantization of one weight: [weight, scales] (+ biases for affine)."""
    mode, bits, group = scheme
    return mx.quantize(w, group_size=group, bits=bits, mode=mode)


@pytest.mark.parametrize("model", ["tiny-llama", "tiny-llama3", "tiny-qwen3"])
@pytest.mark.parametrize("quant", list(SCHEMES))
def test_quantized_tensors_match_mlx_quantize(create, store, model, quant):
    r = create("q", f"FROM {MODELS / model}\n", "--quantize", quant)
    assert r.returncode == 0, r.stderr
    source = mx.load(str(MODELS / model / "model.safetensors"))
    stored = load_st(layer(store, "q", "model.safetensors"))
    config = json.loads(layer(store, "q", "config.json").read_text())
    tied = config.get("tie_word_embeddings", False)
    quantized = 0
    for name, w in source.items():
        if name.endswith(".weight") and w.ndim == 2:
            prefix = name[: -len(".weight")]
            scheme = expected_scheme(prefix, quant, tied)
            parts = mlx_quantize(w, scheme)
            for part, want in zip(("weight", "scales", "biases"), parts):
                assert mx.array_equal(stored[f"{prefix}.{part}"], want), f"{prefix}.{part}"
            if len(parts) == 2:
                assert f"{prefix}.biases" not in stored
            q = config["quantization"].get(prefix, config["quantization"])
            assert (q.get("mode", "affine"), q["bits"], q["group_size"]) == scheme, name
            quantized += 1
        else:  # norms stay at source precision
            assert mx.array_equal(stored[name], w), name
    assert quantized >= 14


def mlx_lm_greedy(model_dir, prompt, n):
    from mlx_lm import load

    model, tok = load(str(model_dir))
    ids = tok.encode(prompt)
    out, logprobs = [], []
    for _ in range(n):
        logits = model(mx.array([ids + out]))[0, -1].astype(mx.float32)
        lp = logits - mx.logsumexp(logits)
        nxt = int(mx.argmax(lp).item())
        out.append(nxt)
        logprobs.append(float(lp[nxt].item()))
    return tok.decode(out), logprobs


def assert_answers_like_mlx_lm(client, model, ref_dir, prompt, n):
    """heron's raw greedy answer equals mlx-lm's on ref_dir, and its logprobs agree."""
    text, ref_logprobs = mlx_lm_greedy(ref_dir, prompt, n)
    got = client.generate(model=model, prompt=prompt, raw=True, logprobs=True,
                          options={"temperature": 0, "repeat_penalty": 1, "num_predict": n})
    assert got.response == text
    assert [lp.logprob for lp in got.logprobs] == pytest.approx(ref_logprobs, abs=2e-3)


@pytest.fixture
def store_serve(heron_bin, store, tmp_path):
    """A `heron serve` on the test's own store."""
    port = _free_port()
    log = tmp_path / "serve.log"
    env = dict(os.environ, HERON_HOST=f"127.0.0.1:{port}", HERON_MODELS=str(store))
    with open(log, "wb") as f:
        proc = subprocess.Popen([str(heron_bin), "serve"], env=env, stdout=f, stderr=f)
    client = ollama.Client(host=f"http://127.0.0.1:{port}")
    client.url = f"http://127.0.0.1:{port}"  # for fields the client's types leave out
    for _ in range(300):
        try:
            client.list()
            break
        except Exception:
            if proc.poll() is not None:
                pytest.fail(log.read_text())
            time.sleep(0.1)
    yield client
    # An idle keep-alive connection would hold the server's shutdown for its 5 s timeout.
    client._client.close()
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.mark.parametrize("model,quant", [("tiny-llama", "int4"), ("tiny-llama", "int8"),
                                         ("tiny-llama", "mxfp4"), ("tiny-qwen3", "int4"),
                                         ("tiny-qwen3", "nvfp4"), ("tiny-llama3", "mxfp8"),
                                         ("tiny-qwen3-moe", "int4"), ("tiny-gpt-oss", "int4"),
                                         ("tiny-gpt-oss-mxfp4", None),
                                         ("tiny-glm4-moe-lite", "int4"),
                                         ("tiny-qwen3-next", "int4"), ("tiny-qwen3-5", "int4"),
                                         ("tiny-qwen3-5-moe", "int4")])
def test_served_model_matches_mlx_lm(create, store, store_serve, tmp_path, model, quant):
    """Quantized by create, or (quant None) stored as it comes: gpt-oss's MXFP4 experts
    are rewritten into mlx-lm's layout, which mlx-lm then reads."""
    r = create("served", f"FROM {MODELS / model}\n", *(["--quantize", quant] if quant else []))
    assert r.returncode == 0, r.stderr
    ref_dir = as_hf_dir(store, "served", tmp_path / "hf")
    assert_answers_like_mlx_lm(store_serve, "served", ref_dir, "the quick brown fox", 12)


def test_mlx_lm_quantized_latent_attention_matches_mlx_lm(create, store, store_serve, tmp_path):
    """GLM-4.7-Flash as mlx_lm.convert quantizes it: latent attention's per-head
    projections (embed_q, unembed_out, split from kv_b_proj) quantized as well, and the
    experts stacked; stored as it comes and served, it answers as mlx-lm does."""
    from mlx_lm import convert

    q = tmp_path / "q"
    convert(str(MODELS / "tiny-glm4-moe-lite"), mlx_path=str(q), quantize=True, q_group_size=32,
            q_bits=4)
    weights = {}
    for f in q.glob("*.safetensors"):
        weights.update(mx.load(str(f)))
    assert "model.layers.1.self_attn.embed_q.scales" in weights
    assert "model.layers.1.mlp.switch_mlp.up_proj.scales" in weights
    r = create("mq", f"FROM {q}\n")
    assert r.returncode == 0, r.stderr
    assert_answers_like_mlx_lm(store_serve, "mq", q, "the quick brown fox", 12)


def test_a_multimodal_language_model_is_stored_under_mlx_lm_module_paths(create, store):
    """Qwen3.5 as Hugging Face ships it (model.language_model.*, a vision tower, mtp.*):
    stored under mlx-lm's module paths, so the 8-bit layers of int4 are named as mlx-lm
    looks them up; the vision tower is left out, the multi-token-prediction head kept
    apart (mtp.safetensors, which mlx-lm does not read), quantized as well."""
    r = create("q5", f"FROM {MODELS / 'tiny-qwen3-5'}\n", "--quantize", "int4")
    assert r.returncode == 0, r.stderr
    names = set(load_st(layer(store, "q5", "model.safetensors")))
    assert "language_model.model.layers.0.linear_attn.in_proj_qkv.scales" in names
    assert "language_model.model.embed_tokens.scales" in names
    assert not [n for n in names if n.startswith(("model.", "lm_head", "mtp."))]
    head = set(load_st(layer(store, "q5", "mtp.safetensors")))
    assert {"mtp.fc.scales", "mtp.layers.0.self_attn.q_proj.scales"} <= head, head
    quantization = json.loads(layer(store, "q5", "config.json").read_text())["quantization"]
    assert quantization["language_model.model.layers.3.self_attn.k_proj"]["bits"] == 8
    assert quantization["language_model.model.embed_tokens"]["bits"] == 8  # the tied head


def test_mlx_lm_quantized_qwen3_next_matches_mlx_lm(create, store, store_serve, tmp_path):
    """Qwen3-Next as mlx_lm.convert quantizes it: 4-bit with the routers and the shared
    expert's gate at 8 bits in groups of 64 (its quant_predicate), the convolution and the
    norms in mlx-lm's sanitized layout; stored as it comes and served, it answers as mlx-lm
    does."""
    from mlx_lm import convert

    q = tmp_path / "q"
    convert(str(MODELS / "tiny-qwen3-next"), mlx_path=str(q), quantize=True, q_group_size=32,
            q_bits=4)
    config = json.loads((q / "config.json").read_text())
    assert config["quantization"]["model.layers.0.mlp.gate"] == {"group_size": 64, "bits": 8}
    r = create("nq", f"FROM {q}\n")
    assert r.returncode == 0, r.stderr
    assert_answers_like_mlx_lm(store_serve, "nq", q, "the quick brown fox", 12)


def test_quantized_kv_b_is_split_and_quantized_again_as_mlx_lm_does(create, store, store_serve,
                                                                     tmp_path):
    """A GLM whose kv_b_proj alone is 4-bit (groups of 32): both split it into the per-head
    halves and quantize each again (their groups run along other axes), so heron answers
    as mlx-lm does, and the halves stay 4-bit rather than widening to float."""
    src = MODELS / "tiny-glm4-moe-lite"
    d = tmp_path / "kv_b_q4"
    d.mkdir()
    for f in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(src / f, d / f)
    weights = mx.load(str(src / "model.safetensors"))
    for i in range(3):
        name = f"model.layers.{i}.self_attn.kv_b_proj"
        q, scales, biases = mx.quantize(weights.pop(name + ".weight"), group_size=32, bits=4)
        weights.update({name + ".weight": q, name + ".scales": scales, name + ".biases": biases})
    mx.save_safetensors(str(d / "model.safetensors"), weights)
    config = json.loads((src / "config.json").read_text())
    config["quantization"] = {"group_size": 32, "bits": 4}
    (d / "config.json").write_text(json.dumps(config))
    r = create("kvb", f"FROM {d}\n")
    assert r.returncode == 0, r.stderr
    assert_answers_like_mlx_lm(store_serve, "kvb", d, "the quick brown fox", 12)


def test_gguf_source_is_stored_byte_for_byte(create, store, run, default_model, tmp_path):
    r = create("smol", f"FROM {default_model}\n")
    assert r.returncode == 0, r.stderr
    gguf = layer(store, "smol", "model.gguf")
    assert "sha256:" + hashlib.sha256(default_model.read_bytes()).hexdigest() == \
        "sha256:" + gguf.name.split("-", 1)[1]
    args = ["--prompt", "Hello", "--temperature", "0", "--max-tokens", "8", "--raw"]
    a = run("generate", "--model", store / "manifests/library/smol/latest", *args)
    b = run("generate", "--model", default_model, *args)
    assert a.returncode == 0, a.stderr
    assert a.stdout == b.stdout
    r = create("smol4", f"FROM {default_model}\n", "--quantize", "q4")
    assert r.returncode != 0 and "already quantized" in r.stderr


def hf_tensor_name(gguf_name):
    """llama.cpp tensor names -> Hugging Face ones (the names the store keeps)."""
    top = {"token_embd": "model.embed_tokens", "output_norm": "model.norm", "output": "lm_head"}
    base, rest = gguf_name.split(".", 1)
    if base in top:
        return f"{top[base]}.{rest}"
    _, n, part, suffix = gguf_name.split(".")
    hf = {"attn_norm": "input_layernorm", "ffn_norm": "post_attention_layernorm",
          "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
          "attn_output": "self_attn.o_proj", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
          "ffn_down": "mlp.down_proj"}[part]
    return f"model.layers.{n}.{hf}.{suffix}"


def unpermute_rows(a, n_head):
    """Undo llama.cpp's Q/K row permutation (tools/tiny_gguf.py permute) along axis 0."""
    half = a.shape[0] // n_head // 2
    return a.reshape(n_head, half, 2, *a.shape[1:]).swapaxes(1, 2).reshape(a.shape)


def as_mlx_lm_dir(stored, quantization, hf_source, dest):
    """A store model quantized from a GGUF of `hf_source`, as a directory mlx-lm loads:
    Q/K rows (weights, scales, biases alike) back in Hugging Face order, float scales
    widened to float32 (exact; heron computes in float32 on the CPU too)."""
    config = json.loads((hf_source / "config.json").read_text())
    heads = {"q_proj": config["num_attention_heads"], "k_proj": config["num_key_value_heads"]}
    out = {}
    for name, a in stored.items():
        proj = name.split(".")[-2]
        if proj in heads:
            a = unpermute_rows(a, heads[proj])
        if name.endswith((".scales", ".biases")) and mx.issubdtype(a.dtype, mx.floating):
            a = a.astype(mx.float32)
        out[name] = a
    dest.mkdir()
    mx.save_safetensors(str(dest / "model.safetensors"), out)
    config["quantization"] = quantization
    (dest / "config.json").write_text(json.dumps(config))
    for f in ("tokenizer.json", "tokenizer_config.json"):
        (dest / f).symlink_to(hf_source / f)
    return dest


# A float GGUF is quantized like a float safetensors model: each 2-D weight is MLX's own
# mx.quantize of the GGUF's tensor in its stored type (F16/BF16 values and scales stay
# 16-bit; Q8_0, narrower codes asked for, is dequantized to float32 first, exactly as
# gguf dequantizes it), under the Hugging Face name, with the same per-layer plan; the model then
# answers as mlx-lm does running those weights (Q/K rows put back in Hugging Face order,
# which also checks the loader's rotation of llama.cpp's order).
@pytest.mark.parametrize("ftype,quant,mode", [("F32", "int4", "affine"), ("F16", "nvfp4", "nvfp4"),
                                              ("BF16", "int8", "affine"), ("Q8_0", "int4", "affine")])
def test_float_gguf_is_quantized_like_safetensors(create, store, store_serve, tmp_path, ftype,
                                                  quant, mode):
    src = write_gguf(MODELS / "tiny-llama", tmp_path / f"tiny-{ftype}.gguf", ftype)
    r = create("fromgguf", f"FROM {src}\n", "--quantize", quant)
    assert r.returncode == 0, r.stderr
    names = [l["name"] for l in manifest(store, "fromgguf")["layers"]]
    assert names == ["model.safetensors", "gguf_model.json"]
    stored = load_st(layer(store, "fromgguf", "model.safetensors"))
    described = json.loads(layer(store, "fromgguf", "gguf_model.json").read_text())
    assert described["metadata"]["general.architecture"] == "llama"
    dtype = {"F32": mx.float32, "F16": mx.float16, "BF16": mx.bfloat16, "Q8_0": mx.float32}[ftype]
    for gname, values in gguf_tensors(MODELS / "tiny-llama", ftype).items():
        name = hf_tensor_name(gname)
        if values.ndim == 1:
            assert mx.array_equal(stored[name], mx.array(values)), name
            continue
        prefix = name[: -len(".weight")]
        expected = mlx_quantize(mx.array(values).astype(dtype),
                                expected_scheme(prefix, quant, tied=False))
        for part, want in zip(("weight", "scales", "biases"), expected):
            assert mx.array_equal(stored[f"{prefix}.{part}"], want), f"{prefix}.{part}"
    q = described["quantization"]
    assert q["mode"] == mode and q.get("lm_head", q)["bits"] == 8

    ref_dir = as_mlx_lm_dir(stored, described["quantization"], MODELS / "tiny-llama",
                            tmp_path / "mlx-lm")
    assert_answers_like_mlx_lm(store_serve, "fromgguf", ref_dir, "the quick brown fox", 12)
    info = store_serve.show("fromgguf")
    assert info.details.quantization_level == quant and info.details.family == "llama"


def test_quantized_gguf_sources_refuse_quantization(create, store, tmp_path, default_model):
    """SmolLM2's Q4_1 GGUF, and a stored model quantized from a float GGUF, are already
    quantized; the latter still serves as a DRAFT, stored under draft. names."""
    r = create("smolq", f"FROM {default_model}\n", "--quantize", "int8")
    assert r.returncode == 1, r.stderr
    assert f"FROM {default_model} is already quantized" in r.stderr and "drop --quantize" in r.stderr
    assert "(Q4_1, e.g. 'blk.0.ffn_down.weight') have 4-bit codes" in r.stderr, r.stderr
    assert "re-quantizing them to int8 would add error without making them smaller" in r.stderr
    src = write_gguf(MODELS / "tiny-llama", tmp_path / "tiny.gguf")
    assert create("g8", f"FROM {src}\n", "--quantize", "int8").returncode == 0
    r = create("g4", "FROM g8\n", "--quantize", "int4")
    assert r.returncode == 1 and "FROM g8 is already quantized" in r.stderr, r.stderr
    r = create("pair", f"FROM {MODELS / 'tiny-llama'}\nDRAFT g8\n", "--draft-quantize", "int4")
    assert r.returncode == 1 and "DRAFT g8 is already quantized" in r.stderr, r.stderr
    assert not (store / "manifests" / "library" / "pair").exists()
    r = create("pair", f"FROM {MODELS / 'tiny-llama'}\nDRAFT g8\n")
    assert r.returncode == 0, r.stderr
    draft = load_st(layer(store, "pair", "draft.safetensors"))
    mine = load_st(layer(store, "g8", "model.safetensors"))
    assert draft.keys() == {"draft." + k for k in mine}
    assert all(mx.array_equal(draft["draft." + k], v) for k, v in mine.items())
    assert layer(store, "pair", "draft.gguf_model.json") == layer(store, "g8", "gguf_model.json")


def test_relative_paths_and_existing_model_sources(create, store, tmp_path):
    (tmp_path / "m").symlink_to(MODELS / "tiny-llama")
    assert create("base", "FROM ./m\n", "--quantize", "int8").returncode == 0
    r = create("again", "FROM base\n", "--quantize", "int4")
    assert r.returncode != 0 and "already quantized" in r.stderr
    r = create("withdraft", "FROM base\nDRAFT ./m\n", "--draft-quantize", "q4")
    assert r.returncode == 0, r.stderr
    base, wd = manifest(store, "base"), manifest(store, "withdraft")
    # The target's blobs are shared, not rewritten.
    assert {l["digest"] for l in base["layers"]} <= {l["digest"] for l in wd["layers"]}
    names = {l["name"] for l in wd["layers"]}
    assert {"draft.safetensors", "draft.config.json"} <= names
    draft = load_st(layer(store, "withdraft", "draft.safetensors"))
    assert all(k.startswith("draft.") for k in draft)
    assert draft["draft.model.layers.0.mlp.up_proj.weight"].dtype == mx.uint32


@pytest.mark.parametrize("modelfile,flags,message", [
    ("FROM {tiny}\n", ["--draft-quantize", "q4"], "--draft-quantize needs a DRAFT"),
    ("PARAMETER temperature 1\n", [], "no FROM"),
    ("FROM {tiny}\nPARAMETER temperature 1\nBOGUS x\n", [], ":3: unknown instruction 'bogus'"),
    ("FROM {tiny}\nPARAMETER top_k 1.5\n", [], ":2: parameter top_k"),
    ("FROM {tiny}\nPARAMETER nonsense 1\n", [], ":2: unknown parameter 'nonsense'"),
    ("FROM {tiny}\nSYSTEM \"\"\"open\n", [], ":2: unterminated"),
    ("FROM {tiny}\n", ["--quantize", "q3"], "unknown quantization type 'q3'"),
    ("FROM {tiny}\nDRAFT {gguf}\n", [], "different vocabulary"),
    ("FROM /nonexistent/dir\n", [], "no such file, directory or model"),
])
def test_create_errors(create, store, default_model, modelfile, flags, message):
    text = modelfile.format(tiny=MODELS / "tiny-llama", gguf=default_model)
    r = create("bad", text, *flags)
    assert r.returncode == 1 and message in r.stderr, r.stderr
    assert not (store / "manifests" / "library" / "bad").exists()


@pytest.mark.parametrize("name", ["../x", "/abs", "a/b/c", "x:", "-x", "a..b", "x" * 81, "a b"])
def test_bad_names_are_refused(create, store, name):
    r = create(name, f"FROM {MODELS / 'tiny-llama'}\n")
    assert r.returncode == 1 and "invalid model name" in r.stderr, r.stderr
    assert not store.exists() or not list((store / "manifests").rglob("*"))


def test_sigkill_leaves_no_manifest_and_next_start_cleans(heron_bin, create, store, tmp_path,
                                                         default_model):
    mf = tmp_path / "Modelfile"
    mf.write_text(f"FROM {default_model}\n")
    env = dict(os.environ, HERON_MODELS=str(store))
    proc = subprocess.Popen([str(heron_bin), "create", "killed", "-f", str(mf)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 30
    while not list((store / "tmp").glob("blob-*")) if (store / "tmp").exists() else True:
        assert time.time() < deadline and proc.poll() is None, "create never wrote a temp file"
        time.sleep(0.002)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not (store / "manifests" / "library" / "killed").exists()
    assert list((store / "tmp").iterdir())  # the killed writer's temp file is still there
    assert create("next", f"FROM {MODELS / 'tiny-llama'}\n").returncode == 0
    assert list((store / "tmp").iterdir()) == []
    used = {l["digest"] for l in manifest(store, "next")["layers"]}
    used.add(manifest(store, "next")["config"]["digest"])
    assert {p.name.replace("-", ":", 1) for p in (store / "blobs").iterdir()} == used


def test_digest_tampering_is_refused(create, store, run, store_serve):
    assert create("t", f"FROM {MODELS / 'tiny-llama'}\n").returncode == 0
    path = store / "manifests" / "library" / "t" / "latest"
    m = json.loads(path.read_text())
    m["layers"][0]["digest"] = "sha256:../../../../etc/passwd"
    path.write_text(json.dumps(m))
    r = run("generate", "--model", path, "--prompt", "hi", "--max-tokens", "1")
    assert r.returncode == 1 and "invalid blob digest" in r.stderr
    with pytest.raises(ollama.ResponseError) as e:
        store_serve.show("t")
    assert e.value.status_code == 500 and "invalid blob digest" in str(e.value)
    # A settings blob whose bytes no longer match its digest.
    m = manifest(store, "t")
    m["layers"] = manifest(store, "t")["layers"]
    assert create("u", f"FROM {MODELS / 'tiny-llama'}\n").returncode == 0
    settings = blob(store, manifest(store, "u")["config"]["digest"])
    settings.write_text(settings.read_text().replace("safetensors", "gguf"))
    with pytest.raises(ollama.ResponseError) as e:
        store_serve.show("u")
    assert "does not match its digest" in str(e.value)
    # Still listed, so it can be deleted.
    assert {"t:latest", "u:latest"} <= {m.model for m in store_serve.list().models}
    store_serve.delete("u")
    store_serve.delete("t")  # even with a malformed manifest
    assert not (store / "manifests" / "library").exists()


def test_ollama_client_create_list_show_copy_delete(store_serve, store):
    c = store_serve
    events = list(c.create(model="tiny", from_=str(MODELS / "tiny-llama"), quantize="q8",
                           system="You are terse.", template="{{ messages }}",
                           parameters={"temperature": 0.25, "stop": ["<|im_end|>", "\n\n"],
                                       "num_predict": 3},
                           messages=[{"role": "user", "content": "hi"},
                                     {"role": "assistant", "content": "hello"}],
                           license="MIT", stream=True))
    assert events[0].status == "parsing modelfile" and events[-1].status == "success"
    assert any(e.total and e.completed == e.total for e in events)
    names = [m.model for m in c.list().models]
    assert "tiny:latest" in names
    entry = [m for m in c.list().models if m.model == "tiny:latest"][0]
    assert entry.details.format == "safetensors" and entry.details.quantization_level == "int8"
    assert entry.size > 0 and len(entry.digest) == 64
    s = c.show("tiny")
    raw = json.loads(urllib.request.urlopen(urllib.request.Request(
        c.url + "/api/show", data=b'{"model": "tiny"}', method="POST")).read())
    assert raw["system"] == "You are terse."
    assert raw["messages"][1] == {"role": "assistant", "content": "hello"}
    assert s.template == "{{ messages }}" and s.license == "MIT"
    assert "temperature" in s.parameters and '"\\n\\n"' in s.parameters
    assert "PARAMETER stop \"<|im_end|>\"" in s.modelfile and "SYSTEM" in s.modelfile
    assert s.modelinfo["general.architecture"] == "llama"
    assert s.modelinfo["llama.block_count"] == 2

    c.copy("tiny", "tiny2:v1")
    assert manifest(store, "tiny2", "v1") == manifest(store, "tiny")
    c.delete("tiny")
    assert "tiny:latest" not in [m.model for m in c.list().models]
    m = manifest(store, "tiny2", "v1")
    for l in m["layers"]:  # still used by the copy
        assert blob(store, l["digest"]).exists()
    c.delete("tiny2:v1")
    assert list((store / "blobs").iterdir()) == []
    with pytest.raises(ollama.ResponseError) as e:
        c.delete("tiny2:v1")
    assert e.value.status_code == 404
    with pytest.raises(ollama.ResponseError) as e:
        c.copy("../x", "y")
    assert e.value.status_code == 400 and "invalid model name" in str(e.value)


def test_model_parameters_are_defaults_requests_override(store_serve):
    c = store_serve
    c.create(model="short", from_=str(MODELS / "tiny-llama"), parameters={"num_predict": 3,
                                                                            "temperature": 0})
    r = c.generate(model="short", prompt="hello there", raw=True)
    assert r.eval_count == 3
    r = c.generate(model="short", prompt="hello there", raw=True, options={"num_predict": 5})
    assert r.eval_count == 5
    with pytest.raises(ollama.ResponseError) as e:
        c.create(model="x", from_=str(MODELS / "tiny-llama"), parameters={"top_k": "many"})
    assert e.value.status_code == 400 and "top_k" in str(e.value)


def test_create_over_http_reports_errors(store_serve):
    with pytest.raises(ollama.ResponseError) as e:
        store_serve.create(model="x", from_=str(MODELS / "tiny-llama"), quantize="q3")
    assert e.value.status_code == 400 and "q3" in str(e.value)
    with pytest.raises(ollama.ResponseError) as e:
        store_serve.create(model="x")
    assert e.value.status_code == 400 and "from" in str(e.value)


def post(client, path, body):
    req = urllib.request.Request(client.url + path, data=json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(req) as r:
        return [json.loads(line) for line in r.read().decode().splitlines()]


def test_modelfile_field_system_and_messages_shape_the_prompt(store_serve):
    c = store_serve
    lines = post(c, "/api/create", {"model": "sys", "modelfile":
                                    f"FROM {MODELS / 'tiny-llama'}\nSYSTEM be brief\n"
                                    "MESSAGE user hi\nMESSAGE assistant hello\n"})
    assert lines[-1] == {"status": "success"}
    # The JSON "from" with a Modelfile that has none; a malformed Modelfile names its line.
    lines = post(c, "/api/create", {"model": "sys2", "from": str(MODELS / "tiny-llama"),
                                    "modelfile": "SYSTEM hi\n"})
    assert lines[-1] == {"status": "success"}
    with pytest.raises(urllib.error.HTTPError) as e:
        post(c, "/api/create", {"model": "sys3", "modelfile": f"FROM {MODELS / 'tiny-llama'}\n"
                                                              "SYSTEM ok\nWHAT now\n"})
    assert e.value.code == 400
    assert json.loads(e.value.read())["error"] == "modelfile:3: unknown instruction 'what'"
    ask = [{"role": "user", "content": "what?"}]
    opts = {"num_predict": 1}
    with_model = c.chat(model="sys", messages=ask, options=opts)
    explicit = c.chat(model=str(MODELS / "tiny-llama"), options=opts, messages=[
        {"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"}, *ask])
    plain = c.chat(model=str(MODELS / "tiny-llama"), messages=ask, options=opts)
    assert with_model.prompt_eval_count == explicit.prompt_eval_count > plain.prompt_eval_count
    # A request's own system message replaces the model's SYSTEM.
    own = c.chat(model="sys", options=opts, messages=[{"role": "system", "content": "x"}, *ask])
    assert own.prompt_eval_count < with_model.prompt_eval_count


def test_concurrent_creates_share_blobs(heron_bin, store, tmp_path):
    mf = tmp_path / "Modelfile"
    mf.write_text(f"FROM {MODELS / 'tiny-llama'}\n")
    env = dict(os.environ, HERON_MODELS=str(store))
    procs = [subprocess.Popen([str(heron_bin), "create", f"m{i}", "-f", str(mf), "--quantize",
                               "int4"], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE) for i in range(4)]
    for p in procs:
        assert p.wait(timeout=120) == 0, p.stderr.read()
    digests = {json.dumps(manifest(store, f"m{i}")["layers"]) for i in range(4)}
    assert len(digests) == 1
    assert list((store / "tmp").iterdir()) == []
    assert len(list((store / "blobs").iterdir())) == len(manifest(store, "m0")["layers"]) + 1


def test_mlx_lm_quantized_source_is_copied_not_requantized(create, store, store_serve, tmp_path):
    from mlx_lm import convert

    src = tmp_path / "mlx-q4"
    convert(str(MODELS / "tiny-llama"), mlx_path=str(src), quantize=True, q_bits=4,
            q_group_size=64)
    r = create("conv", f"FROM {src}\n", "--quantize", "int8")
    assert r.returncode == 1 and "already quantized" in r.stderr
    r = create("conv", f"FROM {src}\n")
    assert r.returncode == 0, r.stderr
    ours = load_st(layer(store, "conv", "model.safetensors"))
    theirs = mx.load(str(src / "model.safetensors"))
    assert ours.keys() == theirs.keys()
    assert all(mx.array_equal(ours[k], theirs[k]) for k in ours)
    config = json.loads(layer(store, "conv", "config.json").read_text())
    assert config["quantization"] == {"group_size": 64, "bits": 4, "mode": "affine"}
    # mlx-lm keeps the template in chat_template.jinja; the store has it in tokenizer_config.
    tc = json.loads(layer(store, "conv", "tokenizer_config.json").read_text())
    assert tc["chat_template"] == (src / "chat_template.jinja").read_text()
    assert_answers_like_mlx_lm(store_serve, "conv", src, "over the lazy dog", 10)


def test_client_leaving_cancels_a_create(store_serve, store, default_model):
    import http.client
    from urllib.parse import urlparse

    u = urlparse(store_serve.url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    conn.request("POST", "/api/create", body=json.dumps(
        {"model": "gone", "from": str(default_model), "stream": True}))
    resp = conn.getresponse()
    assert resp.status == 200
    while b"copying" not in resp.readline():
        pass
    conn.sock.close()  # leave mid-copy
    conn.close()
    deadline = time.time() + 30
    while list((store / "tmp").iterdir()) and time.time() < deadline:
        time.sleep(0.05)
    assert list((store / "tmp").iterdir()) == []
    assert list((store / "blobs").iterdir()) == []  # stopped mid-copy, not after
    assert not (store / "manifests" / "library" / "gone").exists()
    assert "gone:latest" not in [m.model for m in store_serve.list().models]


def test_openai_api_lists_store_models_and_applies_their_defaults(store_serve):
    import openai

    store_serve.create(model="oa", from_=str(MODELS / "tiny-llama"),
                       parameters={"num_predict": 2})
    client = openai.OpenAI(base_url=store_serve.url + "/v1", api_key="unused")
    assert "oa:latest" in [m.id for m in client.models.list().data]
    ask = [{"role": "user", "content": "hello"}]
    # Greedy, so the random tiny model cannot sample its end token early.
    r = client.chat.completions.create(model="oa", messages=ask, temperature=0)
    assert r.usage.completion_tokens == 2 and r.choices[0].finish_reason == "length"
    r = client.chat.completions.create(model="oa", messages=ask, temperature=0, max_tokens=4)
    assert r.usage.completion_tokens == 4 and r.choices[0].finish_reason == "length"
    client.close()  # its keep-alive connection would hold the server's shutdown for 5 s


def test_other_quantizers_are_refused(create, tmp_path):
    src = tmp_path / "gptq"
    src.mkdir()
    for f in (MODELS / "tiny-llama").iterdir():
        (src / f.name).symlink_to(f)
    config = json.loads((MODELS / "tiny-llama" / "config.json").read_text())
    config["quantization_config"] = {"quant_method": "gptq", "bits": 4}
    (src / "config.json").unlink()
    (src / "config.json").write_text(json.dumps(config))
    r = create("g", f"FROM {src}\n")
    assert r.returncode == 1 and "quantized with gptq, which heron cannot read" in r.stderr


@pytest.mark.parametrize("modelfile", ["FROM {t5}\n", "FROM {tiny}\nDRAFT {t5}\n"])
def test_architectures_heron_cannot_run_are_refused_before_any_write(create, store, tmp_path,
                                                                      modelfile):
    # A T5 encoder-decoder's config.json shape.
    src = tmp_path / "t5"
    src.mkdir()
    for f in (MODELS / "tiny-llama").iterdir():
        if f.name != "config.json":
            (src / f.name).symlink_to(f)
    (src / "config.json").write_text(json.dumps({
        "architectures": ["T5ForConditionalGeneration"], "model_type": "t5", "d_model": 64,
        "num_layers": 2, "num_heads": 2, "d_ff": 128, "vocab_size": 512}))
    r = create("b", modelfile.format(t5=src, tiny=MODELS / "tiny-llama"))
    assert r.returncode == 1, r.stderr
    assert (f"{src}: unsupported architecture 't5' (supported: deepseek2, gemma3, "
            "gemma3_text, glm4_moe_lite, gpt-oss, gpt_oss, llama, mistral, qwen3, qwen3_5, "
            "qwen3_5_moe, qwen3_moe, qwen3_next, qwen3moe)") in r.stderr
    assert not (store / "manifests" / "library" / "b").exists()
    blobs = store / "blobs"
    assert not blobs.exists() or not any(blobs.iterdir())


def gguf_chat_template(path):
    """tokenizer.chat_template as the PyPI gguf package reads it."""
    import gguf

    field = gguf.GGUFReader(str(path)).fields["tokenizer.chat_template"]
    return bytes(field.parts[field.data[0]]).decode()


def test_show_reports_the_template_the_model_uses(store_serve, create, heron_bin, tmp_path,
                                                  default_model):
    """Ollama's show gives the template a model runs with: a Modelfile TEMPLATE when there
    is one, else the model's own (GGUF metadata or tokenizer_config.json), also for
    models named by path or `default`."""
    c = store_serve
    smol = gguf_chat_template(default_model)
    tiny = json.loads((MODELS / "tiny-llama" / "tokenizer_config.json").read_text())["chat_template"]
    float_gguf = write_gguf(MODELS / "tiny-llama", tmp_path / "tiny.gguf")
    assert gguf_chat_template(float_gguf) == tiny and smol and smol != tiny
    assert create("plain", f"FROM {MODELS / 'tiny-llama'}\n").returncode == 0
    assert create("own", f"FROM {MODELS / 'tiny-llama'}\nTEMPLATE {{{{ x }}}}\n").returncode == 0
    assert create("fromgguf", f"FROM {float_gguf}\n", "--quantize", "int8").returncode == 0
    assert create("smol", f"FROM {default_model}\n").returncode == 0
    for model, want in (("default", smol), (str(default_model), smol),
                        (str(MODELS / "tiny-llama"), tiny), (str(float_gguf), tiny),
                        ("plain", tiny), ("own", "{{ x }}"), ("fromgguf", tiny), ("smol", smol)):
        assert c.show(model).template == want, model
    host = c.url.removeprefix("http://")
    r = subprocess.run([str(heron_bin), "show", "default", "--template"], capture_output=True,
                       text=True, env=dict(os.environ, HERON_HOST=host), timeout=60)
    assert r.returncode == 0 and r.stdout == smol + "\n", r.stderr


def test_a_stored_draft_is_shown_and_speculates_for_its_model(store_serve, create, heron_bin,
                                                            store):
    """Modelfile DRAFT: /api/show and `heron show` report the draft and its DRAFT line, and
    the runner drafts with it: greedy text equals the model's without a draft."""
    c = store_serve
    assert create("solo", f"FROM {MODELS / 'tiny-llama'}\n").returncode == 0
    r = create("pair", f"FROM {MODELS / 'tiny-llama'}\nDRAFT {MODELS / 'tiny-qwen3'}\n",
               "--draft-quantize", "int8")
    assert r.returncode == 0, r.stderr
    shown = c.show("pair")
    assert f"DRAFT {MODELS / 'tiny-qwen3'}\n" in shown.modelfile
    assert "DRAFT" not in c.show("solo").modelfile
    raw = requests_show(c.url, "pair")
    assert raw["draft"]["details"]["family"] == "qwen3"
    assert raw["draft"]["details"]["quantization_level"] == "int8", raw["draft"]
    host = c.url.removeprefix("http://")
    env = dict(os.environ, HERON_HOST=host)
    out = subprocess.run([str(heron_bin), "show", "pair"], capture_output=True, text=True,
                         env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    draft_section = out.stdout.split("  Draft\n", 1)[1].split("\n\n", 1)[0]
    assert "qwen3" in draft_section and "int8" in draft_section, out.stdout
    out = subprocess.run([str(heron_bin), "show", "pair", "--modelfile"], capture_output=True,
                         text=True, env=env, timeout=60)
    assert f"DRAFT {MODELS / 'tiny-qwen3'}\n" in out.stdout
    greedy = {"temperature": 0, "num_predict": 24, "repeat_penalty": 1}
    ask = "hello there"
    # The final line says how the draft did (heron's addition to Ollama's statistics).
    final = post_json(c.url + "/api/generate",
                      {"model": "pair", "prompt": ask, "stream": False, "options": greedy})
    assert final["speculation"]["rounds"] > 0 and final["speculation"]["drafted"] > 0, final
    assert final["response"] == c.generate(model="solo", prompt=ask, options=greedy).response
    # The request option turns it off; a bad value is the client's error.
    off = post_json(c.url + "/api/generate", {"model": "pair", "prompt": ask, "stream": False,
                                              "options": dict(greedy, speculation=False)})
    assert "speculation" not in off and off["response"] == final["response"]
    with pytest.raises(urllib.error.HTTPError) as bad:
        post_json(c.url + "/api/generate", {"model": "pair", "prompt": ask, "stream": False,
                                            "options": {"speculation": "no"}})
    assert bad.value.code == 400 and b"speculation" in bad.value.read()


def post_json(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())


def requests_show(url, model):
    return post_json(url + "/api/show", {"model": model})


def test_show_reports_a_mixtures_experts(store_serve):
    """As Ollama shows them: <architecture>.expert_count and .expert_used_count."""
    c = store_serve
    for name, source, family in (("moe", MODELS / "tiny-qwen3-moe", "qwen3_moe"),
                                 ("moe-gguf", MODELS.parent / "gguf/tiny-qwen3-moe.gguf",
                                  "qwen3moe"),
                                 ("oss", MODELS / "tiny-gpt-oss-mxfp4", "gpt_oss")):
        events = list(c.create(model=name, from_=str(source), stream=True))
        assert events[-1].status == "success"
        info = c.show(name).modelinfo
        assert info[f"{family}.expert_count"] == 8
        assert info[f"{family}.expert_used_count"] == 2


def test_show_reports_a_hybrid_models_linear_attention(store_serve):
    """Qwen3.5's fields from its text_config, the linear attention's as llama.cpp names
    them (ssm.*) and the attention layers' interval."""
    c = store_serve
    events = list(c.create(model="q5", from_=str(MODELS / "tiny-qwen3-5"), stream=True))
    assert events[-1].status == "success"
    info = c.show("q5").modelinfo
    assert info["qwen3_5.block_count"] == 4
    assert info["qwen3_5.embedding_length"] == 64
    assert info["qwen3_5.ssm.conv_kernel"] == 4
    assert info["qwen3_5.ssm.state_size"] == 16
    assert info["qwen3_5.ssm.group_count"] == 2
    assert info["qwen3_5.full_attention_interval"] == 4
