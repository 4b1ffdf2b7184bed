#include <memory>
#include <set>

#include <mlx/ops.h>

#include "heron/io/file_errors.h"
#include "heron/io/file_reader.h"
#include "heron/io/ggml_blocks.h"
#include "heron/io/ggml_mxfp4.h"
#include "heron/io/weights.h"

// load_gguf_tensors: the tensors of a validated GGUF header, read and converted here
// (not through MLX's load_gguf, which knows only three block types, reads float64
// metadata wrongly and opens files read-write).
namespace heron::io {
namespace mx = mlx::core;

namespace {

bool is_matrix_weight(const GGUFTensorInfo& t) {
  return t.dims.size() >= 2 && t.name.ends_with(".weight") && t.name.size() > 7;
}

bool becomes_affine(const GGUFTensorInfo& t) {
  return ggml_type_quantized(t.type) && is_matrix_weight(t);
}

// MXFP4 matrices stay MXFP4: MLX's mxfp4 weight and scales (ggml_mxfp4.h).
bool becomes_mxfp4(const GGUFTensorInfo& t) {
  return static_cast<GGMLType>(t.type) == GGMLType::MXFP4 && is_matrix_weight(t);
}

// Refuse unsupported types and name clashes before reading any tensor data.
void check_gguf_loadable(const GGUFHeader& h) {
  std::set<std::string> outputs;
  for (const auto& t : h.tensors) {
    if (!ggml_type_loadable(t.type)) {
      fail_file(h.path, "tensor " + in_quotes(t.name) + " has unsupported tensor type " +
                            ggml_type_label(t.type) + " (supported: " + ggml_loadable_type_names() +
                            ")");
    }
    for (uint64_t d : t.dims) check_mlx_dim(h.path, t.name, d);
    std::vector<std::string> names = {t.name};
    const std::string prefix = t.name.substr(0, t.name.size() - 7);
    if (becomes_affine(t) || becomes_mxfp4(t)) names.push_back(prefix + ".scales");
    if (becomes_affine(t)) names.push_back(prefix + ".biases");
    for (const auto& n : names) {
      if (!outputs.insert(n).second) {
        fail_file(h.path, "tensor name " + in_quotes(n) + " would be loaded twice");
      }
    }
  }
}

std::unique_ptr<uint8_t[]> read_tensor_bytes(FileReader& r, const GGUFHeader& h,
                                             const GGUFTensorInfo& t) {
  r.seek(h.data_offset + t.offset);
  std::unique_ptr<uint8_t[]> data(new uint8_t[t.nbytes]);
  r.read(data.get(), t.nbytes, "tensor data");
  return data;
}

mx::Shape shape_of(const GGUFTensorInfo& t) {
  return mx::Shape(t.dims.rbegin(), t.dims.rend());
}

void load_tensor(FileReader& r, const GGUFHeader& h, const GGUFTensorInfo& t, WeightMap& out) {
  auto data = read_tensor_bytes(r, h, t);
  const auto type = static_cast<GGMLType>(t.type);
  if (type == GGMLType::F32 || type == GGMLType::F16 || type == GGMLType::BF16) {
    // Copied into MLX's own allocation (see ggml_blocks.cpp's owned_array).
    const auto* bytes = data.get();
    if (type == GGMLType::F32) {
      out.insert_or_assign(t.name, mx::array(reinterpret_cast<const float*>(bytes), shape_of(t)));
    } else if (type == GGMLType::F16) {
      out.insert_or_assign(t.name,
                           mx::array(reinterpret_cast<const mx::float16_t*>(bytes), shape_of(t)));
    } else {
      out.insert_or_assign(t.name,
                           mx::array(reinterpret_cast<const mx::bfloat16_t*>(bytes), shape_of(t)));
    }
    return;
  }
  uint64_t count = 1;
  for (auto d : t.dims) count *= d;
  const auto cols = static_cast<int64_t>(t.dims[0]);
  const std::string prefix = t.name.substr(0, t.name.size() - 7);
  auto shaped = [&](const mx::array& x) {  // rows' axes as the tensor's, x's last axis
    auto shape = shape_of(t);
    shape.back() = x.shape(1);
    return mx::reshape(x, shape);
  };
  if (type == GGMLType::MXFP4) {
    if (!becomes_mxfp4(t)) {
      out.insert_or_assign(
          t.name,
          mx::reshape(ggml_mxfp4_to_float(data.get(), static_cast<int64_t>(count), h.path, t.name),
                      shape_of(t)));
      return;
    }
    auto m =
        ggml_mxfp4_to_mlx(data.get(), static_cast<int64_t>(count) / cols, cols, h.path, t.name);
    out.insert_or_assign(t.name, shaped(m.weight));
    out.insert_or_assign(prefix + ".scales", shaped(m.scales));
    return;
  }
  if (!becomes_affine(t)) {
    auto values =
        ggml_blocks_to_float(t.type, data.get(), static_cast<int64_t>(count), h.path, t.name);
    out.insert_or_assign(t.name, mx::reshape(values, shape_of(t)));
    return;
  }
  auto a = ggml_blocks_to_affine(t.type, data.get(), static_cast<int64_t>(count) / cols, cols,
                                 h.path, t.name);
  out.insert_or_assign(t.name, shaped(a.weight));
  out.insert_or_assign(prefix + ".scales", shaped(a.scales));
  out.insert_or_assign(prefix + ".biases", shaped(a.biases));
}

}  // namespace

WeightMap load_gguf_tensors(const GGUFHeader& header) {
  check_gguf_loadable(header);
  FileReader reader(header.path);
  WeightMap arrays;
  for (const auto& t : header.tensors) load_tensor(reader, header, t, arrays);
  return arrays;
}

std::map<std::string, GgufQuantForm> gguf_quant_forms(const GGUFHeader& header) {
  std::map<std::string, GgufQuantForm> forms;
  for (const auto& t : header.tensors) {
    const std::string prefix = t.name.substr(0, t.name.size() - 7);
    if (becomes_affine(t)) forms[prefix] = {ggml_affine_form(t.type)->group_size, "affine"};
    if (becomes_mxfp4(t)) forms[prefix] = {32, "mxfp4"};
  }
  return forms;
}

}  // namespace heron::io
