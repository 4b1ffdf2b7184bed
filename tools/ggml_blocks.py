"""ggml's quantized blocks (raw GGUF tensor bytes) in MLX's affine form, with numpy.

The same mapping as heron's loader (src/heron/io/ggml_blocks.cpp): value = scale * q +
bias per group of 32, integer codes q packed as one little-endian bit stream per row
(code i at bit bits * i, as mx.quantize lays them out), scales and biases float32.
Nothing is re-quantized: each block's scales and mins are an affine scale and bias
whose float32 products are exact, so mx.dequantize gives ggml's values.

    Q4_0, Q4_1, Q4_K      -> 4 bits
    Q5_0, Q5_1, Q5_K      -> 5 bits (or widened to 8: five_bits=8)
    Q8_0                  -> 8 bits (codes shifted by 128, bias -128 d)
    Q2_K, Q3_K, Q6_K      -> no affine form: their scales cover 16 values and MLX's
                             quantized_matmul takes groups of 32, 64, 128 only (mlx 0.32
                             refuses group 16 in mx.quantize and returns NaN from
                             quantized_matmul). Dequantized to float32 instead, which is
                             exact for Q6_K (d * sc * (q - 32) fits 24 bits).

    blocks_to_affine(raw, qtype, rows, cols) -> (weight uint32, scales, biases, bits)
    check_exact(raw, qtype, weight, scales, biases, bits) -> mismatching values
"""
import gguf
import numpy as np

GROUP = 32
T = gguf.GGMLQuantizationType
FLOAT_TYPES = (T.F32, T.F16, T.BF16)
FLOAT_FALLBACK = (T.Q2_K, T.Q3_K, T.Q6_K)


def _f16(b):
    """float16 fields [n, 2] uint8 -> float32 [n, 1]."""
    return np.ascontiguousarray(b).view(np.float16).astype(np.float32)


def _nibbles(qs):
    """Two 4-bit codes per byte, low nibbles first: [n, k] -> [n, 2k]."""
    return np.concatenate([qs & 0xF, qs >> 4], axis=-1)


def _high_bits(qh, n_codes):
    """Bit j of each block's little-endian bit mask, as 0/16: [n, n_codes / 8] -> [n, n_codes]."""
    bits = np.unpackbits(np.ascontiguousarray(qh), axis=-1, bitorder="little")
    return bits[:, :n_codes] << 4


def _q4_0(b):
    d = _f16(b[:, 0:2])
    return _nibbles(b[:, 2:18]), d, -8.0 * d


def _q4_1(b):
    return _nibbles(b[:, 4:20]), _f16(b[:, 0:2]), _f16(b[:, 2:4])


def _q5_0(b):
    d = _f16(b[:, 0:2])
    return _nibbles(b[:, 6:22]) | _high_bits(b[:, 2:6], 32), d, -16.0 * d


def _q5_1(b):
    return _nibbles(b[:, 8:24]) | _high_bits(b[:, 4:8], 32), _f16(b[:, 0:2]), _f16(b[:, 2:4])


def _q8_0(b):
    d = _f16(b[:, 0:2])
    q = (b[:, 2:34].view(np.int8).astype(np.int16) + 128).astype(np.uint8)
    return q, d, -128.0 * d


def _k_scales_mins(s):
    """Eight 6-bit scales and mins from 12 bytes (Q4_K, Q5_K): [n, 12] -> [n, 8] each."""
    sc = np.concatenate([s[:, 0:4] & 63, (s[:, 8:12] & 0xF) | ((s[:, 0:4] >> 6) << 4)], axis=-1)
    mn = np.concatenate([s[:, 4:8] & 63, (s[:, 8:12] >> 4) | ((s[:, 4:8] >> 6) << 4)], axis=-1)
    return sc.astype(np.float32), mn.astype(np.float32)


def _k_groups(b):
    d, dmin = _f16(b[:, 0:2]), _f16(b[:, 2:4])
    sc, mn = _k_scales_mins(b[:, 4:16])
    return d * sc, -(dmin * mn)


def _k_nibbles(qs):
    """4-bit codes of a K block: 32 bytes per 64 values, low nibbles first."""
    n = qs.shape[0]
    return _nibbles(qs.reshape(n, 4, 32)).reshape(n, 256)


def _q4_k(b):
    return (_k_nibbles(b[:, 16:144]), *_k_groups(b))


def _q5_k(b):
    # Bit e // 32 of byte e % 32 of qh: the 256 high bits, one plane of 32 per bit.
    high = np.unpackbits(np.ascontiguousarray(b[:, 16:48]), axis=-1, bitorder="little")
    high = high.reshape(-1, 32, 8).transpose(0, 2, 1).reshape(-1, 256)
    return (_k_nibbles(b[:, 48:176]) | (high << 4), *_k_groups(b))


# type -> (bits of its codes, decoder of [n_blocks, type_size] bytes -> codes, scales, biases)
AFFINE = {
    T.Q4_0: (4, _q4_0), T.Q4_1: (4, _q4_1), T.Q4_K: (4, _q4_k),
    T.Q5_0: (5, _q5_0), T.Q5_1: (5, _q5_1), T.Q5_K: (5, _q5_k),
    T.Q8_0: (8, _q8_0),
}


def affine_bits(qtype, five_bits=5):
    """Bits of the affine form of qtype, None where it has none (floats, FLOAT_FALLBACK)."""
    if qtype not in AFFINE:
        return None
    bits = AFFINE[qtype][0]
    return five_bits if bits == 5 else bits


def pack(codes, bits):
    """Codes [rows, cols] (< 2**bits) -> uint32 [rows, cols * bits / 32] in MLX's layout."""
    rows, cols = codes.shape
    if bits == 8:
        return np.ascontiguousarray(codes, dtype=np.uint8).view("<u4")
    # Eight codes fill exactly `bits` bytes of the stream.
    c = codes.reshape(rows, cols // 8, 8).astype("<u8")
    v = (c << (np.arange(8, dtype="<u8") * np.uint64(bits))).sum(axis=-1, dtype="<u8")
    stream = v[..., None].view(np.uint8)[..., :bits]
    return np.ascontiguousarray(stream).reshape(rows, cols * bits // 8).view("<u4")


def blocks_to_affine(raw, qtype, rows, cols, five_bits=5):
    """Raw blocks of a [rows, cols] tensor -> (weight uint32, scales f32, biases f32, bits)."""
    if qtype not in AFFINE:
        raise ValueError(f"{qtype.name} has no MLX affine form")
    if five_bits not in (5, 8):
        raise ValueError("five_bits must be 5 or 8")
    block_size, type_size = gguf.GGML_QUANT_SIZES[qtype]
    if cols % block_size:
        raise ValueError(f"{cols} columns are not whole {qtype.name} blocks")
    blocks = np.ascontiguousarray(raw, dtype=np.uint8).reshape(-1, type_size)
    codes, scales, biases = AFFINE[qtype][1](blocks)
    bits = affine_bits(qtype, five_bits)
    groups = cols // GROUP
    return (pack(codes.reshape(rows, cols), bits),
            scales.astype(np.float32).reshape(rows, groups),
            biases.astype(np.float32).reshape(rows, groups), bits)


def blocks_to_float(raw, qtype):
    """ggml's own dequantization (gguf-py), float32, in the tensor's row-major shape."""
    return np.asarray(gguf.quants.dequantize(raw, qtype), dtype=np.float32)


def check_exact(raw, qtype, weight, scales, biases, bits):
    """Values where mx.dequantize of the affine form differs from gguf-py's dequantization
    of the raw blocks (0 when exact), and the largest difference."""
    import mlx.core as mx

    ref = blocks_to_float(raw, qtype).reshape(weight.shape[0], -1)
    got = np.array(mx.dequantize(mx.array(weight), mx.array(scales), mx.array(biases),
                                 group_size=GROUP, bits=bits))
    diff = got != ref
    return int(diff.sum()), float(np.abs(got - ref).max()) if diff.any() else 0.0
