#include "heron/sample/grammar_mask.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "heron/core/error.h"

namespace heron::sample {

namespace mx = mlx::core;

GrammarMask::GrammarMask(grammar::Matcher matcher, int logits_size)
    : matcher_(std::move(matcher)), logits_size_(logits_size) {}

const mx::array& GrammarMask::allowed() {
  auto mask = matcher_.allowed();
  auto it = arrays_.find(mask.get());
  if (it == arrays_.end()) {
    // 0/1 bytes are the bool representation the array copies.
    std::vector<uint8_t> bytes(static_cast<size_t>(logits_size_), 0);
    std::copy_n(mask->allowed.begin(), std::min(bytes.size(), mask->allowed.size()), bytes.begin());
    mx::array device(reinterpret_cast<const bool*>(bytes.data()), {1, logits_size_}, mx::bool_);
    it = arrays_.emplace(mask.get(), std::make_pair(mask, device)).first;
  }
  return it->second.second;
}

void GrammarMask::accept(int id) {
  if (!matcher_.accept(id)) {
    throw Error("internal error: token " + std::to_string(id) + " is outside the output's grammar");
  }
}

}  // namespace heron::sample
