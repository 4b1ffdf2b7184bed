#pragma once
// Model names -> what the runner loads, plus the model's own defaults. A name is
// `default`/`smollm2` (the built-in demo model), an absolute path to a GGUF file or
// Hugging Face directory, or (with a store) a model in the store, whose Modelfile
// PARAMETERs, SYSTEM, TEMPLATE and MESSAGEs the handlers apply.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace heron::store {
class Store;
}

namespace heron::server {

struct ResolvedModel {
  std::string name;            // as the client gave it (normalized with a :latest tag)
  std::filesystem::path path;  // what the runner loads
  uint64_t weight_bytes = 0;   // size of its weight files: the memory it will need, roughly
  // From the store's Modelfile settings; a request's options override them.
  nlohmann::json options = nlohmann::json::object();
  std::optional<std::string> chat_template;  // replaces the tokenizer's template
  std::optional<std::string> system;         // used when a request has no system message
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();  // before the request's
};

class ModelResolver {
 public:
  virtual ~ModelResolver() = default;
  // Throws http::HttpError(404) for an unknown model, 400 for a malformed name.
  virtual ResolvedModel resolve(const std::string& name) const = 0;
  // Every model a client can name without a path (for /api/tags, /v1/models).
  virtual std::vector<ResolvedModel> list() const = 0;
};

class PathResolver : public ModelResolver {
 public:
  ResolvedModel resolve(const std::string& name) const override;
  std::vector<ResolvedModel> list() const override;
};

// Store models first; `default`/`smollm2` (unless the store has a model of that name)
// and absolute paths as PathResolver.
class StoreResolver : public ModelResolver {
 public:
  explicit StoreResolver(const store::Store& store) : store_(store) {}
  ResolvedModel resolve(const std::string& name) const override;
  std::vector<ResolvedModel> list() const override;

 private:
  const store::Store& store_;
  PathResolver paths_;
};

}  // namespace heron::server
