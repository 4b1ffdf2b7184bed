#include "heron/tokenizer/bpe_model.h"

#include <algorithm>
#include <mutex>
#include <shared_mutex>

#include "heron/core/error.h"
#include "heron/tokenizer/byte_level.h"
#include "heron/tokenizer/utf8.h"

namespace heron::tokenizer {
namespace {

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

// Builds the initial symbol list; unknown symbols follow HF (pending unk, fused or not).
class BpeModel::SymbolBuilder {
 public:
  SymbolBuilder(std::vector<Symbol>& symbols, bool fuse_unk)
      : symbols_(symbols), fuse_unk_(fuse_unk) {}

  void add(int32_t id, uint32_t len) {
    const auto n = static_cast<int32_t>(symbols_.size());
    if (n > 0) symbols_.back().next = n;
    symbols_.push_back({id, n - 1, -1, len});
  }
  // A known symbol flushes a pending unk first.
  void known(int32_t id, uint32_t len) {
    flush_unk();
    add(id, len);
  }
  void unknown(int32_t unk_id, uint32_t len) {
    if (unk_len_ > 0 && fuse_unk_) {
      unk_len_ += len;
      return;
    }
    flush_unk();
    unk_id_ = unk_id;
    unk_len_ = len;
  }
  void flush_unk() {
    if (unk_len_ > 0) add(unk_id_, unk_len_);
    unk_len_ = 0;
  }

 private:
  std::vector<Symbol>& symbols_;
  bool fuse_unk_;
  int32_t unk_id_ = -1;
  uint32_t unk_len_ = 0;
};

BpeModel::BpeModel(Vocab vocab, const std::vector<std::pair<std::string, std::string>>& merges,
                   BpeOptions options)
    : vocab_(std::move(vocab)), options_(std::move(options)) {
  id_to_token_ = invert_vocab(vocab_);
  has_token_.assign(id_to_token_.size(), 0);
  for (const auto& [tok, id] : vocab_) has_token_[id] = 1;

  merges_ = std::make_unique<MergeTable>(merges.size());
  const size_t prefix_len = options_.continuing_subword_prefix.size();
  std::string joined;
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    // Not a structured binding: clang 14 (the fuzz build) cannot capture those in a lambda.
    const std::string& a = merges[rank].first;
    const std::string& b = merges[rank].second;
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
    // HF drops the prefix's length from the right part, whatever it starts with.
    if (b.size() < prefix_len) {
      throw Error("tokenizer: merge '" + a + " " + b + "' is shorter than the subword prefix");
    }
    joined.assign(a).append(b, prefix_len);
    merges_->put(left, right, static_cast<int32_t>(rank), lookup(joined));
  }

  std::fill(std::begin(byte_ids_), std::end(byte_ids_), -1);
  std::fill(std::begin(fallback_ids_), std::end(fallback_ids_), -1);
  all_fallback_ = true;
  static const char* kHex = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    if (options_.byte_level) {
      std::string spelled;
      utf8::append(spelled, byte_level::byte_to_char(static_cast<uint8_t>(b)));
      if (const auto it = vocab_.find(spelled); it != vocab_.end()) byte_ids_[b] = it->second;
    }
    const std::string code = std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">";
    if (const auto it = vocab_.find(code); it != vocab_.end()) {
      fallback_ids_[b] = it->second;
    } else {
      all_fallback_ = false;
    }
  }
  plain_bytes_ = options_.byte_level && prefix_len == 0 && options_.end_of_word_suffix.empty() &&
                 !options_.byte_fallback;
  if (options_.unk_token) {
    const auto it = vocab_.find(*options_.unk_token);
    if (it == vocab_.end()) {
      throw Error("tokenizer: unk_token '" + *options_.unk_token + "' is not in the vocab");
    }
    unk_id_ = it->second;
  }
  if (options_.ignore_merges) {
    for (const auto& [tok, id] : vocab_) max_token_len_ = std::max(max_token_len_, tok.size());
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
  if (plain_bytes_ && piece.size() == 1 && byte_ids_[static_cast<uint8_t>(piece[0])] >= 0) {
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
  std::optional<int32_t> whole;
  // A spelled token is never shorter than its bytes: longer pieces cannot be one.
  if (options_.ignore_merges && piece.size() <= max_token_len_) {
    thread_local std::string spelled;
    if (options_.byte_level) spelled = byte_level::spell(piece);
    whole = token_to_id(options_.byte_level ? std::string_view(spelled) : piece);
  }
  if (whole) {
    out.push_back(*whole);
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

void BpeModel::char_symbols(std::string_view text, SymbolBuilder& b) const {
  const std::string& prefix = options_.continuing_subword_prefix;
  const std::string& suffix = options_.end_of_word_suffix;
  const bool affixes = !prefix.empty() || !suffix.empty();
  std::string key;
  for (size_t i = 0; i < text.size();) {
    const uint32_t len = utf8::decode(text, i).len;
    std::string_view s = text.substr(i, len);
    if (affixes) {
      key.clear();
      if (i > 0) key += prefix;
      key += s;
      if (i + len == text.size()) key += suffix;
      s = key;
    }
    i += len;
    if (const auto it = vocab_.find(s); it != vocab_.end()) {
      b.known(it->second, len);
      continue;
    }
    if (options_.byte_fallback) {
      bool all = true;
      if (!all_fallback_) {
        for (char c : s) all = all && fallback_ids_[static_cast<uint8_t>(c)] >= 0;
      }
      if (all) {
        // HF adds byte tokens without flushing a pending unk first.
        for (char c : s) b.add(fallback_ids_[static_cast<uint8_t>(c)], 1);
        continue;
      }
    }
    if (unk_id_) b.unknown(*unk_id_, len);  // else dropped, as HF does without an unk token
  }
  b.flush_unk();
}

void BpeModel::merge(std::string_view piece, std::vector<int32_t>& out) const {
  thread_local std::vector<Symbol> symbols;
  thread_local std::vector<QueueEntry> queue;
  symbols.clear();
  queue.clear();

  SymbolBuilder builder(symbols, options_.fuse_unk);
  if (plain_bytes_) {
    for (char c : piece) {
      const int32_t id = byte_ids_[static_cast<uint8_t>(c)];
      if (id >= 0) {
        builder.known(id, 1);
      } else if (unk_id_) {
        builder.unknown(*unk_id_, 1);
      }
    }
    builder.flush_unk();
  } else if (options_.byte_level) {
    char_symbols(byte_level::spell(piece), builder);
  } else {
    char_symbols(piece, builder);
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
