// A JSON schema from a client (format / response_format) through grammar/: compiling must
// end in a grammar or a heron::Error, never a crash, hang or blowup, and walking a grammar
// that compiled must keep every invariant of the matcher.
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "heron/core/error.h"
#include "heron/grammar/json_schema.h"
#include "heron/grammar/matcher.h"

using namespace heron::grammar;

namespace {

// Single bytes of JSON text, a few multi-byte pieces (one with a split code point), an
// empty token and an end token.
std::shared_ptr<const Vocabulary> vocabulary() {
  static const auto v = [] {
    std::vector<std::optional<std::string>> bytes;
    for (const char* t :
         {"{",     "}",    "[",   "]",     ":",    ",",    " ",        "\n",
          "\"",    "\\",   "-",   ".",     "e",    "0",    "1",        "9",
          "a",     "z",    "A",   "_",     "@",    "T",    "t",        "true",
          "false", "null", "\":", "\",\"", "\xC3", "\xA9", "\xC3\xA9", "\xF0\x9F\x98\x80",
          "u00e9", "n",    "",    "/"})
      bytes.emplace_back(t);
    bytes.emplace_back(std::nullopt);  // the end token
    const auto end = static_cast<int32_t>(bytes.size() - 1);
    return std::make_shared<const Vocabulary>(std::move(bytes), std::vector<int32_t>{end});
  }();
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json schema =
      nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (schema.is_discarded()) return 0;
  std::shared_ptr<const Grammar> grammar;
  try {
    grammar = compile_json_schema(schema);
  } catch (const heron::Error&) {
    return 0;
  }
  const auto vocab = vocabulary();
  Matcher m(grammar, vocab);
  std::mt19937 rng(static_cast<uint32_t>(size));
  for (int step = 0; step < 64 && !m.complete(); ++step) {
    const auto mask = m.allowed();
    if (mask->allowed.size() != static_cast<size_t>(vocab->size())) std::abort();
    std::vector<int32_t> ids;
    for (int32_t id = 0; id < vocab->size(); ++id) {
      // The mask and accept() agree on every token.
      if (Matcher(m).accept(id) != (mask->allowed[id] != 0)) std::abort();
      if (mask->allowed[id]) ids.push_back(id);
    }
    if (mask->allowed[vocab->size() - 1] != m.accepting()) std::abort();
    if (ids.empty()) break;  // a dead end this tiny vocabulary cannot leave
    if (!m.accept(ids[rng() % ids.size()])) std::abort();
    if (m.allowed() != m.allowed()) std::abort();  // memoized per state
  }
  return 0;
}
