// make_model: a tokenizer.json "model" object -> BpeModel, WordPieceModel or UnigramModel.
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "heron/core/error.h"
#include "heron/tokenizer/bpe_model.h"
#include "heron/tokenizer/json_reader.h"
#include "heron/tokenizer/json_util.h"
#include "heron/tokenizer/model.h"
#include "heron/tokenizer/unigram_model.h"
#include "heron/tokenizer/wordpiece_model.h"

namespace heron::tokenizer {
namespace {

Vocab parse_vocab(const nlohmann::json& model, StreamedModelParts* streamed) {
  if (streamed != nullptr && streamed->vocab) return std::move(*streamed->vocab);
  Vocab vocab;
  const auto& v = json_object(model, "vocab", "model");
  vocab.reserve(v.size());
  for (const auto& [tok, id] : v.items()) {
    if (!id.is_number_integer()) {
      throw Error("tokenizer.json: vocab id of '" + tok + "' must be an integer");
    }
    const int64_t value = id.get<int64_t>();
    if (value < 0 || value >= kMaxTokenId) {
      throw Error("tokenizer.json: vocab id of '" + tok + "' is out of range");
    }
    vocab.emplace(tok, static_cast<int32_t>(value));
  }
  return vocab;
}

std::vector<std::pair<std::string, std::string>> parse_merges(const nlohmann::json& model,
                                                              StreamedModelParts* streamed) {
  if (streamed != nullptr && streamed->merges) return std::move(*streamed->merges);
  std::vector<std::pair<std::string, std::string>> merges;
  if (!model.contains("merges") || model["merges"].is_null()) return merges;
  const auto& list = json_array(model, "merges", "model");
  merges.reserve(list.size());
  for (const auto& m : list) {
    if (m.is_string()) {
      // Legacy "left right" form: exactly one space, as HF requires.
      const auto& s = m.get_ref<const std::string&>();
      const size_t space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos) {
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

std::string string_or_empty(const nlohmann::json& model, const char* key) {
  const auto it = model.find(key);
  if (it == model.end() || it->is_null()) return {};
  return json_string(model, key, "model");
}

std::unique_ptr<Model> bpe(const nlohmann::json& model, bool byte_level,
                           StreamedModelParts* streamed) {
  BpeOptions opts;
  opts.byte_level = byte_level;
  opts.ignore_merges = json_bool_or(model, "ignore_merges", false, "model");
  opts.byte_fallback = json_bool_or(model, "byte_fallback", false, "model");
  opts.fuse_unk = json_bool_or(model, "fuse_unk", false, "model");
  opts.continuing_subword_prefix = string_or_empty(model, "continuing_subword_prefix");
  opts.end_of_word_suffix = string_or_empty(model, "end_of_word_suffix");
  if (model.contains("unk_token") && !model["unk_token"].is_null()) {
    opts.unk_token = json_string(model, "unk_token", "model");
  }
  // "dropout" only matters for training; inference is deterministic.
  return std::make_unique<BpeModel>(parse_vocab(model, streamed), parse_merges(model, streamed),
                                    opts);
}

std::unique_ptr<Model> wordpiece(const nlohmann::json& model, StreamedModelParts* streamed) {
  WordPieceOptions opts;
  if (model.contains("unk_token")) opts.unk_token = json_string(model, "unk_token", "model");
  if (model.contains("continuing_subword_prefix")) {
    opts.continuing_subword_prefix = json_string(model, "continuing_subword_prefix", "model");
  }
  if (model.contains("max_input_chars_per_word")) {
    const int64_t n = json_int(model, "max_input_chars_per_word", "model");
    if (n < 0) throw Error("tokenizer.json: max_input_chars_per_word must not be negative");
    opts.max_input_chars_per_word = static_cast<size_t>(n);
  }
  return std::make_unique<WordPieceModel>(parse_vocab(model, streamed), opts);
}

// The score HF `tokenizers` ends up with. Its JSON reader (serde_json without
// float_roundtrip) reads "d.ddd" as (double)digits / 10^k, which is off by one unit in the
// last place for about a fifth of typical scores; Viterbi ties then break differently.
// Files hold the shortest repr of each score, so its digits are recovered from the
// correctly parsed value and read again the way serde_json does.
double as_serde_json_reads_it(double value) {
  if (value == 0 || !std::isfinite(value)) return value;
  static const std::array<double, 309> kPow10 = [] {
    std::array<double, 309> t{};
    for (size_t i = 0; i < t.size(); ++i)
      t[i] = std::strtod(("1e" + std::to_string(i)).c_str(), nullptr);
    return t;
  }();
  char buf[64];
  const auto r =
      std::to_chars(buf, buf + sizeof(buf), std::fabs(value), std::chars_format::scientific);
  const std::string_view text(buf, static_cast<size_t>(r.ptr - buf));
  const size_t e = text.find('e');
  uint64_t digits = 0;
  int count = 0;
  for (char c : text.substr(0, e)) {
    if (c == '.') continue;
    digits = digits * 10 + static_cast<uint64_t>(c - '0');
    ++count;
  }
  int exponent = std::atoi(std::string(text.substr(e + 1)).c_str()) - (count - 1);
  auto f = static_cast<double>(digits);
  while (true) {
    if (exponent >= -308 && exponent <= 308) {
      f = exponent >= 0 ? f * kPow10[static_cast<size_t>(exponent)]
                        : f / kPow10[static_cast<size_t>(-exponent)];
      break;
    }
    if (exponent > 0) return value;  // out of range: serde fails; keep ours
    f /= 1e308;
    exponent += 308;
  }
  return value < 0 ? -f : f;
}

std::unique_ptr<Model> unigram(const nlohmann::json& model) {
  std::vector<std::pair<std::string, double>> vocab;
  const auto& list = json_array(model, "vocab", "Unigram model");
  vocab.reserve(list.size());
  for (const auto& item : list) {
    if (!item.is_array() || item.size() != 2 || !item[0].is_string() || !item[1].is_number()) {
      throw Error("tokenizer.json: a Unigram vocab entry must be [token, score], got " +
                  item.dump().substr(0, 80));
    }
    vocab.emplace_back(item[0].get<std::string>(), as_serde_json_reads_it(item[1].get<double>()));
  }
  std::optional<int32_t> unk_id;
  if (model.contains("unk_id") && !model["unk_id"].is_null()) {
    const int64_t id = json_int(model, "unk_id", "Unigram model");
    if (id < 0 || id >= static_cast<int64_t>(vocab.size())) {
      throw Error("tokenizer.json: Unigram unk_id is outside the vocab");
    }
    unk_id = static_cast<int32_t>(id);
  }
  return std::make_unique<UnigramModel>(std::move(vocab), unk_id,
                                        json_bool_or(model, "byte_fallback", false, "model"));
}

}  // namespace

std::unique_ptr<Model> make_model(const nlohmann::json& model, bool byte_level,
                                  StreamedModelParts* streamed) {
  if (!model.is_object()) throw Error("tokenizer.json: 'model' must be an object");
  std::string type;
  if (model.contains("type")) {
    type = json_string(model, "type", "model");
  } else if (model.contains("merges")) {
    type = "BPE";  // old files leave the type out
  } else if (model.contains("vocab") && model["vocab"].is_array()) {  // never streamed
    type = "Unigram";
  } else if (model.contains("max_input_chars_per_word")) {
    type = "WordPiece";
  } else {
    type = "BPE";
  }
  if (type == "BPE") return bpe(model, byte_level, streamed);
  if (type == "WordPiece") return wordpiece(model, streamed);
  if (type == "Unigram") return unigram(model);
  throw Error("tokenizer.json: model type '" + type + "' is not supported yet");
}

}  // namespace heron::tokenizer
