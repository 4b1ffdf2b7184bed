#pragma once
// How an encoder's token states become one vector per text, as sentence-transformers
// configures it: modules.json lists the modules (a Pooling module, then optionally
// Normalize) and the pooling module's config.json picks the mode.
#include <filesystem>

#include <mlx/array.h>

namespace heron::model {

struct Pooling {
  enum class Mode { Mean, Cls, Max, MeanSqrtLen, LastToken };
  Mode mode = Mode::Mean;
  bool normalize = false;  // L2-normalize the pooled vector

  // hidden [B, L, D]; lengths [B] int32 (the real tokens of each row) -> [B, D] float32.
  mlx::core::array operator()(const mlx::core::array& hidden,
                              const mlx::core::array& lengths) const;
};

// The pooling of a sentence-transformers directory; without modules.json: mean pooling,
// normalized (what Ollama does for BERT models). Bad files are a heron::Error.
Pooling read_pooling(const std::filesystem::path& dir);

}  // namespace heron::model
