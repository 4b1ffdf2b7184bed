#pragma once
// The ggml tensor types a GGUF file can name, with their block layout, so that the
// header reader can size every tensor (and name the type in errors) even when the
// loader refuses it.
#include <cstdint>
#include <string>

namespace heron::io {

// ggml tensor type ids (ggml.h numbering) of the types we load.
enum class GGMLType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  BF16 = 30,
  MXFP4 = 39
};

struct GGMLTypeInfo {
  const char* name;
  uint32_t block_size;  // elements per block (1 for plain types)
  uint32_t type_size;   // bytes per block
};

// nullptr for an id no ggml version defines (or one ggml removed).
const GGMLTypeInfo* ggml_type_info(uint32_t type);

// "Q4_1 (3)", or "unknown (77)".
std::string ggml_type_label(uint32_t type);

// The types load_gguf_tensors accepts: the float ones, the quantized ones and MXFP4.
bool ggml_type_loadable(uint32_t type);

// Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K: block types we turn into
// affine weight/scales/biases triples (ggml_blocks.h, which must agree: a unit test checks).
bool ggml_type_quantized(uint32_t type);

// The width of a block type's own codes (Q4_K and MXFP4: 4, Q5_0: 5, Q6_K: 6, Q8_0: 8); 0
// for float and unsupported types.
int ggml_code_bits(uint32_t type);

// "F32, F16, BF16, Q4_0, ...": the loadable types, for error messages.
std::string ggml_loadable_type_names();

}  // namespace heron::io
