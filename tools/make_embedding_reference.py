#!/usr/bin/env python3
"""Records sentence-transformers' embeddings of all-MiniLM-L6-v2 for the embedding tests.

Run with a Python that has sentence-transformers (not in the test requirements: it needs
torch), e.g. `python tools/make_embedding_reference.py .venv/models/all-MiniLM-L6-v2`.
Writes tests/fixtures/embeddings/: sentences.json (200 texts: sentences of this
repository's docs, plus texts that probe the tokenizer and truncation), minilm.npy
(their embeddings, float32 [200, 384]) and pooling_modes.json (the first 8 texts embedded
with each other pooling mode sentence-transformers has, without Normalize).
"""
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
from sentence_transformers import SentenceTransformer

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests/fixtures/embeddings"

SPECIAL = [
    "",
    "Hello",
    "Überraschung! Ça va très bien, merci.",
    "東京は日本の首都です。北京是中国的首都。",
    "Emoji 🙂 and symbols: ∑ ≤ ∞ — “quotes”",
    "   leading and trailing spaces   ",
    "UPPER case, lower case, MiXeD case.",
    "numbers 3.14159 2,718 1e-9 0x1F",
    "a " * 300,  # over the 256-token limit: truncated
    " ".join(f"word{i}" for i in range(400)),  # long and unusual words
]


def sentences():
    text = " ".join(
        (ROOT / p).read_text() for p in ["README.md", "docs/architecture.md", "docs/benchmarks.md"]
    )
    text = re.sub(r"[`*|#>\[\]()_]", " ", text)
    seen, out = set(), []
    for s in re.split(r"(?<=[.!?])\s+", text):
        s = " ".join(s.split())
        if 30 <= len(s) <= 400 and s not in seen:
            seen.add(s)
            out.append(s)
    step = max(1, len(out) // 190)
    return SPECIAL + out[::step][: 200 - len(SPECIAL)]


def with_pooling(model_dir, tmp, mode):
    d = Path(tmp) / mode
    shutil.copytree(model_dir, d)
    config = json.loads((d / "1_Pooling/config.json").read_text())
    for k in list(config):
        if k.startswith("pooling_mode_"):
            config[k] = False
    config[f"pooling_mode_{mode}"] = True
    (d / "1_Pooling/config.json").write_text(json.dumps(config))
    modules = json.loads((d / "modules.json").read_text())
    (d / "modules.json").write_text(json.dumps([m for m in modules if "Normalize" not in m["type"]]))
    return d


def main():
    model_dir = Path(sys.argv[1])
    texts = sentences()
    assert len(texts) == 200, len(texts)
    model = SentenceTransformer(str(model_dir), device="cpu")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "sentences.json").write_text(json.dumps(texts, ensure_ascii=False, indent=0) + "\n")
    np.save(OUT / "minilm.npy", model.encode(texts, convert_to_numpy=True).astype(np.float32))
    modes = {}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in ["cls_token", "max_tokens", "mean_sqrt_len_tokens", "lasttoken", "mean_tokens"]:
            m = SentenceTransformer(str(with_pooling(model_dir, tmp, mode)), device="cpu")
            modes[mode] = [[float(f"{x:.7g}") for x in row] for row in m.encode(texts[:8])]
    (OUT / "pooling_modes.json").write_text(json.dumps(modes) + "\n")


if __name__ == "__main__":
    main()
