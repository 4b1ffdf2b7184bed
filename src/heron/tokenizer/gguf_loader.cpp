// Tokenizer::from_gguf_metadata: rebuild the tokenizer a GGUF file describes with
// llama.cpp's key names. GGUF has no pipeline description, only a pre-tokenizer name
// (tokenizer.ggml.pre); each supported name maps to the tokenizer.json pipeline it was
// converted from, as llama.cpp's llama-vocab.cpp and transformers' GGUF loader do.
#include <array>
#include <string_view>

#include "heron/core/error.h"
#include "heron/tokenizer/bpe_model.h"
#include "heron/tokenizer/chat_templates.h"
#include "heron/tokenizer/json_util.h"
#include "heron/tokenizer/pipeline.h"
#include "heron/tokenizer/spm_model.h"
#include "heron/tokenizer/tokenizer.h"

namespace heron::tokenizer {
namespace {

constexpr std::string_view kLlama3Pattern =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr std::string_view kQwen2Pattern =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

// o200k (GPT-4o, gpt-oss): case-aware words with optional contractions.
constexpr std::string_view kGpt4oPattern =
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+"
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+"
    "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
// DeepSeek-V3: three splits in turn (numbers, CJK runs, then words and punctuation).
constexpr std::array<std::string_view, 3> kDeepSeekV3Patterns = {
    "\\p{N}{1,3}", "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?"
    "[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"};

enum class PreKind { Gpt2, DigitsGpt2, Llama3, Qwen2, Gpt4o, DeepSeekV3 };

struct PreName {
  std::string_view name;
  PreKind kind;
};

// Names grouped as llama.cpp groups them (same regexes, same flags).
constexpr std::array kPreNames = {
    PreName{"gpt-2", PreKind::Gpt2},
    PreName{"gpt2", PreKind::Gpt2},
    PreName{"phi-2", PreKind::Gpt2},
    PreName{"smollm", PreKind::DigitsGpt2},
    PreName{"starcoder", PreKind::DigitsGpt2},
    PreName{"refact", PreKind::DigitsGpt2},
    PreName{"command-r", PreKind::DigitsGpt2},
    PreName{"codeshell", PreKind::DigitsGpt2},
    PreName{"exaone", PreKind::DigitsGpt2},
    PreName{"minerva-7b", PreKind::DigitsGpt2},
    PreName{"llama3", PreKind::Llama3},
    PreName{"llama-v3", PreKind::Llama3},
    PreName{"llama-bpe", PreKind::Llama3},
    PreName{"falcon3", PreKind::Llama3},
    PreName{"falcon-h1", PreKind::Llama3},
    PreName{"pixtral", PreKind::Llama3},
    PreName{"midm-2.0", PreKind::Llama3},
    PreName{"lfm2", PreKind::Llama3},
    PreName{"jina-v5-nano", PreKind::Llama3},
    PreName{"qwen2", PreKind::Qwen2},
    PreName{"deepseek-r1-qwen", PreKind::Qwen2},
    PreName{"megrez", PreKind::Qwen2},
    PreName{"gpt-4o", PreKind::Gpt4o},
    PreName{"deepseek-v3", PreKind::DeepSeekV3},
};

// GGUF token types (llama.cpp's llama_token_type).
constexpr int64_t kTypeUnknown = 2;
constexpr int64_t kTypeControl = 3;
constexpr int64_t kTypeUserDefined = 4;

const nlohmann::json* find(const nlohmann::json& md, const char* key) {
  const auto it = md.find(key);
  return it == md.end() || it->is_null() ? nullptr : &*it;
}

std::optional<int32_t> optional_id(const nlohmann::json& md, const char* key) {
  const auto* v = find(md, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number_integer())
    throw Error(std::string("GGUF metadata: ") + key + " must be an integer");
  const int64_t id = v->get<int64_t>();
  if (id < 0 || id > INT32_MAX)
    throw Error(std::string("GGUF metadata: ") + key + " is out of range");
  return static_cast<int32_t>(id);
}

std::optional<bool> optional_bool(const nlohmann::json& md, const char* key) {
  const auto* v = find(md, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_boolean()) throw Error(std::string("GGUF metadata: ") + key + " must be a bool");
  return v->get<bool>();
}

const nlohmann::json& string_array(const nlohmann::json& md, const char* key) {
  const auto* v = find(md, key);
  if (v == nullptr) throw Error(std::string("GGUF metadata: ") + key + " is missing");
  if (!v->is_array()) throw Error(std::string("GGUF metadata: ") + key + " must be an array");
  for (const auto& s : *v)
    if (!s.is_string()) throw Error(std::string("GGUF metadata: ") + key + " must hold strings");
  return *v;
}

// BOS/EOS, the add_bos/add_eos flags (llama.cpp's defaults per model) and the template.
std::unique_ptr<Tokenizer> finish(const nlohmann::json& md, PipelineParts parts,
                                  bool default_add_bos) {
  parts.bos_id = optional_id(md, "tokenizer.ggml.bos_token_id");
  parts.eos_id = optional_id(md, "tokenizer.ggml.eos_token_id");
  if (optional_bool(md, "tokenizer.ggml.add_bos_token").value_or(default_add_bos) && parts.bos_id) {
    parts.affixes.prefix.push_back(*parts.bos_id);
  }
  if (optional_bool(md, "tokenizer.ggml.add_eos_token").value_or(false) && parts.eos_id) {
    parts.affixes.suffix.push_back(*parts.eos_id);
  }
  parts.chat_templates = gguf_chat_templates(md);
  return std::make_unique<PipelineTokenizer>(std::move(parts));
}

const nlohmann::json* token_types(const nlohmann::json& md, size_t n) {
  const auto* types = find(md, "tokenizer.ggml.token_type");
  if (types != nullptr && (!types->is_array() || types->size() != n)) {
    throw Error("GGUF metadata: tokenizer.ggml.token_type must be an array as long as the tokens");
  }
  return types;
}

// SentencePiece vocabularies (Llama 1/2, Mistral v1, Gemma 1...): llama.cpp prefixes each
// run of text between special tokens with a space (add_space_prefix), writes spaces as
// U+2581 and merges by score; decoding is the usual SentencePiece one.
std::unique_ptr<Tokenizer> build_llama(const nlohmann::json& md) {
  const auto& tokens = string_array(md, "tokenizer.ggml.tokens");
  const auto* score_list = find(md, "tokenizer.ggml.scores");
  if (score_list == nullptr || !score_list->is_array() || score_list->size() != tokens.size()) {
    throw Error("GGUF metadata: tokenizer.ggml.scores must be an array as long as the tokens");
  }
  const auto* types = token_types(md, tokens.size());
  PipelineParts parts;
  std::vector<std::string> pieces;
  std::vector<float> scores;
  pieces.reserve(tokens.size());
  scores.reserve(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    const auto& text = tokens[i].get_ref<const std::string&>();
    if (!(*score_list)[i].is_number()) throw Error("GGUF metadata: scores must be numbers");
    pieces.push_back(text);
    scores.push_back((*score_list)[i].get<float>());
    const int64_t type =
        types != nullptr && (*types)[i].is_number_integer() ? (*types)[i].get<int64_t>() : 1;
    // llama.cpp matches control, user-defined and unknown tokens in the text.
    if ((type == kTypeControl || type == kTypeUserDefined || type == kTypeUnknown) &&
        !text.empty()) {
      AddedToken t;
      t.content = text;
      t.id = static_cast<int32_t>(i);
      t.special = type != kTypeUserDefined;
      parts.added.push_back(std::move(t));
    }
  }
  const bool space_prefix = optional_bool(md, "tokenizer.ggml.add_space_prefix").value_or(true);
  std::vector<std::unique_ptr<Normalizer>> steps;
  if (space_prefix) steps.push_back(make_prepend(" "));
  steps.push_back(make_replace(" ", false, "\xE2\x96\x81"));
  parts.normalizer = make_sequence_normalizer(std::move(steps));
  parts.model = std::make_unique<SpmModel>(std::move(pieces), std::move(scores),
                                           optional_id(md, "tokenizer.ggml.unknown_token_id"));
  parts.decoder = Decoder::sentencepiece(space_prefix);
  return finish(md, std::move(parts), true);
}

std::unique_ptr<Tokenizer> build(const nlohmann::json& md) {
  if (!md.is_object()) throw Error("GGUF metadata must be a JSON object");
  const auto* model = find(md, "tokenizer.ggml.model");
  if (model == nullptr || !model->is_string()) {
    throw Error("GGUF metadata: tokenizer.ggml.model is missing");
  }
  const std::string model_name = model->get<std::string>();
  if (model_name == "llama") return build_llama(md);
  if (model_name != "gpt2")
    throw Error("GGUF tokenizer model '" + model_name + "' is not supported");

  const auto* pre = find(md, "tokenizer.ggml.pre");
  const std::string pre_name = pre != nullptr && pre->is_string() ? pre->get<std::string>() : "";
  const PreName* spec = nullptr;
  for (const PreName& p : kPreNames)
    if (p.name == pre_name) spec = &p;
  if (spec == nullptr) {
    throw Error("GGUF pre-tokenizer '" + (pre_name.empty() ? "(missing)" : pre_name) +
                "' (tokenizer.ggml.pre) is not supported yet");
  }

  PipelineParts parts;
  bool ignore_merges = false;
  bool default_add_bos = false;
  std::vector<std::unique_ptr<PreTokenizer>> steps;
  switch (spec->kind) {
    case PreKind::Gpt2:
      steps.push_back(make_byte_level(false, true));
      break;
    case PreKind::DigitsGpt2:
      steps.push_back(make_digits(true));
      steps.push_back(make_byte_level(false, true));
      break;
    case PreKind::Llama3:
      steps.push_back(make_split(Regex::pattern(kLlama3Pattern), SplitBehavior::Isolated, false));
      steps.push_back(make_byte_level(false, false));
      ignore_merges = true;
      default_add_bos = true;
      break;
    case PreKind::Qwen2:
      // Qwen's tokenizer.json normalizes to NFC; llama.cpp skips that step, which only
      // differs on text that is not already NFC.
      parts.normalizer = make_unicode_normalizer(UnicodeForm::NFC);
      steps.push_back(make_split(Regex::pattern(kQwen2Pattern), SplitBehavior::Isolated, false));
      steps.push_back(make_byte_level(false, false));
      break;
    case PreKind::Gpt4o:
      steps.push_back(make_split(Regex::pattern(kGpt4oPattern), SplitBehavior::Isolated, false));
      steps.push_back(make_byte_level(false, false));
      // As gpt-oss's tokenizer.json; with o200k's merges it only saves work (BPE gives every
      // in-vocab word its own token anyway: checked over the whole vocabulary).
      ignore_merges = true;
      break;
    case PreKind::DeepSeekV3:
      for (const std::string_view p : kDeepSeekV3Patterns)
        steps.push_back(make_split(Regex::pattern(p), SplitBehavior::Isolated, false));
      steps.push_back(make_byte_level(false, false));
      default_add_bos = true;
      break;
  }
  parts.pre_tokenizer = make_sequence(std::move(steps));

  const auto& tokens = string_array(md, "tokenizer.ggml.tokens");
  const auto& merge_list = string_array(md, "tokenizer.ggml.merges");
  const auto* types = token_types(md, tokens.size());

  BpeModel::Vocab vocab;
  vocab.reserve(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    const auto& text = tokens[i].get_ref<const std::string&>();
    vocab.insert_or_assign(text, static_cast<int32_t>(i));  // a later duplicate wins
    const int64_t type =
        types != nullptr && (*types)[i].is_number_integer() ? (*types)[i].get<int64_t>() : 1;
    if ((type == kTypeControl || type == kTypeUserDefined) && !text.empty()) {
      AddedToken t;
      t.content = text;
      t.id = static_cast<int32_t>(i);
      t.special = type == kTypeControl;
      parts.added.push_back(std::move(t));
    }
  }
  std::vector<std::pair<std::string, std::string>> merges;
  merges.reserve(merge_list.size());
  for (const auto& m : merge_list) {
    const auto& s = m.get_ref<const std::string&>();
    const size_t space = s.find(' ');
    if (space == std::string::npos) throw Error("GGUF metadata: merge '" + s + "' has no space");
    merges.emplace_back(s.substr(0, space), s.substr(space + 1));
  }
  BpeOptions opts;
  opts.byte_level = true;
  opts.ignore_merges = ignore_merges;
  parts.model = std::make_unique<BpeModel>(std::move(vocab), merges, opts);
  parts.decoder = Decoder::byte_level();

  return finish(md, std::move(parts), default_add_bos);
}

}  // namespace

std::map<std::string, std::string> gguf_chat_templates(const nlohmann::json& md) {
  // llama.cpp's converter writes a list-form template as tokenizer.chat_template (the
  // default) plus tokenizer.chat_template.<name> for the others.
  std::map<std::string, std::string> out;
  if (!md.is_object()) return out;
  const std::string prefix = "tokenizer.chat_template";
  const auto& keys = md.get_ref<const nlohmann::json::object_t&>();
  for (auto it = keys.lower_bound(prefix); it != keys.end() && it->first.starts_with(prefix);
       ++it) {
    const auto& [key, value] = *it;
    if (!value.is_string()) continue;
    if (key == prefix) {
      out["default"] = value.get<std::string>();
    } else if (key[prefix.size()] == '.') {
      out[key.substr(prefix.size() + 1)] = value.get<std::string>();
    }
  }
  return out;
}

std::unique_ptr<Tokenizer> Tokenizer::from_gguf_metadata(const nlohmann::json& metadata) {
  try {
    return build(metadata);
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("GGUF tokenizer metadata is malformed: ") + e.what());
  }
}

}  // namespace heron::tokenizer
