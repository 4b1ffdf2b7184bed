#pragma once
// GPT-2's byte-level alphabet: every byte maps to one printable code point, so a
// vocabulary of byte strings can be spelled as text in tokenizer.json and GGUF files.
// Internally we tokenize raw bytes and only spell/unspell at load and lookup time.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace heron::tokenizer::byte_level {

char32_t byte_to_char(uint8_t b);

// Raw bytes -> spelled UTF-8 ("hello world" -> "helloĠworld").
std::string spell(std::string_view bytes);

// Spelled UTF-8 -> raw bytes; nullopt when some character is outside the alphabet
// (e.g. an added token like "<｜begin▁of▁sentence｜>") or the text is not UTF-8.
std::optional<std::string> unspell(std::string_view spelled);

}  // namespace heron::tokenizer::byte_level
