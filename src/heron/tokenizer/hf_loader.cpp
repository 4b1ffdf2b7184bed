// Tokenizer::from_hf_dir / from_json_files / from_json: assemble a BpeTokenizer from a
// Hugging Face tokenizer.json and (optionally) tokenizer_config.json.
#include <fstream>
#include <sstream>

#include "heron/core/error.h"
#include "heron/tokenizer/bpe_tokenizer.h"
#include "heron/tokenizer/json_util.h"
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
    return nlohmann::json::parse(read_file(path));
  } catch (const nlohmann::json::exception& e) {
    throw Error(path.string() + " is not valid JSON: " + e.what());
  }
}

std::vector<std::pair<std::string, std::string>> parse_merges(const nlohmann::json& model) {
  std::vector<std::pair<std::string, std::string>> merges;
  if (!model.contains("merges") || model["merges"].is_null()) return merges;
  const auto& list = json_array(model, "merges", "model");
  merges.reserve(list.size());
  for (const auto& m : list) {
    if (m.is_string()) {
      // Legacy "left right" form; byte-level tokens never contain a plain space.
      const auto& s = m.get_ref<const std::string&>();
      const size_t space = s.find(' ');
      if (space == std::string::npos) {
        throw Error("tokenizer.json: merge '" + s + "' is not of the form 'left right'");
      }
      merges.emplace_back(s.substr(0, space), s.substr(space + 1));
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
    } else {
      throw Error("tokenizer.json: a merge must be \"left right\" or [\"left\", \"right\"], got " +
                  m.dump());
    }
  }
  return merges;
}

void require_empty_affix(const nlohmann::json& model, const char* key) {
  const auto it = model.find(key);
  if (it == model.end() || it->is_null()) return;
  if (!it->is_string())
    throw Error(std::string("tokenizer.json: model.") + key + " must be a string");
  if (!it->get_ref<const std::string&>().empty()) {
    throw Error(std::string("tokenizer.json: BPE ") + key + " is not supported yet");
  }
}

std::unique_ptr<BpeModel> parse_model(const nlohmann::json& tj, bool byte_level) {
  const auto& model = json_object(tj, "model", "tokenizer.json");
  const std::string type = model.contains("type") ? json_string(model, "type", "model") : "BPE";
  if (type != "BPE") throw Error("tokenizer.json: model type '" + type + "' is not supported yet");
  if (json_bool_or(model, "byte_fallback", false, "model")) {
    throw Error("tokenizer.json: BPE byte_fallback is not supported yet");
  }
  require_empty_affix(model, "continuing_subword_prefix");
  require_empty_affix(model, "end_of_word_suffix");

  BpeModel::Vocab vocab;
  const auto& v = json_object(model, "vocab", "model");
  vocab.reserve(v.size());
  for (const auto& [tok, id] : v.items()) {
    if (!id.is_number_integer()) {
      throw Error("tokenizer.json: vocab id of '" + tok + "' must be an integer");
    }
    const int64_t value = id.get<int64_t>();
    if (value < 0 || value > INT32_MAX) {
      throw Error("tokenizer.json: vocab id of '" + tok + "' is out of range");
    }
    vocab.emplace(tok, static_cast<int32_t>(value));
  }

  BpeOptions opts;
  opts.byte_level = byte_level;
  opts.ignore_merges = json_bool_or(model, "ignore_merges", false, "model");
  if (model.contains("unk_token") && !model["unk_token"].is_null()) {
    opts.unk_token = json_string(model, "unk_token", "model");
  }
  // "dropout" only matters for training; inference is deterministic.
  return std::make_unique<BpeModel>(std::move(vocab), parse_merges(model), opts);
}

std::vector<AddedToken> parse_added(const nlohmann::json& tj) {
  std::vector<AddedToken> out;
  if (!tj.contains("added_tokens") || tj["added_tokens"].is_null()) return out;
  for (const auto& a : json_array(tj, "added_tokens", "tokenizer.json")) {
    AddedToken t;
    t.content = json_string(a, "content", "added token");
    const int64_t id = json_int(a, "id", "added token '" + t.content + "'");
    if (id < 0 || id >= (int64_t{1} << 24)) {
      throw Error("tokenizer.json: added token '" + t.content + "' has id out of range");
    }
    if (t.content.empty()) throw Error("tokenizer.json: an added token has empty content");
    t.id = static_cast<int32_t>(id);
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

std::string config_chat_template(const nlohmann::json& cfg) {
  const auto it = cfg.find("chat_template");
  if (it == cfg.end() || it->is_null()) return {};
  if (it->is_string()) return it->get<std::string>();
  if (it->is_array()) {
    // Named templates: prefer "default", else the first.
    std::string first;
    for (const auto& t : *it) {
      const std::string name = json_string(t, "name", "chat_template entry");
      const std::string body = json_string(t, "template", "chat_template entry");
      if (name == "default") return body;
      if (first.empty()) first = body;
    }
    return first;
  }
  throw Error("tokenizer_config.json: 'chat_template' must be a string or a list");
}

std::unique_ptr<Tokenizer> build(const nlohmann::json& tj, const nlohmann::json& cfg) {
  if (!tj.is_object()) throw Error("tokenizer.json must be a JSON object");
  if (!cfg.is_null() && !cfg.is_object())
    throw Error("tokenizer_config.json must be a JSON object");
  BpeParts parts;
  parts.normalizer = make_normalizer(tj.value("normalizer", nlohmann::json()));
  parts.pre_tokenizer = make_pre_tokenizer(tj.value("pre_tokenizer", nlohmann::json()));
  if (!parts.pre_tokenizer || !parts.pre_tokenizer->byte_level()) {
    throw Error("tokenizer.json: only byte-level BPE (a ByteLevel pre_tokenizer) is supported yet");
  }
  parts.model = parse_model(tj, true);
  parts.decoder = TokenDecoder::from_json(tj.value("decoder", nlohmann::json()));
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
    parts.chat_template = config_chat_template(cfg);
  }
  return std::make_unique<BpeTokenizer>(std::move(parts));
}

}  // namespace

std::unique_ptr<Tokenizer> Tokenizer::from_json(const nlohmann::json& tokenizer_json,
                                                const nlohmann::json& tokenizer_config) {
  try {
    return build(tokenizer_json, tokenizer_config);
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("tokenizer.json is malformed: ") + e.what());
  }
}

std::unique_ptr<Tokenizer> Tokenizer::from_json_files(
    const std::filesystem::path& tokenizer_json,
    const std::optional<std::filesystem::path>& tokenizer_config) {
  const nlohmann::json tj = read_json(tokenizer_json);
  const nlohmann::json cfg = tokenizer_config ? read_json(*tokenizer_config) : nlohmann::json();
  try {
    return from_json(tj, cfg);
  } catch (const Error& e) {
    throw Error(tokenizer_json.string() + ": " + e.what());
  }
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
  try {
    return from_json(read_json(tj), cfg);
  } catch (const Error& e) {
    throw Error(tj.string() + ": " + e.what());
  }
}

}  // namespace heron::tokenizer
