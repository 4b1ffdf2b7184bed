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
      {"gemma3", arch::build_gemma3},
      {"gemma3_text", arch::build_gemma3},
      {"deepseek2", arch::build_glm4_moe_lite},
      {"glm4_moe_lite", arch::build_glm4_moe_lite},
      {"gpt-oss", arch::build_gpt_oss},
      {"gpt_oss", arch::build_gpt_oss},
      {"llama", arch::build_llama},
      {"mistral", arch::build_llama},
      {"qwen3", arch::build_qwen3},
      {"qwen3_moe", arch::build_qwen3},
      {"qwen3_next", arch::build_qwen3_next},
      {"qwen3_5", arch::build_qwen3_next},
      {"qwen3_5_moe", arch::build_qwen3_next},
      {"qwen3moe", arch::build_qwen3},
  };
  return table;
}

}  // namespace

std::unique_ptr<Model> build_model(const ModelConfig& config, Weights& weights) {
  require_known_architecture(config.architecture, weights.source());
  return builders().at(config.architecture)(config, weights);
}

void require_known_architecture(const std::string& architecture, const std::string& source) {
  if (builders().contains(architecture)) return;
  std::string known;
  for (const auto& name : known_architectures()) known += (known.empty() ? "" : ", ") + name;
  throw Error(source + ": unsupported architecture '" + architecture + "' (supported: " + known +
              ")");
}

std::vector<std::string> known_architectures() {
  std::vector<std::string> names;
  for (const auto& [name, builder] : builders()) names.push_back(name);
  return names;
}

}  // namespace heron::model
