#pragma once
// How an encoder's token states become one vector per text, as sentence-transformers
// configures it: modules.json lists the modules (a Pooling module, then optionally
// Normalize) and the pooling module's config.json picks the mode.
#include <filesystem>
#include <optional>

#include <mlx/array.h>

#include "heron/store/model_files.h"

namespace heron::model {

struct Pooling {
  enum class Mode { Mean, Cls, Max, MeanSqrtLen, LastToken };
  Mode mode = Mode::Mean;
  bool normalize = false;  // L2-normalize the pooled vector

  // hidden [B, L, D]; lengths [B] int32 (the real tokens of each row) -> [B, D] float32.
  mlx::core::array operator()(const mlx::core::array& hidden,
                              const mlx::core::array& lengths) const;
};

// The pooling of a sentence-transformers model: modules.json, and the pooling module's
// config.json (in its folder, or stored as "pooling_config.json" in heron's store);
// without modules.json mean pooling, normalized (as Ollama pools BERT models). Bad files
// are a heron::Error.
Pooling read_pooling(const store::ModelFiles& files);
// Where the pooling module's config.json is; nullopt without modules.json.
std::optional<std::filesystem::path> pooling_config_path(const store::ModelFiles& files);

}  // namespace heron::model
