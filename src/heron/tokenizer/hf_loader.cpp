// Tokenizer::from_hf_dir / from_json_files / from_json: assemble a PipelineTokenizer from
// a Hugging Face tokenizer.json and (optionally) tokenizer_config.json. The "truncation"
// and "padding" sections are ignored: they shape batches, not tokens.
#include <fstream>
#include <sstream>
#include <string>
#include <unordered_map>

#include "heron/core/error.h"
#include "heron/tokenizer/chat_templates.h"
#include "heron/tokenizer/json_reader.h"
#include "heron/tokenizer/json_util.h"
#include "heron/tokenizer/pipeline.h"
#include "heron/tokenizer/tokenizer.h"

namespace heron::tokenizer {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open " + path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

nlohmann::json read_json(const fs::path& path) {
  try {
    // Deeper nesting than any real config is refused before a recursive copy can
    // overflow the stack (json_reader.cpp limits tokenizer.json the same way).
    return nlohmann::json::parse(read_file(path), [&](int depth, auto, auto&) {
      if (depth >= 256) throw Error(path.string() + ": nested more than 256 levels deep");
      return true;
    });
  } catch (const nlohmann::json::exception& e) {
    throw Error(path.string() + " is not valid JSON: " + e.what());
  }
}

std::vector<AddedToken> parse_added(const nlohmann::json& tj) {
  std::vector<AddedToken> out;
  if (!tj.contains("added_tokens") || tj["added_tokens"].is_null()) return out;
  // HF loads conflicting duplicates quietly but renumbers or drops some; refuse them.
  std::unordered_map<int32_t, std::string> content_of;
  std::unordered_map<std::string, int32_t> id_of;
  for (const auto& a : json_array(tj, "added_tokens", "tokenizer.json")) {
    AddedToken t;
    t.content = json_string(a, "content", "added token");
    const int64_t id = json_int(a, "id", "added token '" + t.content + "'");
    if (id < 0 || id >= (int64_t{1} << 24)) {
      throw Error("tokenizer.json: added token '" + t.content + "' has id out of range");
    }
    if (t.content.empty()) throw Error("tokenizer.json: an added token has empty content");
    t.id = static_cast<int32_t>(id);
    if (const auto [it, fresh] = content_of.emplace(t.id, t.content); !fresh) {
      if (it->second == t.content) continue;  // listed twice alike: one token, as in HF
      throw Error("tokenizer.json: added tokens '" + it->second + "' and '" + t.content +
                  "' both have id " + std::to_string(t.id));
    }
    if (const auto [it, fresh] = id_of.emplace(t.content, t.id); !fresh) {
      throw Error("tokenizer.json: added token '" + t.content + "' is listed twice (ids " +
                  std::to_string(it->second) + " and " + std::to_string(t.id) + ")");
    }
    t.special = json_bool_or(a, "special", false, "added token");
    t.single_word = json_bool_or(a, "single_word", false, "added token");
    t.lstrip = json_bool_or(a, "lstrip", false, "added token");
    t.rstrip = json_bool_or(a, "rstrip", false, "added token");
    t.normalized = json_bool_or(a, "normalized", !t.special, "added token");
    out.push_back(std::move(t));
  }
  return out;
}

// bos_token / eos_token are a string or an AddedToken object {"content": ...}.
std::optional<std::string> config_token(const nlohmann::json& cfg, const char* key) {
  const auto it = cfg.find(key);
  if (it == cfg.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object()) return json_string(*it, "content", std::string("tokenizer_config ") + key);
  throw Error(std::string("tokenizer_config.json: '") + key + "' must be a string or an object");
}

std::unique_ptr<Tokenizer> build(const nlohmann::json& tj, const nlohmann::json& cfg,
                                 StreamedModelParts* streamed) {
  if (!tj.is_object()) throw Error("tokenizer.json must be a JSON object");
  if (!cfg.is_null() && !cfg.is_object())
    throw Error("tokenizer_config.json must be a JSON object");
  PipelineParts parts;
  parts.normalizer = make_normalizer(tj.value("normalizer", nlohmann::json()));
  parts.pre_tokenizer = make_pre_tokenizer(tj.value("pre_tokenizer", nlohmann::json()));
  const bool byte_level = parts.pre_tokenizer && parts.pre_tokenizer->byte_level();
  parts.model = make_model(json_field(tj, "model", "tokenizer.json"), byte_level, streamed);
  parts.decoder = Decoder::from_json(tj.value("decoder", nlohmann::json()));
  parts.added = parse_added(tj);
  parts.affixes = parse_post_processor(tj.value("post_processor", nlohmann::json()));

  auto lookup = [&](const std::string& tok) -> std::optional<int32_t> {
    for (const AddedToken& t : parts.added)
      if (t.content == tok) return t.id;
    return parts.model->token_to_id(tok);
  };
  if (parts.affixes.prefix.size() == 1) parts.bos_id = parts.affixes.prefix[0];
  if (cfg.is_object()) {
    const auto bos = config_token(cfg, "bos_token");
    const auto eos = config_token(cfg, "eos_token");
    if (bos) parts.bos_id = lookup(*bos);
    if (eos) parts.eos_id = lookup(*eos);
    // transformers rebuilds the post-processor when either flag is given explicitly.
    if (cfg.contains("add_bos_token") || cfg.contains("add_eos_token")) {
      parts.affixes = {};
      if (json_bool_or(cfg, "add_bos_token", false, "tokenizer_config.json") && parts.bos_id) {
        parts.affixes.prefix.push_back(parts.bos_id.value());
      }
      if (json_bool_or(cfg, "add_eos_token", false, "tokenizer_config.json") && parts.eos_id) {
        parts.affixes.suffix.push_back(parts.eos_id.value());
      }
    }
    parts.chat_templates = config_chat_templates(cfg);
  }
  return std::make_unique<PipelineTokenizer>(std::move(parts));
}

// tokenizer.json read with json_reader.h (the big model parts bypass the tree).
std::unique_ptr<Tokenizer> from_text(const fs::path& path, const nlohmann::json& cfg) {
  try {
    StreamedModelParts streamed;
    const nlohmann::json tj = read_tokenizer_json(read_file(path), streamed);
    return build(tj, cfg, &streamed);
  } catch (const nlohmann::json::exception& e) {
    throw Error(path.string() + ": tokenizer.json is malformed: " + e.what());
  } catch (const Error& e) {
    throw Error(path.string() + ": " + e.what());
  }
}

}  // namespace

std::map<std::string, std::string> config_chat_templates(const nlohmann::json& cfg) {
  if (!cfg.is_object()) return {};
  const auto it = cfg.find("chat_template");
  if (it == cfg.end() || it->is_null()) return {};
  if (it->is_string()) return {{"default", it->get<std::string>()}};
  if (it->is_array()) {
    std::map<std::string, std::string> named;
    for (const auto& t : *it) {
      named[json_string(t, "name", "chat_template entry")] =
          json_string(t, "template", "chat_template entry");
    }
    return named;
  }
  throw Error("tokenizer_config.json: 'chat_template' must be a string or a list");
}

std::unique_ptr<Tokenizer> Tokenizer::from_json(const nlohmann::json& tokenizer_json,
                                                const nlohmann::json& tokenizer_config) {
  try {
    return build(tokenizer_json, tokenizer_config, nullptr);
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("tokenizer.json is malformed: ") + e.what());
  }
}

std::unique_ptr<Tokenizer> Tokenizer::from_json_files(
    const std::filesystem::path& tokenizer_json,
    const std::optional<std::filesystem::path>& tokenizer_config) {
  const nlohmann::json cfg = tokenizer_config ? read_json(*tokenizer_config) : nlohmann::json();
  return from_text(tokenizer_json, cfg);
}

std::unique_ptr<Tokenizer> Tokenizer::from_hf_dir(const std::filesystem::path& dir) {
  const fs::path tj = dir / "tokenizer.json";
  if (!fs::exists(tj)) throw Error(dir.string() + " has no tokenizer.json");
  const fs::path cfg_path = dir / "tokenizer_config.json";
  nlohmann::json cfg = fs::exists(cfg_path) ? read_json(cfg_path) : nlohmann::json();
  // Newer repositories keep the template in its own file.
  const fs::path jinja = dir / "chat_template.jinja";
  if (fs::exists(jinja) &&
      (!cfg.is_object() || !cfg.contains("chat_template") || cfg["chat_template"].is_null())) {
    if (!cfg.is_object()) cfg = nlohmann::json::object();
    cfg["chat_template"] = read_file(jinja);
  }
  return from_text(tj, cfg);
}

}  // namespace heron::tokenizer
