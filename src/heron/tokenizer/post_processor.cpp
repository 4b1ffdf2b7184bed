#include "heron/tokenizer/post_processor.h"

#include "heron/core/error.h"
#include "heron/tokenizer/json_util.h"

namespace heron::tokenizer {
namespace {

// ["<s>", 0] as Roberta/Bert processors spell a token.
int32_t pair_id(const nlohmann::json& spec, const char* key, const std::string& what) {
  const auto& v = json_array(spec, key, what);
  if (v.size() != 2 || !v[1].is_number_integer()) {
    throw Error("tokenizer.json: " + what + " field '" + key + "' must be [token, id]");
  }
  return v[1].get<int32_t>();
}

SpecialAffixes parse_template(const nlohmann::json& spec) {
  const std::string what = "TemplateProcessing";
  const auto& single = json_array(spec, "single", what);
  const auto& specials = json_field(spec, "special_tokens", what);
  SpecialAffixes out;
  bool seen_sequence = false;
  for (const auto& item : single) {
    if (item.is_object() && item.contains("Sequence")) {
      if (seen_sequence)
        throw Error("tokenizer.json: TemplateProcessing 'single' has two sequences");
      seen_sequence = true;
      continue;
    }
    const auto& tok = json_object(item, "SpecialToken", what + " item");
    const std::string name = json_string(tok, "id", "TemplateProcessing SpecialToken");
    const auto& entry = json_object(specials, name.c_str(), what + " special_tokens");
    for (const auto& id : json_array(entry, "ids", what + " special token '" + name + "'")) {
      if (!id.is_number_integer()) throw Error("tokenizer.json: " + what + " ids must be integers");
      (seen_sequence ? out.suffix : out.prefix).push_back(id.get<int32_t>());
    }
  }
  if (!seen_sequence) throw Error("tokenizer.json: TemplateProcessing 'single' has no sequence");
  return out;
}

}  // namespace

SpecialAffixes parse_post_processor(const nlohmann::json& spec) {
  if (spec.is_null()) return {};
  const std::string type = json_string(spec, "type", "post_processor");
  if (type == "ByteLevel") return {};  // only trims offsets, which we do not track
  if (type == "TemplateProcessing") return parse_template(spec);
  if (type == "RobertaProcessing" || type == "BertProcessing") {
    return {{pair_id(spec, "cls", type)}, {pair_id(spec, "sep", type)}};
  }
  if (type == "Sequence") {
    // Each processor wraps the result of the previous one.
    SpecialAffixes out;
    for (const auto& p : json_array(spec, "processors", "post_processor Sequence")) {
      SpecialAffixes inner = parse_post_processor(p);
      inner.prefix.insert(inner.prefix.end(), out.prefix.begin(), out.prefix.end());
      out.suffix.insert(out.suffix.end(), inner.suffix.begin(), inner.suffix.end());
      out.prefix = std::move(inner.prefix);
    }
    return out;
  }
  throw Error("tokenizer.json: post_processor type '" + type + "' is not supported yet");
}

}  // namespace heron::tokenizer
