#!/usr/bin/env python3
"""Write tiny random Hugging Face model directories for heron's tests.

Everything is deterministic (fixed seeds, single-threaded tokenizer training),
so running this again reproduces byte-identical files.

    .venv/bin/python tools/make_tiny_models.py [--out tests/fixtures/models] [--no-check]

Models written (all float32 safetensors):
  tiny-llama          LlamaForCausalLM, 2 layers, hidden 64, 4 heads / 2 kv heads,
                      head_dim 16, intermediate 128, untied embeddings
  tiny-llama3         same, tied embeddings, llama3 rope_scaling with a small
                      original_max_position_embeddings (64) so scaling matters
  tiny-qwen3          Qwen3ForCausalLM, head_dim 32 (!= hidden/heads), q_norm/k_norm,
                      tied embeddings
  tiny-llama-sharded  tiny-llama's weights split over 2 shards + index.json

Weights: N(0, 0.02), except q_proj/k_proj N(0, 0.1) (see QK_STD); norm
weights 1 + N(0, 0.2). Each directory also gets a byte-level BPE tokenizer (vocab 512) trained on the
built-in text below, with <|endoftext|>, <|im_start|>, <|im_end|> specials and
a ChatML chat_template.
"""
import argparse
import json
import os
import shutil
import sys
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("OMP_NUM_THREADS", "2")

import numpy as np  # noqa: E402
from safetensors.numpy import save_file  # noqa: E402

VOCAB_SIZE = 512
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
WEIGHT_STD = 0.02
# q_proj/k_proj get a larger std: with 0.02 everywhere the attention scores are
# ~0.03 and softmax is nearly uniform, so a wrong RoPE (theta, scaling, offset)
# moves the logits by only ~5e-3. With 0.1 the scores are O(1) and such bugs
# move the logits by O(0.1), far above float32 noise.
QK_STD = 0.1

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)

# A fixed English text (written for this file) for training the tokenizer.
TRAINING_TEXT = """\
The heron stood in the shallow water at the edge of the lake, still as a post,
watching the small fish move between the reeds. Early in the morning the mist
lay low over the water and the light came slowly through the trees on the far
shore. When a fish came close enough, the bird struck quickly and then stood
still again, as if nothing had happened at all.

People who live near the lake know the heron well. They see it every day in
spring and summer, and sometimes in winter when the water does not freeze. The
children give it names, and the older people tell stories about the years when
there were many more birds along the river and the fishing was better.

A language model reads text as a sequence of tokens. Each token is a small
piece of a word, a whole word, a number, or a mark of punctuation. The model
predicts the next token from the ones before it, one step at a time, and the
program that runs the model turns those predictions back into text. To do this
quickly, the program keeps a cache of keys and values for every layer, so that
each new token only needs a little more work instead of starting over.

Here is a short list of things to remember:
1. Check the input before you use it.
2. Keep the tests small, fast and deterministic.
3. Measure the speed before you try to make it faster.
4. Write down what you learned, so that others can learn it too.

def add(a, b):
    return a + b

for i in range(10):
    print(i, add(i, i * 2))

The numbers 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 42, 100, 256, 1024 and 65536 come
up again and again in programs. So do words like if, else, while, return, true,
false, null, and the names of the days: Monday, Tuesday, Wednesday, Thursday,
Friday, Saturday and Sunday.

<|im_start|>system
You are a helpful assistant.<|im_end|>
<|im_start|>user
What is the capital of France?<|im_end|>
<|im_start|>assistant
The capital of France is Paris.<|im_end|>
<|im_start|>user
And what river runs through it?<|im_end|>
<|im_start|>assistant
The Seine runs through Paris, from the east to the west of the city.<|im_end|>

In the evening the wind came up from the south and the water turned grey and
rough. The heron lifted its wide wings, flew low across the lake with slow and
heavy beats, and settled in a tall tree where it would spend the night. Then
the lake was quiet, and only the sound of the waves on the stones remained.
"""


# ----------------------------------------------------------------------------
# tokenizer


def train_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        min_frequency=1,
        show_progress=False,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    # Repeat the text so merge counts are not all tied at 1.
    lines = TRAINING_TEXT.split("\n")
    tok.train_from_iterator(lines * 3, trainer=trainer)
    vs = tok.get_vocab_size()
    if vs != VOCAB_SIZE:
        raise SystemExit(f"tokenizer has {vs} tokens, expected {VOCAB_SIZE}")
    return tok


def write_tokenizer(tok, out: Path):
    tok.save(str(out / "tokenizer.json"))
    ids = {t: tok.token_to_id(t) for t in SPECIAL_TOKENS}
    added = {
        str(ids[t]): {
            "content": t,
            "lstrip": False,
            "normalized": False,
            "rstrip": False,
            "single_word": False,
            "special": True,
        }
        for t in SPECIAL_TOKENS
    }
    cfg = {
        "add_bos_token": False,
        "add_eos_token": False,
        "added_tokens_decoder": added,
        "additional_special_tokens": ["<|im_start|>", "<|im_end|>"],
        "bos_token": "<|endoftext|>",
        "chat_template": CHAT_TEMPLATE,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>",
        "model_max_length": 512,
        "pad_token": "<|endoftext|>",
        "tokenizer_class": "PreTrainedTokenizerFast",
        "unk_token": None,
    }
    (out / "tokenizer_config.json").write_text(json.dumps(cfg, indent=2) + "\n")
    (out / "special_tokens_map.json").write_text(
        json.dumps(
            {
                "additional_special_tokens": ["<|im_start|>", "<|im_end|>"],
                "bos_token": "<|endoftext|>",
                "eos_token": "<|im_end|>",
                "pad_token": "<|endoftext|>",
            },
            indent=2,
        )
        + "\n"
    )
    return ids


# ----------------------------------------------------------------------------
# weights


def _normal(rng, shape, std=WEIGHT_STD):
    return (rng.standard_normal(shape) * std).astype(np.float32)


def _norm(rng, n):
    # Around 1, but clearly not 1, so a missing/misapplied norm weight shows up.
    return (1.0 + 0.2 * rng.standard_normal(n)).astype(np.float32)


def make_weights(cfg: dict, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    H = cfg["hidden_size"]
    V = cfg["vocab_size"]
    I = cfg["intermediate_size"]
    nh = cfg["num_attention_heads"]
    nkv = cfg["num_key_value_heads"]
    hd = cfg["head_dim"]
    qk_norm = cfg["model_type"] == "qwen3"
    w = {}
    w["model.embed_tokens.weight"] = _normal(rng, (V, H))
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = _norm(rng, H)
        w[p + "self_attn.q_proj.weight"] = _normal(rng, (nh * hd, H), QK_STD)
        w[p + "self_attn.k_proj.weight"] = _normal(rng, (nkv * hd, H), QK_STD)
        w[p + "self_attn.v_proj.weight"] = _normal(rng, (nkv * hd, H))
        w[p + "self_attn.o_proj.weight"] = _normal(rng, (H, nh * hd))
        if qk_norm:
            w[p + "self_attn.q_norm.weight"] = _norm(rng, hd)
            w[p + "self_attn.k_norm.weight"] = _norm(rng, hd)
        w[p + "post_attention_layernorm.weight"] = _norm(rng, H)
        w[p + "mlp.gate_proj.weight"] = _normal(rng, (I, H))
        w[p + "mlp.up_proj.weight"] = _normal(rng, (I, H))
        w[p + "mlp.down_proj.weight"] = _normal(rng, (H, I))
    w["model.norm.weight"] = _norm(rng, H)
    if not cfg["tie_word_embeddings"]:
        w["lm_head.weight"] = _normal(rng, (V, H))
    return dict(sorted(w.items()))


# ----------------------------------------------------------------------------
# configs


def base_config(vocab_size, special_ids):
    return {
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 16,
        "hidden_act": "silu",
        "rms_norm_eps": 1e-5,
        "rope_theta": 10000.0,
        "max_position_embeddings": 256,
        "vocab_size": vocab_size,
        "attention_bias": False,
        "attention_dropout": 0.0,
        "initializer_range": WEIGHT_STD,
        "bos_token_id": special_ids["<|endoftext|>"],
        "eos_token_id": special_ids["<|im_end|>"],
        "pad_token_id": special_ids["<|endoftext|>"],
        "torch_dtype": "float32",
        "use_cache": True,
    }


def llama_config(vocab_size, special_ids):
    c = base_config(vocab_size, special_ids)
    c.update(
        architectures=["LlamaForCausalLM"],
        model_type="llama",
        mlp_bias=False,
        pretraining_tp=1,
        rope_scaling=None,
        tie_word_embeddings=False,
    )
    return c


def llama3_config(vocab_size, special_ids):
    c = llama_config(vocab_size, special_ids)
    c.update(
        tie_word_embeddings=True,
        max_position_embeddings=512,
        rope_scaling={
            "rope_type": "llama3",
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 64,
        },
    )
    return c


def qwen3_config(vocab_size, special_ids):
    c = base_config(vocab_size, special_ids)
    c.update(
        architectures=["Qwen3ForCausalLM"],
        model_type="qwen3",
        head_dim=32,
        rope_theta=1000000.0,
        max_position_embeddings=512,
        rope_scaling=None,
        sliding_window=None,
        use_sliding_window=False,
        max_window_layers=2,
        tie_word_embeddings=True,
    )
    return c


def generation_config(special_ids):
    return {
        "bos_token_id": special_ids["<|endoftext|>"],
        "eos_token_id": special_ids["<|im_end|>"],
        "pad_token_id": special_ids["<|endoftext|>"],
    }


def write_json(path: Path, obj):
    path.write_text(json.dumps(obj, indent=2, sort_keys=True) + "\n")


def write_model(out: Path, cfg: dict, weights: dict, tok, special_ids, shards: int = 1):
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    write_json(out / "config.json", cfg)
    write_json(out / "generation_config.json", generation_config(special_ids))
    write_tokenizer(tok, out)
    meta = {"format": "pt"}
    if shards == 1:
        save_file(weights, str(out / "model.safetensors"), metadata=meta)
        return
    names = list(weights)
    per = (len(names) + shards - 1) // shards
    weight_map = {}
    total = 0
    for s in range(shards):
        fname = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
        part = {n: weights[n] for n in names[s * per : (s + 1) * per]}
        save_file(part, str(out / fname), metadata=meta)
        for n, a in part.items():
            weight_map[n] = fname
            total += a.nbytes
    write_json(
        out / "model.safetensors.index.json",
        {"metadata": {"total_size": total}, "weight_map": weight_map},
    )


def check_loads(path: Path):
    import mlx.core as mx
    from mlx_lm import load

    model, tokenizer = load(str(path))
    ids = tokenizer.encode("The heron stood in the water.")
    logits = model(mx.array([ids]))
    mx.eval(logits)
    assert logits.shape == (1, len(ids), tokenizer.vocab_size if hasattr(tokenizer, "vocab_size") else logits.shape[-1])
    chat = tokenizer.apply_chat_template(
        [{"role": "user", "content": "Hi"}], add_generation_prompt=True, tokenize=False
    )
    print(f"  {path.name}: mlx_lm.load ok, logits {tuple(logits.shape)}, "
          f"{len(ids)} ids, chat={chat!r}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    root = Path(__file__).resolve().parent.parent
    ap.add_argument("--out", type=Path, default=root / "tests/fixtures/models")
    ap.add_argument("--no-check", action="store_true", help="skip the mlx_lm.load check")
    args = ap.parse_args()

    tok = train_tokenizer()
    special_ids = {t: tok.token_to_id(t) for t in SPECIAL_TOKENS}
    V = tok.get_vocab_size()
    args.out.mkdir(parents=True, exist_ok=True)

    specs = [
        ("tiny-llama", llama_config(V, special_ids), 1001, 1),
        ("tiny-llama3", llama3_config(V, special_ids), 1002, 1),
        ("tiny-qwen3", qwen3_config(V, special_ids), 1003, 1),
        ("tiny-llama-sharded", llama_config(V, special_ids), 1001, 2),  # same seed as tiny-llama
    ]
    for name, cfg, seed, shards in specs:
        weights = make_weights(cfg, seed)
        write_model(args.out / name, cfg, weights, tok, special_ids, shards)
        nbytes = sum(a.nbytes for a in weights.values())
        print(f"wrote {name}: {len(weights)} tensors, {nbytes / 1024:.0f} KiB, shards={shards}")

    if not args.no_check:
        for name, *_ in specs:
            check_loads(args.out / name)


if __name__ == "__main__":
    sys.exit(main())
