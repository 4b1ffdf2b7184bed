#pragma once
// Model names -> what the runner loads, plus the model's own defaults. A name is
// `default`/`smollm2` (the built-in demo model), an absolute path to a GGUF file or
// Hugging Face directory, or (with a store) a model in the store, whose Modelfile
// PARAMETERs, SYSTEM, TEMPLATE and MESSAGEs the handlers apply.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "heron/template/chatml.h"

namespace heron::store {
class Store;
}

namespace heron::server {

struct ResolvedModel {
  std::string name;            // as the client gave it (normalized with a :latest tag)
  std::filesystem::path path;  // what the runner loads
  // From the store's Modelfile settings; a request's options override them.
  nlohmann::json options = nlohmann::json::object();
  std::optional<std::string> chat_template;  // replaces the tokenizer's template
  std::optional<std::string> system;         // used when a request has no system message
  std::vector<chat::Message> messages;       // put before the request's conversation
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

// The conversation with the model's SYSTEM (when the request has no system message)
// and MESSAGEs in front.
std::vector<chat::Message> with_model_messages(const ResolvedModel& model,
                                               std::vector<chat::Message> messages);

}  // namespace heron::server
