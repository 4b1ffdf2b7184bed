#include "heron/model/registry.h"

#include <functional>
#include <map>

#include "heron/core/error.h"
#include "heron/model/arch/archs.h"

namespace heron::model {

namespace {

using Builder = std::function<std::unique_ptr<Model>(const ModelConfig&, Weights&)>;

const std::map<std::string, Builder>& builders() {
  static const std::map<std::string, Builder> table = {
      {"llama", arch::build_llama},
      {"mistral", arch::build_llama},
      {"qwen3", arch::build_qwen3},
  };
  return table;
}

}  // namespace

std::unique_ptr<Model> build_model(const ModelConfig& config, Weights& weights) {
  auto it = builders().find(config.architecture);
  if (it == builders().end()) {
    std::string known;
    for (const auto& name : known_architectures()) known += (known.empty() ? "" : ", ") + name;
    throw Error(weights.source() + ": unsupported architecture '" + config.architecture +
                "' (supported: " + known + ")");
  }
  return it->second(config, weights);
}

std::vector<std::string> known_architectures() {
  std::vector<std::string> names;
  for (const auto& [name, builder] : builders()) names.push_back(name);
  return names;
}

}  // namespace heron::model
