#pragma once
// ggml's quantized block formats turned into MLX's affine form (value = scale * q + bias
// per group, q packed low bits first into uint32 words), which our CPU kernels and
// MLX's quantized_matmul read. Every supported type maps exactly: its sub-block scales
// and mins are an affine scale and bias, its integer codes fit the target width.
//
//   Q4_0, Q4_1, Q4_K          -> 4 bits, groups of 32
//   Q5_0, Q5_1, Q5_K          -> 5 bits, groups of 32 (MLX packs 5-bit codes as one bit
//                                stream, 8 codes in 5 bytes)
//   Q8_0                      -> 8 bits, groups of 32
//   Q2_K, Q3_K                -> 4 bits, groups of 16 (their sub-blocks are 16 long)
//   Q6_K                      -> 8 bits, groups of 16
//
// Scales and biases are float32 products of the block's float16 scale and its integer
// sub-block scale: exact, so dequantized values equal ggml's (gguf-py's) to the last
// bit wherever ggml computes them with one rounding, and within one float32 rounding
// for Q6_K (ggml multiplies scale by a signed code; we add a bias).
#include <cstdint>
#include <optional>
#include <string>

#include <mlx/array.h>

namespace heron::io {

struct AffineForm {
  int bits;
  int group_size;
};

// The affine form a ggml type id maps to; nullopt for float and unsupported types.
std::optional<AffineForm> ggml_affine_form(uint32_t type);

struct AffineTensor {
  mlx::core::array weight;  // uint32 [rows, cols * bits / 32]
  mlx::core::array scales;  // float32 [rows, cols / group_size]
  mlx::core::array biases;  // float32 [rows, cols / group_size]
};

// `rows` rows of `cols` values stored as `type` blocks at `data` (rows * cols /
// block_size blocks; the caller has checked the byte count and that cols is a multiple
// of the block size). A block whose float16 scale is infinite or NaN is malformed:
// heron::Error "PATH: tensor 'NAME' block N has a non-finite scale".
AffineTensor ggml_blocks_to_affine(uint32_t type, const uint8_t* data, int64_t rows, int64_t cols,
                                   const std::string& path, const std::string& tensor);

// The same values as float32 [count], for quantized tensors that are not matrices.
mlx::core::array ggml_blocks_to_float(uint32_t type, const uint8_t* data, int64_t count,
                                      const std::string& path, const std::string& tensor);

}  // namespace heron::io
