#include "heron/model/encoder_loader.h"

#include <fstream>
#include <functional>
#include <map>

#include <nlohmann/json.hpp>

#include "heron/core/error.h"
#include "heron/model/arch/encoders.h"
#include "heron/model/loader.h"

namespace heron::model {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using Builder = std::function<std::unique_ptr<Encoder>(const EncoderConfig&, Weights&)>;

const std::map<std::string, Builder>& builders() {
  static const std::map<std::string, Builder> table = {{"bert", arch::build_bert}};
  return table;
}

// config.json, or null when it is missing or not JSON (the caller reports that).
json read_config(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return nullptr;
  return json::parse(in, nullptr, /*allow_exceptions=*/false);
}

int max_tokens(const store::ModelFiles& files, const EncoderConfig& config) {
  const int trained = config.max_position_embeddings;
  const auto* path = files.find("sentence_bert_config.json");
  if (!path) return trained;
  const json st = read_config(*path);
  if (!st.is_object() || !st.contains("max_seq_length")) return trained;
  const auto& v = st["max_seq_length"];
  if (!v.is_number_integer() || v.get<int64_t>() < 2) {
    throw Error(path->string() + ": 'max_seq_length' must be an integer of at least 2");
  }
  return static_cast<int>(std::min<int64_t>(v.get<int64_t>(), trained));
}

}  // namespace

bool is_encoder_architecture(const std::string& architecture) {
  return builders().contains(architecture);
}

bool is_encoder_model(const fs::path& path) {
  const auto files = files_at(path);
  const auto* config_path = files ? files->find("config.json") : nullptr;
  if (!config_path) return false;
  const json config = read_config(*config_path);
  return config.is_object() && config.contains("model_type") && config["model_type"].is_string() &&
         is_encoder_architecture(config["model_type"].get<std::string>());
}

LoadedEncoder load_encoder(const fs::path& path) {
  const auto files = files_at(path);
  const auto* config_path = files ? files->find("config.json") : nullptr;
  if (!config_path) throw Error(path.string() + ": no config.json");
  const json config_json = read_config(*config_path);
  if (config_json.is_null()) throw Error(config_path->string() + ": missing or not valid JSON");
  const auto config = encoder_config_from_hf(config_json, config_path->string());
  const auto builder = builders().find(config.architecture);
  if (builder == builders().end()) {
    throw Error(config_path->string() + ": '" + config.architecture + "' is not an encoder");
  }
  Weights weights(load_safetensors(*files), files->source, 32, mlx::core::float32);
  LoadedEncoder loaded;
  loaded.source = files->source;
  loaded.encoder = builder->second(config, weights);
  loaded.tokenizer = load_tokenizer(*files);
  if (!loaded.tokenizer) throw Error(files->source + ": no tokenizer.json");
  loaded.pooling = read_pooling(*files);
  loaded.max_tokens = max_tokens(*files, config);
  return loaded;
}

}  // namespace heron::model
