#pragma once
// The ggml tensor types a GGUF file can name, with their block layout, so that the
// header reader can size every tensor (and name the type in errors) even when the
// loader refuses it.
#include <cstdint>
#include <string>

namespace heron::io {

// ggml tensor type ids (ggml.h numbering) of the types we load.
enum class GGMLType : uint32_t { F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q8_0 = 8, BF16 = 30 };

struct GGMLTypeInfo {
  const char* name;
  uint32_t block_size;  // elements per block (1 for plain types)
  uint32_t type_size;   // bytes per block
};

// nullptr for an id no ggml version defines (or one ggml removed).
const GGMLTypeInfo* ggml_type_info(uint32_t type);

// "Q4_1 (3)", or "unknown (77)".
std::string ggml_type_label(uint32_t type);

// F32, F16, BF16, Q4_0, Q4_1, Q8_0: the types load_gguf_tensors accepts.
bool ggml_type_loadable(uint32_t type);

// Q4_0, Q4_1, Q8_0: MLX turns these into affine weight/scales/biases triples.
bool ggml_type_quantized(uint32_t type);

}  // namespace heron::io
