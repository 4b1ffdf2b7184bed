#!/usr/bin/env python3
"""Write tests/fixtures/gguf/quant_types.gguf: one tensor of every GGUF block type heron
loads, written by the PyPI gguf package, next to gguf's own dequantization of it.

    .venv/bin/python tools/make_gguf_quant_fixture.py [OUT]

For each type T (Q4_0 ... Q6_K): `T.weight`, 3 rows x 512 columns of seeded random
blocks (every float16 scale field replaced by a finite random value, so every block is
valid), and `ref.T`, F32 [3, 512] = gguf.quants.dequantize of those bytes. Plus
`vec.T` for two types: a 1-D block tensor (heron dequantizes it to float32) with
`ref.vec.T`; and the same for MXFP4 (`MXFP4.weight`, `ref.MXFP4`, `vec.MXFP4`,
`ref.vec.MXFP4`). tests/unit/gguf_quants_test.cpp compares heron's conversion with the refs.
"""
import sys
from pathlib import Path

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q

ROWS, COLS = 3, 512
# Byte ranges of each block's float16 fields (d, dmin or m), from ggml's block structs.
HALF_FIELDS = {
    Q.Q4_0: [0], Q.Q4_1: [0, 2], Q.Q5_0: [0], Q.Q5_1: [0, 2], Q.Q8_0: [0],
    Q.Q2_K: [80, 82], Q.Q3_K: [108], Q.Q4_K: [0, 2], Q.Q5_K: [0, 2], Q.Q6_K: [208],
}


def random_blocks(rng: np.random.Generator, qtype: Q, count: int) -> np.ndarray:
    block_size, type_size = gguf.GGML_QUANT_SIZES[qtype]
    blocks = rng.integers(0, 256, size=(count // block_size, type_size), dtype=np.uint8)
    for at in HALF_FIELDS[qtype]:
        halves = (rng.standard_normal(len(blocks)) * 0.02).astype(np.float16)
        blocks[:, at:at + 2] = halves.view(np.uint8).reshape(-1, 2)
    return blocks


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else
               Path(__file__).resolve().parent.parent / "tests/fixtures/gguf/quant_types.gguf")
    out.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(20261204)
    writer = gguf.GGUFWriter(str(out), "heron-quant-fixture")
    for qtype in HALF_FIELDS:
        blocks = random_blocks(rng, qtype, ROWS * COLS).reshape(ROWS, -1)
        writer.add_tensor(f"{qtype.name}.weight", blocks, raw_dtype=qtype)
        ref = gguf.quants.dequantize(blocks, qtype).astype(np.float32)
        assert ref.shape == (ROWS, COLS) and np.isfinite(ref).all()
        writer.add_tensor(f"ref.{qtype.name}", ref)
    for qtype in (Q.Q8_0, Q.Q6_K):
        blocks = random_blocks(rng, qtype, 256).reshape(-1)
        writer.add_tensor(f"vec.{qtype.name}", blocks, raw_dtype=qtype)
        writer.add_tensor(f"ref.vec.{qtype.name}",
                          gguf.quants.dequantize(blocks, qtype).astype(np.float32).reshape(256))
    # MXFP4 (gpt-oss): a scale byte (E8M0, random in 2^-17..2^13, never 255: NaN) and 16
    # bytes of FP4 codes a block; heron keeps the codes as MLX's mxfp4.
    for name, count in (("MXFP4.weight", ROWS * COLS), ("vec.MXFP4", 256)):
        blocks = rng.integers(0, 256, size=(count // 32, 17), dtype=np.uint8)
        blocks[:, 0] = rng.integers(110, 141, size=len(blocks), dtype=np.uint8)
        blocks = blocks.reshape(ROWS, -1) if name.endswith(".weight") else blocks.reshape(-1)
        writer.add_tensor(name, blocks, raw_dtype=Q.MXFP4)
        ref = gguf.quants.dequantize(blocks, Q.MXFP4).astype(np.float32)
        writer.add_tensor("ref." + name.replace(".weight", ""), ref)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    print(out)


if __name__ == "__main__":
    main()
