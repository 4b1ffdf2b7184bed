#include "heron/tokenizer/bpe_model.h"

#include <algorithm>
#include <mutex>
#include <shared_mutex>

#include "heron/core/error.h"
#include "heron/tokenizer/byte_level.h"
#include "heron/tokenizer/utf8.h"

namespace heron::tokenizer {
namespace {

// Ids beyond this are treated as a malformed file rather than a reason to allocate.
constexpr int64_t kMaxId = int64_t{1} << 24;
// Longer pieces (long whitespace runs, base64 blobs) rarely repeat; don't cache them.
constexpr size_t kMaxCachedPiece = 256;

struct Symbol {
  int32_t id;
  int32_t prev;
  int32_t next;
  uint32_t len;  // 0 once merged into its left neighbour
};

struct QueueEntry {
  int32_t rank;
  int32_t pos;
  int32_t new_id;
};

// Min-heap on (rank, pos): the lowest-ranked merge, leftmost first, as HF orders it.
struct QueueLater {
  bool operator()(const QueueEntry& a, const QueueEntry& b) const {
    return a.rank != b.rank ? a.rank > b.rank : a.pos > b.pos;
  }
};

}  // namespace

// Open-addressing map (left id, right id) -> (rank, merged id): the hot lookup of BPE.
struct BpeModel::MergeTable {
  struct Slot {
    uint64_t key = kEmpty;
    int32_t rank = 0;
    int32_t new_id = 0;
  };
  static constexpr uint64_t kEmpty = ~uint64_t{0};

  explicit MergeTable(size_t n) {
    size_t cap = 16;
    int bits = 4;
    while (cap < n * 2) {
      cap <<= 1;
      ++bits;
    }
    slots.resize(cap);
    shift = 64 - bits;
  }

  static uint64_t key(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }

  size_t home(uint64_t k) const {
    return static_cast<size_t>((k * 0x9E3779B97F4A7C15ull) >> shift);
  }

  // A later duplicate overwrites an earlier one, as HF's HashMap collect does.
  void put(int32_t a, int32_t b, int32_t rank, int32_t new_id) {
    const uint64_t k = key(a, b);
    const size_t mask = slots.size() - 1;
    for (size_t i = home(k);; i = (i + 1) & mask) {
      if (slots[i].key == kEmpty || slots[i].key == k) {
        slots[i] = {k, rank, new_id};
        return;
      }
    }
  }

  const Slot* find(int32_t a, int32_t b) const {
    const uint64_t k = key(a, b);
    const size_t mask = slots.size() - 1;
    for (size_t i = home(k);; i = (i + 1) & mask) {
      if (slots[i].key == k) return &slots[i];
      if (slots[i].key == kEmpty) return nullptr;
    }
  }

  std::vector<Slot> slots;
  int shift = 60;
};

struct BpeModel::Cache {
  std::shared_mutex mu;
  std::unordered_map<std::string, std::vector<int32_t>, StringHash, std::equal_to<>> map;
};

BpeModel::BpeModel(Vocab vocab, const std::vector<std::pair<std::string, std::string>>& merges,
                   BpeOptions options)
    : vocab_(std::move(vocab)), options_(std::move(options)) {
  int64_t max_id = -1;
  for (const auto& [tok, id] : vocab_) {
    if (id < 0 || id >= kMaxId) {
      throw Error("tokenizer: vocab id " + std::to_string(id) + " of token '" + tok +
                  "' is out of range");
    }
    max_id = std::max<int64_t>(max_id, id);
  }
  id_to_token_.resize(static_cast<size_t>(max_id + 1));
  has_token_.assign(id_to_token_.size(), 0);
  for (const auto& [tok, id] : vocab_) {
    id_to_token_[id] = tok;
    has_token_[id] = 1;
  }

  merges_ = std::make_unique<MergeTable>(merges.size());
  std::string joined;
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [a, b] = merges[rank];
    auto lookup = [&](std::string_view tok) {
      const auto it = vocab_.find(tok);
      if (it == vocab_.end()) {
        throw Error("tokenizer: merge '" + a + " " + b + "' names token '" + std::string(tok) +
                    "', which is not in the vocab");
      }
      return it->second;
    };
    const int32_t left = lookup(a);
    const int32_t right = lookup(b);
    joined.assign(a).append(b);
    merges_->put(left, right, static_cast<int32_t>(rank), lookup(joined));
  }

  std::fill(std::begin(byte_ids_), std::end(byte_ids_), -1);
  if (options_.byte_level) {
    for (int b = 0; b < 256; ++b) {
      std::string spelled;
      utf8::append(spelled, byte_level::byte_to_char(static_cast<uint8_t>(b)));
      if (const auto it = vocab_.find(spelled); it != vocab_.end()) byte_ids_[b] = it->second;
    }
  }
  if (options_.unk_token) {
    const auto it = vocab_.find(*options_.unk_token);
    if (it == vocab_.end()) {
      throw Error("tokenizer: unk_token '" + *options_.unk_token + "' is not in the vocab");
    }
    unk_id_ = it->second;
  }
  if (options_.ignore_merges) {
    // Whole-piece lookups happen on every cache miss: keep them allocation-free.
    for (const auto& [tok, id] : vocab_) {
      std::optional<std::string> raw =
          options_.byte_level ? byte_level::unspell(tok) : std::optional<std::string>(tok);
      if (!raw) continue;
      max_token_len_ = std::max(max_token_len_, raw->size());
      raw_vocab_.emplace(std::move(*raw), id);
    }
  }
  if (options_.cache_capacity > 0) cache_ = std::make_unique<Cache>();
}

BpeModel::~BpeModel() = default;

std::optional<int32_t> BpeModel::token_to_id(std::string_view spelled) const {
  const auto it = vocab_.find(spelled);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

const std::string* BpeModel::id_to_token(int32_t id) const {
  if (id < 0 || id >= id_limit() || !has_token_[id]) return nullptr;
  return &id_to_token_[id];
}

void BpeModel::tokenize(std::string_view piece, std::vector<int32_t>& out) const {
  if (piece.empty()) return;
  if (options_.byte_level && piece.size() == 1 && byte_ids_[static_cast<uint8_t>(piece[0])] >= 0) {
    out.push_back(byte_ids_[static_cast<uint8_t>(piece[0])]);
    return;
  }
  const bool cacheable = cache_ && piece.size() <= kMaxCachedPiece;
  if (cacheable) {
    std::shared_lock lock(cache_->mu);
    const auto it = cache_->map.find(piece);
    if (it != cache_->map.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  const size_t start = out.size();
  const auto whole = options_.ignore_merges && piece.size() <= max_token_len_
                         ? raw_vocab_.find(piece)
                         : raw_vocab_.end();
  if (whole != raw_vocab_.end()) {
    out.push_back(whole->second);
  } else {
    merge(piece, out);
  }
  if (cacheable) {
    std::unique_lock lock(cache_->mu);
    // Full: start over rather than track recency; hot pieces come straight back.
    if (cache_->map.size() >= options_.cache_capacity) cache_->map.clear();
    cache_->map.try_emplace(std::string(piece), out.begin() + static_cast<std::ptrdiff_t>(start),
                            out.end());
  }
}

void BpeModel::merge(std::string_view piece, std::vector<int32_t>& out) const {
  thread_local std::vector<Symbol> symbols;
  thread_local std::vector<QueueEntry> queue;
  symbols.clear();
  queue.clear();

  auto add = [&](int32_t id, uint32_t len) {
    const auto n = static_cast<int32_t>(symbols.size());
    if (n > 0) symbols.back().next = n;
    symbols.push_back({id, n - 1, -1, len});
  };
  if (options_.byte_level) {
    for (char c : piece) {
      const int32_t id = byte_ids_[static_cast<uint8_t>(c)];
      if (id >= 0) {
        add(id, 1);
      } else if (unk_id_) {
        add(*unk_id_, 1);
      }  // else dropped, as HF does without an unk token
    }
  } else {
    for (size_t i = 0; i < piece.size();) {
      const uint32_t len = utf8::decode(piece, i).len;
      const auto it = vocab_.find(piece.substr(i, len));
      if (it != vocab_.end()) {
        add(it->second, len);
      } else if (unk_id_) {
        add(*unk_id_, len);
      }
      i += len;
    }
  }

  for (size_t i = 0; i + 1 < symbols.size(); ++i) {
    if (const auto* m = merges_->find(symbols[i].id, symbols[i + 1].id)) {
      queue.push_back({m->rank, static_cast<int32_t>(i), m->new_id});
    }
  }
  std::make_heap(queue.begin(), queue.end(), QueueLater{});

  while (!queue.empty()) {
    std::pop_heap(queue.begin(), queue.end(), QueueLater{});
    const QueueEntry top = queue.back();
    queue.pop_back();
    Symbol& left = symbols[top.pos];
    if (left.len == 0 || left.next < 0) continue;
    const int32_t right_pos = left.next;
    const Symbol right = symbols[right_pos];
    // Stale entry: the pair at this position no longer merges into the same token.
    const auto* current = merges_->find(left.id, right.id);
    if (current == nullptr || current->new_id != top.new_id) continue;

    left.id = top.new_id;
    left.len += right.len;
    left.next = right.next;
    symbols[right_pos].len = 0;
    if (right.next >= 0) symbols[right.next].prev = top.pos;

    if (left.prev >= 0) {
      if (const auto* m = merges_->find(symbols[left.prev].id, left.id)) {
        queue.push_back({m->rank, left.prev, m->new_id});
        std::push_heap(queue.begin(), queue.end(), QueueLater{});
      }
    }
    if (left.next >= 0) {
      if (const auto* m = merges_->find(left.id, symbols[left.next].id)) {
        queue.push_back({m->rank, top.pos, m->new_id});
        std::push_heap(queue.begin(), queue.end(), QueueLater{});
      }
    }
  }
  for (const Symbol& s : symbols)
    if (s.len > 0) out.push_back(s.id);
}

}  // namespace heron::tokenizer
