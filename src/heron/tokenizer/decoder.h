#pragma once
// tokenizer.json "decoder" step, reduced to what streaming needs: the bytes each token
// contributes. Decoded text is the concatenation, made valid UTF-8 by utf8::sanitize.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace heron::tokenizer {

class TokenDecoder {
 public:
  // ByteLevel only for now; throws heron::Error for anything else.
  static TokenDecoder from_json(const nlohmann::json& spec);
  static TokenDecoder byte_level() { return TokenDecoder(); }

  // HF ByteLevel rule: unspell the token; if any character is outside the byte alphabet
  // (e.g. an added token with a space), the token's own UTF-8 is used unchanged.
  std::string bytes(std::string_view spelled) const;
};

}  // namespace heron::tokenizer
