#pragma once
// Model names -> files. For now a name is `default`/`smollm2` (the built-in demo model)
// or a path to a GGUF file or Hugging Face directory; the model store will be another
// resolver behind the same interface.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace heron::server {

struct ResolvedModel {
  std::string name;            // as the client gave it (normalized with a :latest tag)
  std::filesystem::path path;  // what the runner loads
  // Replaces the model's own chat template(s) when set (the model store supplies it).
  std::optional<std::string> chat_template = std::nullopt;
};

class ModelResolver {
 public:
  virtual ~ModelResolver() = default;
  // Throws http::HttpError(404) for an unknown model.
  virtual ResolvedModel resolve(const std::string& name) const = 0;
  // Every model a client can name without a path (for /api/tags, /v1/models).
  virtual std::vector<ResolvedModel> list() const = 0;
};

class PathResolver : public ModelResolver {
 public:
  ResolvedModel resolve(const std::string& name) const override;
  std::vector<ResolvedModel> list() const override;
};

}  // namespace heron::server
