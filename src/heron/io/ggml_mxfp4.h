#pragma once
// ggml's MXFP4 blocks (gpt-oss GGUFs) as MLX's mxfp4: the same FP4 E2M1 codes and E8M0
// scales, repacked. A ggml block is 17 bytes for 32 values: the scale byte, then 16 bytes
// where byte j holds value j in its low nibble and value j + 16 in its high one. MLX packs
// a row's codes in order, two a byte (value 2i low, 2i + 1 high), eight a uint32 word, with
// the scale bytes apart. The codes are copied, not decoded, so the values are exactly
// ggml's.
#include <cstdint>
#include <string>

#include <mlx/array.h>

namespace heron::io {

struct Mxfp4Tensor {
  mlx::core::array weight;  // uint32 [rows, cols / 8]
  mlx::core::array scales;  // uint8 [rows, cols / 32]
};

// `rows` rows of `cols` values (cols a multiple of 32) in MXFP4 blocks at `data`. A scale
// byte of 255 (E8M0's NaN) is malformed: heron::Error "PATH: tensor 'NAME' block N has a
// NaN scale".
Mxfp4Tensor ggml_mxfp4_to_mlx(const uint8_t* data, int64_t rows, int64_t cols,
                              const std::string& path, const std::string& tensor);

// The same values as float32 [count], for MXFP4 tensors that are not matrices.
mlx::core::array ggml_mxfp4_to_float(const uint8_t* data, int64_t count, const std::string& path,
                                     const std::string& tensor);

}  // namespace heron::io
