#include "heron/tokenizer/model.h"

#include <algorithm>

#include "heron/core/error.h"

namespace heron::tokenizer {

std::vector<std::string> invert_vocab(const Vocab& vocab) {
  int64_t max_id = -1;
  for (const auto& [tok, id] : vocab) {
    if (id < 0 || id >= kMaxTokenId) {
      throw Error("tokenizer: vocab id " + std::to_string(id) + " of token '" + tok +
                  "' is out of range");
    }
    max_id = std::max<int64_t>(max_id, id);
  }
  std::vector<std::string> out(static_cast<size_t>(max_id + 1));
  std::vector<uint8_t> seen(out.size(), 0);
  for (const auto& [tok, id] : vocab) {
    if (seen[id]) {
      throw Error("tokenizer: vocab id " + std::to_string(id) + " is given to both '" + out[id] +
                  "' and '" + tok + "'");
    }
    seen[id] = 1;
    out[id] = tok;
  }
  return out;
}

}  // namespace heron::tokenizer
