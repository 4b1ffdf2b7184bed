#pragma once
// `heron create` and POST /api/create: inventory -> classify -> plan -> write blobs ->
// manifest. Sources for FROM and DRAFT: a Hugging Face safetensors directory (float or
// already MLX-quantized), a GGUF file, or a model already in the store. The manifest is
// written last, so a failed or cancelled create leaves no model behind.
#include <atomic>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "heron/store/modelfile.h"
#include "heron/store/store.h"

namespace heron::store {

struct CreateRequest {
  std::string name;
  Modelfile modelfile;
  std::filesystem::path base_dir;  // relative FROM/DRAFT paths resolve against it
  std::optional<std::string> quantize;
  std::optional<std::string> draft_quantize;
};

struct Progress {
  std::string status;
  uint64_t completed = 0;  // bytes
  uint64_t total = 0;
  size_t tensors_done = 0;
  size_t tensors_total = 0;
};
using ProgressFn = std::function<void(const Progress&)>;

// Throws heron::Error for bad input; `cancel` (when set) is checked between tensors.
void create_model(const Store& store, const CreateRequest& request, const ProgressFn& progress,
                  const std::atomic<bool>* cancel = nullptr);

// The settings blob of a manifest: {"format", "details", "settings", "from", "draft"?}.
nlohmann::json read_settings(const Store& store, const Manifest& m);

}  // namespace heron::store
