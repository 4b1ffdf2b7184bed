#include "heron/tokenizer/decoder.h"

#include "heron/core/error.h"
#include "heron/tokenizer/byte_level.h"
#include "heron/tokenizer/json_util.h"

namespace heron::tokenizer {

TokenDecoder TokenDecoder::from_json(const nlohmann::json& spec) {
  if (spec.is_null()) {
    throw Error("tokenizer.json: a byte-level tokenizer without a decoder is not supported yet");
  }
  const std::string type = json_string(spec, "type", "decoder");
  if (type == "ByteLevel") return byte_level();
  throw Error("tokenizer.json: decoder type '" + type + "' is not supported yet");
}

std::string TokenDecoder::bytes(std::string_view spelled) const {
  if (auto raw = byte_level::unspell(spelled)) return std::move(*raw);
  return std::string(spelled);
}

}  // namespace heron::tokenizer
