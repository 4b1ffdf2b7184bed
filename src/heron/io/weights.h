#pragma once
// Loads validated weight files into MLX arrays.
#include <filesystem>
#include <map>
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

// Tensors of a validated GGUF file, read and converted by us. Names stay as in the
// file; shapes are the GGUF dims reversed (row-major, last axis fastest).
//  - F32, F16, BF16: the same dtype, read exactly.
//  - Block types (ggml_blocks.h) named P.weight with two or more dims become MLX's
//    affine triple along the last axis, exactly (bits and group size per type):
//      P.weight uint32 [.., K*bits/32], P.scales float32 [.., K/group], P.biases likewise
//    e.g. SmolLM2-135M Q4_1 blk.0.attn_q.weight (GGUF dims [576, 576]) gives weight
//    uint32 [576, 72], scales/biases [576, 18]; a Q6_K [2048, 640] ffn_down gives weight
//    [640, 512] and scales/biases [640, 128] (8 bits, groups of 16).
//  - MXFP4 matrices (gpt-oss's experts) become MLX's mxfp4: P.weight uint32 [.., K/8] and
//    P.scales uint8 [.., K/32], the codes repacked, not decoded (ggml_mxfp4.h).
//  - Block-type tensors that are not such matrices are dequantized to float32.
// Refused with a heron::Error naming the file and tensor, before any data is read:
// other tensor types ("unsupported tensor type IQ2_XXS (16) (supported: ...)") and
// names that would clash with a generated P.scales / P.biases. Malformed blocks (a
// non-finite scale) are refused as they are read.
WeightMap load_gguf_tensors(const GGUFHeader& header);
// How load_gguf_tensors gives each quantized matrix P: MLX's affine triple with its group
// size, or (MXFP4 blocks) MLX's mxfp4 P.weight and P.scales, groups of 32.
struct GgufQuantForm {
  int group_size;
  std::string mode;  // "affine" or "mxfp4"
};
std::map<std::string, GgufQuantForm> gguf_quant_forms(const GGUFHeader& header);

}  // namespace heron::io
