"""The model name 'gemma3' (Gemma 3 270M, Q4_K_M GGUF: k-quants and sliding-window
layers) through `heron serve` and the unmodified ollama and openai clients, against
llama.cpp (llama-cpp-python) generating greedily from the same file in the same run."""
import ollama
import openai
import pytest

# Prompts whose greedy continuation in llama.cpp has no top-2 margin below 0.15 for at
# least 12 tokens (tools/make_gemma3_reference.py prints the margins), so an exact
# implementation must give the same text.
PROMPTS = ["The sky is blue because", "Three fruits that are red: apples,"]
TOKENS = 12
# Plain greedy decoding, as llama.cpp's create_completion(temperature=0) does (Ollama's
# defaults would add a repeat penalty).
GREEDY = {"temperature": 0, "repeat_penalty": 1.0, "num_predict": TOKENS}


@pytest.fixture(scope="module")
def llama_cpp_text(gemma3_model):
    from llama_cpp import Llama

    llm = Llama(model_path=str(gemma3_model), n_ctx=256, n_threads=2, verbose=False)
    texts = {}
    for p in PROMPTS:
        out = llm.create_completion(p, max_tokens=TOKENS, temperature=0)
        texts[p] = out["choices"][0]["text"]
    return texts


@pytest.mark.parametrize("prompt", PROMPTS)
def test_ollama_generate_matches_llama_cpp(serve, llama_cpp_text, prompt):
    client = ollama.Client(host=serve.url, timeout=120)
    r = client.generate(model="gemma3", prompt=prompt, raw=True,
                        options=GREEDY)
    assert r.response == llama_cpp_text[prompt]
    assert r.eval_count == TOKENS


def test_openai_completion_and_listing(serve, llama_cpp_text):
    client = openai.OpenAI(base_url=serve.url + "/v1", api_key="unused", timeout=120)
    assert "gemma3:latest" in [m.id for m in client.models.list()]
    prompt = PROMPTS[0]
    r = client.completions.create(model="gemma3", prompt=prompt, max_tokens=TOKENS,
                                  temperature=0)
    assert r.choices[0].text == llama_cpp_text[prompt]
