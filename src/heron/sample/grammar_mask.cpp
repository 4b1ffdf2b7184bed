#include "heron/sample/grammar_mask.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <mlx/ops.h>

#include "heron/core/error.h"

namespace heron::sample {

namespace mx = mlx::core;

namespace {

void advance(grammar::Matcher& matcher, int id) {
  if (!matcher.accept(id)) {
    throw Error("internal error: token " + std::to_string(id) + " is outside the output's grammar");
  }
}

}  // namespace

GrammarMask::GrammarMask(grammar::Matcher matcher, int logits_size)
    : matcher_(std::move(matcher)), logits_size_(logits_size) {}

const mx::array& GrammarMask::allowed() {
  return device_mask(matcher_.allowed());
}

int GrammarMask::valid_prefix(std::span<const int> tokens) const {
  grammar::Matcher ahead = matcher_;  // a copy holds only the parse state
  int n = 0;
  while (n < static_cast<int>(tokens.size()) && ahead.accept(tokens[static_cast<size_t>(n)])) ++n;
  return n;
}

mx::array GrammarMask::allowed_along(std::span<const int> tokens) {
  grammar::Matcher ahead = matcher_;
  std::vector<mx::array> rows{device_mask(ahead.allowed())};
  for (int id : tokens) {
    advance(ahead, id);
    rows.push_back(device_mask(ahead.allowed()));
  }
  return mx::concatenate(rows, 0);
}

const mx::array& GrammarMask::device_mask(const std::shared_ptr<const grammar::TokenMask>& mask) {
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

bool GrammarMask::accept(int id) {
  advance(matcher_, id);
  return complete();
}

}  // namespace heron::sample
