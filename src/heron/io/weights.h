#pragma once
// Loads validated weight files into MLX arrays.
#include <filesystem>
#include <string>
#include <unordered_map>

#include <mlx/array.h>

#include "heron/io/gguf.h"

namespace heron::io {

using WeightMap = std::unordered_map<std::string, mlx::core::array>;

// A Hugging Face directory: model.safetensors, or the shards listed in
// model.safetensors.index.json. Shard names must be plain file names in `dir`; every
// shard header is validated before any is loaded, every indexed name must be in the
// shard the index names, and no name may come from two shards. Arrays are lazy (MLX
// reads the bytes on first eval). F64 tensors are refused (MLX has no F64 reader).
WeightMap load_safetensors_dir(const std::filesystem::path& dir);
// One validated safetensors file (lazy arrays, F64 refused).
WeightMap load_safetensors_file(const std::filesystem::path& path);

// Tensors of a validated GGUF file through mlx::core::load_gguf. Names stay as in the
// file; shapes are the GGUF dims reversed (row-major, last axis fastest).
//  - F32, F16: same dtype. BF16: read exactly as bfloat16 (MLX itself would convert
//    to float16, turning values above 65504 into inf).
//  - Q4_0, Q4_1, Q8_0 named P.weight become three arrays, MLX affine format with
//    group size 32 along the last axis (use with quantized_matmul / dequantize,
//    group_size 32, bits 4 or 8):
//      P.weight uint32 [.., K*bits/32], P.scales float16 [.., K/32], P.biases float16 [.., K/32]
//    e.g. SmolLM2-135M Q4_1 blk.0.attn_q.weight (GGUF dims [576, 576]) gives
//    weight uint32 [576, 72], scales/biases float16 [576, 18]; the Q8_0 token_embd.weight
//    (GGUF dims [576, 49152]) gives weight uint32 [49152, 144], scales/biases [49152, 18].
// Refused with a heron::Error, before MLX reads anything:
//  - any other tensor type ("unsupported tensor type Q6_K (14)");
//  - quantized tensors not named P.weight (MLX would mangle the scales/biases names);
//  - float64 or array-of-arrays metadata (MLX 0.32's reader crashes or misreads them);
//  - a file without write permission (MLX's gguflib opens the file O_RDWR).
WeightMap load_gguf_tensors(const GGUFHeader& header);

}  // namespace heron::io
