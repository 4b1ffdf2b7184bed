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
// model.safetensors.index.json (every shard validated, every indexed name present).
WeightMap load_safetensors_dir(const std::filesystem::path& dir);

// Tensors of a validated GGUF file through mlx::core::load_gguf. Quantized types
// (Q4_0, Q4_1, Q8_0) come back as MLX affine triples NAME.weight / NAME.scales /
// NAME.biases (group size 32). Any type other than F32, F16, BF16, Q8_0, Q4_0, Q4_1
// is rejected with "unsupported tensor type".
WeightMap load_gguf_tensors(const GGUFHeader& header);

}  // namespace heron::io
