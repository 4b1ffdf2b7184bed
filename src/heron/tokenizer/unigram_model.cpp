#include "heron/tokenizer/unigram_model.h"

#include <algorithm>
#include <limits>

#include "heron/core/error.h"
#include "heron/tokenizer/utf8.h"

namespace heron::tokenizer {

// Byte trie with one open-addressing table for all edges: (node, byte) -> child.
struct UnigramModel::Trie {
  struct Edge {
    uint64_t key = kEmpty;
    int32_t child = 0;
  };
  static constexpr uint64_t kEmpty = ~uint64_t{0};

  std::vector<int32_t> token;  // per node: token id ending here, or -1
  std::vector<Edge> edges;
  size_t mask = 0;
  size_t used = 0;

  Trie() : token(1, -1), edges(1024), mask(1023) {}

  static size_t hash(uint64_t k) { return static_cast<size_t>((k * 0x9E3779B97F4A7C15ull) >> 20); }

  int32_t child(int32_t node, uint8_t b) const {
    const uint64_t k = (static_cast<uint64_t>(node) << 8) | b;
    for (size_t i = hash(k) & mask;; i = (i + 1) & mask) {
      if (edges[i].key == k) return edges[i].child;
      if (edges[i].key == kEmpty) return -1;
    }
  }

  void grow() {
    std::vector<Edge> old = std::move(edges);
    edges.assign(old.size() * 2, Edge{});
    mask = edges.size() - 1;
    for (const Edge& e : old) {
      if (e.key == kEmpty) continue;
      size_t i = hash(e.key) & mask;
      while (edges[i].key != kEmpty) i = (i + 1) & mask;
      edges[i] = e;
    }
  }

  void insert(std::string_view s, int32_t id) {
    int32_t node = 0;
    for (char c : s) {
      const auto b = static_cast<uint8_t>(c);
      int32_t next = child(node, b);
      if (next < 0) {
        if ((used + 1) * 2 > edges.size()) grow();
        next = static_cast<int32_t>(token.size());
        token.push_back(-1);
        const uint64_t k = (static_cast<uint64_t>(node) << 8) | b;
        size_t i = hash(k) & mask;
        while (edges[i].key != kEmpty) i = (i + 1) & mask;
        edges[i] = {k, next};
        ++used;
      }
      node = next;
    }
    token[node] = id;
  }
};

UnigramModel::UnigramModel(std::vector<std::pair<std::string, double>> vocab,
                           std::optional<int32_t> unk_id, bool byte_fallback)
    : unk_id_(unk_id), byte_fallback_(byte_fallback) {
  if (static_cast<int64_t>(vocab.size()) >= kMaxTokenId) {
    throw Error("tokenizer: Unigram vocab is too large");
  }
  if (unk_id_ && (*unk_id_ < 0 || static_cast<size_t>(*unk_id_) >= vocab.size())) {
    throw Error("tokenizer: Unigram unk_id is outside the vocab");
  }
  trie_ = std::make_unique<Trie>();
  double min_score = std::numeric_limits<double>::infinity();
  tokens_.reserve(vocab.size());
  scores_.reserve(vocab.size());
  for (size_t i = 0; i < vocab.size(); ++i) {
    auto& [tok, score] = vocab[i];
    const auto id = static_cast<int32_t>(i);
    vocab_.insert_or_assign(tok, id);
    trie_->insert(tok, id);
    min_score = std::min(min_score, score);
    tokens_.push_back(std::move(tok));
    scores_.push_back(score);
  }
  unk_score_ = min_score - 10.0;
  static const char* kHex = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    const std::string code = std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">";
    const auto it = vocab_.find(code);
    fallback_ids_[b] = it == vocab_.end() ? -1 : it->second;
  }
}

UnigramModel::~UnigramModel() = default;

void UnigramModel::tokenize(std::string_view text, std::vector<int32_t>& out) const {
  if (text.empty()) return;
  struct Best {
    double score = 0;
    int64_t start = -1;  // -1: not reached yet
    int32_t id = 0;
  };
  thread_local std::vector<Best> best;
  best.assign(text.size() + 1, Best{});
  const size_t n = text.size();
  for (size_t start = 0; start < n;) {
    const double base = best[start].score;
    const size_t char_len = utf8::decode(text, start).len;
    bool single = false;
    int32_t node = 0;
    for (size_t i = start; i < n; ++i) {
      node = trie_->child(node, static_cast<uint8_t>(text[i]));
      if (node < 0) break;
      const int32_t id = trie_->token[node];
      if (id < 0) continue;
      const size_t end = i + 1;
      // The id of a token reached by its spelling is the map's (the last duplicate).
      Best& t = best[end];
      const double cand = scores_[id] + base;
      if (t.start < 0 || cand > t.score) t = {cand, static_cast<int64_t>(start), id};
      single = single || end - start == char_len;
    }
    if (!single) {
      Best& t = best[start + char_len];
      const double cand = unk_score_ + base;
      if (t.start < 0 || cand > t.score) {
        if (!unk_id_) throw Error("tokenizer: Unigram needs an unknown token and has none");
        t = {cand, static_cast<int64_t>(start), *unk_id_};
      }
    }
    start += char_len;
  }

  // Backtrack, fusing runs of unknown tokens into one piece.
  thread_local std::vector<std::pair<size_t, size_t>> pieces;  // (begin, end), reversed
  pieces.clear();
  size_t fused_end = 0;
  bool fusing = false;
  for (size_t end = n; end > 0;) {
    const Best& b = best[end];
    const auto start = static_cast<size_t>(b.start);
    if (unk_id_ && b.id == *unk_id_) {
      if (!fusing) fused_end = end;
      fusing = true;
    } else {
      if (fusing) pieces.emplace_back(end, fused_end);
      fusing = false;
      pieces.emplace_back(start, end);
    }
    end = start;
  }
  if (fusing) pieces.emplace_back(0, fused_end);

  for (size_t k = pieces.size(); k-- > 0;) {
    const std::string_view s = text.substr(pieces[k].first, pieces[k].second - pieces[k].first);
    if (const auto it = vocab_.find(s); it != vocab_.end()) {
      out.push_back(it->second);
      continue;
    }
    if (byte_fallback_) {
      bool all = true;
      for (char c : s) all = all && fallback_ids_[static_cast<uint8_t>(c)] >= 0;
      if (all) {
        for (char c : s) out.push_back(fallback_ids_[static_cast<uint8_t>(c)]);
        continue;
      }
    }
    if (!unk_id_) throw Error("tokenizer: Unigram needs an unknown token and has none");
    out.push_back(*unk_id_);
  }
}

std::optional<int32_t> UnigramModel::token_to_id(std::string_view token) const {
  const auto it = vocab_.find(token);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

const std::string* UnigramModel::id_to_token(int32_t id) const {
  if (id < 0 || id >= id_limit()) return nullptr;
  return &tokens_[id];
}

}  // namespace heron::tokenizer
