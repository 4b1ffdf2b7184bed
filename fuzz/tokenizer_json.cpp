// tokenizer.json loading, then encoding and decoding. Input: tokenizer.json, optionally
// followed by a NUL and the text to encode.
#include "fuzz_file.h"
#include "heron/core/error.h"
#include "heron/tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [json_text, text] = heron::fuzz::split_at_nul(data, size);
  nlohmann::json tokenizer_json;
  try {
    tokenizer_json = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception&) {
    return 0;  // nlohmann's parser is not ours to fuzz; what we build from the JSON is
  }
  try {
    auto tok = heron::tokenizer::Tokenizer::from_json(tokenizer_json, nlohmann::json());
    for (const bool special : {false, true}) {
      const auto ids =
          tok->encode(text.empty() ? "Hello world, <|im_start|>hi 123" : text, special, special);
      tok->decode(ids, special);
    }
  } catch (const heron::Error&) {
  }
  return 0;
}
