#include "heron/store/safetensors_writer.h"

#include <algorithm>

#include <mlx/ops.h>
#include <mlx/transforms.h>

#include "heron/core/error.h"

namespace heron::store {

namespace mx = mlx::core;

namespace {

std::string dtype_name(mx::Dtype d) {
  switch (d) {
    case mx::float32:
      return "F32";
    case mx::float16:
      return "F16";
    case mx::bfloat16:
      return "BF16";
    case mx::uint32:
      return "U32";
    case mx::uint16:
      return "U16";
    case mx::uint8:
      return "U8";
    case mx::uint64:
      return "U64";
    case mx::int32:
      return "I32";
    case mx::int16:
      return "I16";
    case mx::int8:
      return "I8";
    case mx::int64:
      return "I64";
    case mx::bool_:
      return "BOOL";
    default:
      throw Error("cannot store a tensor of this dtype in safetensors");
  }
}

}  // namespace

uint64_t tensor_bytes(const std::vector<NamedArray>& tensors) {
  uint64_t total = 0;
  for (const auto& t : tensors) total += t.array.nbytes();
  return total;
}

Layer write_safetensors(const Store& store, std::vector<NamedArray> tensors,
                        const nlohmann::json& metadata, const std::string& layer_name,
                        const TensorWritten& on_tensor) {
  std::sort(tensors.begin(), tensors.end(),
            [](const NamedArray& a, const NamedArray& b) { return a.name < b.name; });
  nlohmann::json header = nlohmann::json::object();
  uint64_t offset = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto& t = tensors[i];
    if (i > 0 && tensors[i - 1].name == t.name) throw Error("tensor '" + t.name + "' twice");
    const uint64_t n = t.array.nbytes();
    header[t.name] = {{"dtype", dtype_name(t.array.dtype())},
                      {"shape", t.array.shape()},
                      {"data_offsets", {offset, offset + n}}};
    offset += n;
  }
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // data starts 8-byte aligned
  BlobWriter out(store);
  uint64_t len = text.size();
  unsigned char prefix[8];
  for (int i = 0; i < 8; ++i) prefix[i] = static_cast<unsigned char>(len >> (8 * i));
  out.write(prefix, 8);
  out.write(text.data(), text.size());
  uint64_t written = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    mx::array a = tensors[i].array;
    mx::eval(a);
    if (!a.flags().row_contiguous) {
      a = mx::contiguous(a);
      mx::eval(a);
    }
    out.write(a.data<uint8_t>(), a.nbytes());
    written += a.nbytes();
    tensors[i].array = mx::array(0.0f);  // free it before the next one
    if (on_tensor) on_tensor(i + 1, written);
  }
  return out.commit(layer_name);
}

}  // namespace heron::store
