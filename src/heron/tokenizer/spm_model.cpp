#include "heron/tokenizer/spm_model.h"

#include <algorithm>
#include <queue>

#include "heron/core/error.h"
#include "heron/tokenizer/utf8.h"

namespace heron::tokenizer {
namespace {

struct Symbol {
  size_t begin;
  size_t len;  // 0 once merged into its left neighbour
  int32_t prev;
  int32_t next;
};

struct Bigram {
  int32_t left;
  int32_t right;
  float score;
  size_t len;
};

// llama.cpp's order: highest score first, then the leftmost pair.
struct BigramLater {
  bool operator()(const Bigram& l, const Bigram& r) const {
    return l.score < r.score || (l.score == r.score && l.left > r.left);
  }
};

}  // namespace

SpmModel::SpmModel(std::vector<std::string> tokens, std::vector<float> scores,
                   std::optional<int32_t> unk_id)
    : tokens_(std::move(tokens)), scores_(std::move(scores)), unk_id_(unk_id) {
  if (scores_.size() != tokens_.size()) {
    throw Error("tokenizer: SentencePiece scores and tokens differ in number");
  }
  if (static_cast<int64_t>(tokens_.size()) >= kMaxTokenId)
    throw Error("tokenizer: vocab too large");
  vocab_.reserve(tokens_.size());
  for (size_t i = 0; i < tokens_.size(); ++i) {
    vocab_.insert_or_assign(tokens_[i], static_cast<int32_t>(i));
  }
  static const char* kHex = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    const std::string code = std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">";
    int32_t id = lookup(code);
    if (id < 0) id = lookup(std::string(1, static_cast<char>(b)));  // llama.cpp's fallback
    byte_ids_[b] = id;
  }
}

int32_t SpmModel::lookup(std::string_view text) const {
  const auto it = vocab_.find(text);
  return it == vocab_.end() ? -1 : it->second;
}

void SpmModel::byte_tokens(std::string_view text, std::vector<int32_t>& out) const {
  for (char c : text) {
    const int32_t id = byte_ids_[static_cast<uint8_t>(c)];
    if (id >= 0) {
      out.push_back(id);
    } else if (unk_id_) {
      out.push_back(*unk_id_);  // llama.cpp would abort here
    }
  }
}

void SpmModel::tokenize(std::string_view text, std::vector<int32_t>& out) const {
  if (text.empty()) return;
  thread_local std::vector<Symbol> symbols;
  symbols.clear();
  for (size_t offs = 0; offs < text.size();) {
    const size_t len = std::min<size_t>(utf8::decode(text, offs).len, text.size() - offs);
    const auto n = static_cast<int32_t>(symbols.size());
    symbols.push_back({offs, len, n - 1, offs + len == text.size() ? -1 : n + 1});
    offs += len;
  }
  std::priority_queue<Bigram, std::vector<Bigram>, BigramLater> queue;
  auto try_add = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const size_t len = symbols[left].len + symbols[right].len;
    const int32_t id = lookup(text.substr(symbols[left].begin, len));
    if (id < 0) return;
    queue.push({left, right, scores_[id], len});
  };
  for (int32_t i = 1; i < static_cast<int32_t>(symbols.size()); ++i) try_add(i - 1, i);

  while (!queue.empty()) {
    const Bigram b = queue.top();
    queue.pop();
    Symbol& left = symbols[b.left];
    Symbol& right = symbols[b.right];
    if (left.len == 0 || right.len == 0 || left.len + right.len != b.len) continue;
    left.len += right.len;
    right.len = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = b.left;
    try_add(left.prev, b.left);
    try_add(b.left, left.next);
  }
  // Every merged symbol is a token; an unmerged character may not be (bytes then).
  for (int32_t i = 0; i != -1; i = symbols[i].next) {
    const std::string_view s = text.substr(symbols[i].begin, symbols[i].len);
    const int32_t id = lookup(s);
    if (id >= 0) {
      out.push_back(id);
    } else {
      byte_tokens(s, out);
    }
  }
}

std::optional<int32_t> SpmModel::token_to_id(std::string_view token) const {
  const int32_t id = lookup(token);
  if (id < 0) return std::nullopt;
  return id;
}

const std::string* SpmModel::id_to_token(int32_t id) const {
  if (id < 0 || id >= id_limit()) return nullptr;
  return &tokens_[id];
}

}  // namespace heron::tokenizer
