#include "heron/tokenizer/model.h"

#include <algorithm>

#include "heron/core/error.h"

namespace heron::tokenizer {

size_t Vocab::probe(std::string_view key, size_t hash) const {
  const size_t mask = slots_.size() - 1;
  const auto tag = static_cast<uint32_t>(hash >> 32);
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.index == 0) return i;
    if (s.tag == tag && entries_[s.index - 1].first == key) return i;
  }
}

void Vocab::rehash(size_t slots) {
  slots_.assign(slots, Slot{});
  const size_t mask = slots - 1;
  for (size_t e = 0; e < entries_.size(); ++e) {
    const size_t hash = StringHash{}(entries_[e].first);
    size_t i = hash & mask;
    while (slots_[i].index != 0) i = (i + 1) & mask;
    slots_[i] = {static_cast<uint32_t>(e + 1), static_cast<uint32_t>(hash >> 32)};
  }
}

void Vocab::reserve(size_t n) {
  entries_.reserve(n);
  size_t slots = 16;
  while (slots < n * 2) slots <<= 1;
  if (slots > slots_.size()) rehash(slots);
}

Vocab::const_iterator Vocab::find(std::string_view key) const {
  if (slots_.empty()) return end();
  const Slot& s = slots_[probe(key, StringHash{}(key))];
  return s.index == 0 ? end() : entries_.begin() + static_cast<std::ptrdiff_t>(s.index - 1);
}

void Vocab::emplace(std::string key, int32_t id) {
  if ((entries_.size() + 1) * 2 > slots_.size()) rehash(std::max<size_t>(16, slots_.size() * 2));
  const size_t hash = StringHash{}(key);
  Slot& s = slots_[probe(key, hash)];
  if (s.index != 0) return;
  entries_.emplace_back(std::move(key), id);
  s = {static_cast<uint32_t>(entries_.size()), static_cast<uint32_t>(hash >> 32)};
}

void Vocab::insert_or_assign(std::string key, int32_t id) {
  if ((entries_.size() + 1) * 2 > slots_.size()) rehash(std::max<size_t>(16, slots_.size() * 2));
  const size_t hash = StringHash{}(key);
  Slot& s = slots_[probe(key, hash)];
  if (s.index != 0) {
    entries_[s.index - 1].second = id;
    return;
  }
  entries_.emplace_back(std::move(key), id);
  s = {static_cast<uint32_t>(entries_.size()), static_cast<uint32_t>(hash >> 32)};
}

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
