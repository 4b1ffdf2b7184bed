#pragma once
// tokenizer.json "post_processor" step for a single sequence: the special ids placed
// before and after the encoded text when add_special is on (e.g. Llama 3's BOS).
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

namespace heron::tokenizer {

struct SpecialAffixes {
  std::vector<int32_t> prefix;
  std::vector<int32_t> suffix;
};

// null, ByteLevel, TemplateProcessing, RobertaProcessing, BertProcessing and Sequence of
// those. Throws heron::Error for malformed or not yet supported post-processors.
SpecialAffixes parse_post_processor(const nlohmann::json& spec);

}  // namespace heron::tokenizer
