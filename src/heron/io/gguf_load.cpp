#include <memory>
#include <set>

#include <unistd.h>

#include <mlx/io.h>

#include "heron/io/file_errors.h"
#include "heron/io/file_reader.h"
#include "heron/io/weights.h"

// load_gguf_tensors: a validated GGUF file through MLX's load_gguf, guarded against
// the inputs that loader mishandles.
namespace heron::io {
namespace mx = mlx::core;

namespace {

// Refuse, with a clear message, every file MLX's GGUF loader would mishandle.
// Returns the names MLX will produce.
std::set<std::string> check_gguf_loadable(const GGUFHeader& h) {
  for (const auto& [key, type] : h.metadata_types) {
    // MLX 0.32 reads float64 values into float32 arrays and then advances by the
    // float32 size, losing its place in the header: it crashes or misreads.
    if (type == "float64" || type == "array[float64]") {
      fail_file(h.path, "metadata key " + in_quotes(key) + " holds " + type +
                            " values, which MLX's GGUF loader cannot read");
    }
    if (type == "array[array]") {
      fail_file(h.path, "metadata key " + in_quotes(key) +
                            " is a nested array, which MLX's GGUF loader cannot read");
    }
  }
  std::set<std::string> outputs;
  for (const auto& t : h.tensors) {
    if (!ggml_type_loadable(t.type)) {
      fail_file(h.path, "tensor " + in_quotes(t.name) + " has unsupported tensor type " +
                            ggml_type_label(t.type) +
                            " (supported: F32, F16, BF16, Q4_0, Q4_1, Q8_0)");
    }
    for (uint64_t d : t.dims) check_mlx_dim(h.path, t.name, d);
    std::vector<std::string> names = {t.name};
    if (ggml_type_quantized(t.type)) {
      // MLX derives the scales/biases names by cutting 7 characters (".weight") off.
      const std::string suffix = ".weight";
      if (t.name.size() <= suffix.size() || !t.name.ends_with(suffix)) {
        fail_file(h.path, "quantized tensor " + in_quotes(t.name) + " must be named PREFIX.weight");
      }
      std::string prefix = t.name.substr(0, t.name.size() - suffix.size());
      names.push_back(prefix + ".scales");
      names.push_back(prefix + ".biases");
    }
    for (const auto& n : names) {
      if (!outputs.insert(n).second) {
        fail_file(h.path, "tensor name " + in_quotes(n) + " would be loaded twice");
      }
    }
  }
  // gguflib opens the file O_RDWR and maps it writable, so a read-only file fails there.
  if (::access(h.path.c_str(), R_OK | W_OK) != 0) {
    fail_file(h.path, "MLX's GGUF loader needs read-write access to the file; it is not writable");
  }
  return outputs;
}

// MLX converts BF16 to float16 (values above 65504 become inf); read those exactly.
mx::array read_bf16(const GGUFHeader& h, const GGUFTensorInfo& t) {
  FileReader r(h.path);
  r.seek(h.data_offset + t.offset);
  std::unique_ptr<uint16_t[]> data(new uint16_t[t.nbytes / 2]);
  r.read(data.get(), t.nbytes, "BF16 tensor data");
  mx::Shape shape(t.dims.rbegin(), t.dims.rend());
  return mx::array(data.release(), std::move(shape), mx::bfloat16,
                   [](void* p) { delete[] static_cast<uint16_t*>(p); });
}

}  // namespace

WeightMap load_gguf_tensors(const GGUFHeader& header) {
  const auto expected = check_gguf_loadable(header);
  WeightMap arrays;
  try {
    arrays = mx::load_gguf(header.path).first;
  } catch (const std::exception& e) {
    fail_file(header.path, std::string("MLX could not load the file: ") + e.what());
  }
  for (const auto& name : expected) {
    if (!arrays.count(name)) fail_file(header.path, "MLX did not return tensor " + in_quotes(name));
  }
  if (arrays.size() != expected.size()) {
    fail_file(header.path, "MLX returned " + std::to_string(arrays.size()) + " tensors, expected " +
                               std::to_string(expected.size()));
  }
  for (const auto& t : header.tensors) {
    if (static_cast<GGMLType>(t.type) == GGMLType::BF16) {
      arrays.insert_or_assign(t.name, read_bf16(header, t));
    }
  }
  return arrays;
}

}  // namespace heron::io
