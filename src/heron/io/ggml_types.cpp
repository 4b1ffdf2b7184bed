#include "heron/io/ggml_types.h"

#include <array>

namespace heron::io {
namespace {

// Block layouts as in ggml.h / gguf-py GGML_QUANT_SIZES; ids 4, 5 and 31-33 were removed.
constexpr std::array<GGMLTypeInfo, 42> kTypes = {{
    {"F32", 1, 4},        {"F16", 1, 2},       {"Q4_0", 32, 18},     {"Q4_1", 32, 20},
    {nullptr, 0, 0},      {nullptr, 0, 0},     {"Q5_0", 32, 22},     {"Q5_1", 32, 24},
    {"Q8_0", 32, 34},     {"Q8_1", 32, 40},    {"Q2_K", 256, 84},    {"Q3_K", 256, 110},
    {"Q4_K", 256, 144},   {"Q5_K", 256, 176},  {"Q6_K", 256, 210},   {"Q8_K", 256, 292},
    {"IQ2_XXS", 256, 66}, {"IQ2_XS", 256, 74}, {"IQ3_XXS", 256, 98}, {"IQ1_S", 256, 50},
    {"IQ4_NL", 32, 18},   {"IQ3_S", 256, 110}, {"IQ2_S", 256, 82},   {"IQ4_XS", 256, 136},
    {"I8", 1, 1},         {"I16", 1, 2},       {"I32", 1, 4},        {"I64", 1, 8},
    {"F64", 1, 8},        {"IQ1_M", 256, 56},  {"BF16", 1, 2},       {nullptr, 0, 0},
    {nullptr, 0, 0},      {nullptr, 0, 0},     {"TQ1_0", 256, 54},   {"TQ2_0", 256, 66},
    {nullptr, 0, 0},      {nullptr, 0, 0},     {nullptr, 0, 0},      {"MXFP4", 32, 17},
    {"NVFP4", 64, 36},    {"Q1_0", 128, 18},
}};

}  // namespace

const GGMLTypeInfo* ggml_type_info(uint32_t type) {
  if (type >= kTypes.size() || kTypes[type].name == nullptr) return nullptr;
  return &kTypes[type];
}

std::string ggml_type_label(uint32_t type) {
  const auto* info = ggml_type_info(type);
  return std::string(info ? info->name : "unknown") + " (" + std::to_string(type) + ")";
}

bool ggml_type_loadable(uint32_t type) {
  auto t = static_cast<GGMLType>(type);
  return t == GGMLType::F32 || t == GGMLType::F16 || t == GGMLType::BF16 || t == GGMLType::MXFP4 ||
         ggml_type_quantized(type);
}

bool ggml_type_quantized(uint32_t type) {
  return ggml_code_bits(type) > 0 && static_cast<GGMLType>(type) != GGMLType::MXFP4;
}

int ggml_code_bits(uint32_t type) {
  switch (static_cast<GGMLType>(type)) {
    case GGMLType::Q2_K:
      return 2;
    case GGMLType::Q3_K:
      return 3;
    case GGMLType::Q4_0:
    case GGMLType::Q4_1:
    case GGMLType::Q4_K:
    case GGMLType::MXFP4:
      return 4;
    case GGMLType::Q5_0:
    case GGMLType::Q5_1:
    case GGMLType::Q5_K:
      return 5;
    case GGMLType::Q6_K:
      return 6;
    case GGMLType::Q8_0:
      return 8;
    default:
      return 0;
  }
}

std::string ggml_loadable_type_names() {
  std::string names;
  for (uint32_t t = 0; t < kTypes.size(); ++t) {
    if (!ggml_type_loadable(t)) continue;
    names += (names.empty() ? "" : ", ") + std::string(kTypes[t].name);
  }
  return names;
}

}  // namespace heron::io
