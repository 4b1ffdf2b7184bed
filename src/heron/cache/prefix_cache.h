#pragma once
// The prefix cache: a radix trie of every conversation a model has seen. Edges are runs
// of token ids; each node holds, for every cache of the model, the Segment of its edge's
// positions. One root-to-node path is live: its state is in the model's caches, and its
// nodes hold no copy. Every other node's segments are inactive snapshots, in memory
// under a byte budget (least recently used evicted first, prompt-end restore points
// last) and, with a disk tier, on disk below it. A request attaches to its longest
// cached prefix (switching the live caches: rewind to the common ancestor, save what
// leaves the live path, load the snapshots down the new one), prefills the rest and
// appends what it computes, so the next turn finds it.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "heron/cache/cache.h"
#include "heron/cache/disk_tier.h"

namespace heron::cache {

struct PrefixCacheOptions {
  size_t memory_budget = 0;        // bytes of inactive snapshots kept in memory
  std::shared_ptr<DiskTier> disk;  // null: no disk tier
};

struct PrefixCacheStats {
  size_t live_bytes = 0;    // the live caches' buffers
  size_t memory_bytes = 0;  // inactive snapshots in memory
  size_t disk_bytes = 0;    // snapshots on disk
  size_t memory_budget = 0;
  size_t disk_budget = 0;
  size_t entries = 0;    // trie nodes (each a run of tokens with its state)
  int live_tokens = 0;   // tokens the live caches hold
  uint64_t lookups = 0;  // attach() calls
  uint64_t hits = 0;     // of which reused at least one token
  uint64_t reused_tokens = 0;
};

class PrefixCache {
 public:
  PrefixCache(Caches live, PrefixCacheOptions options);
  ~PrefixCache();
  PrefixCache(const PrefixCache&) = delete;
  PrefixCache& operator=(const PrefixCache&) = delete;

  // The model's caches, holding the live path.
  Caches& caches() { return live_; }
  int live_length() const;
  // The most positions a write to the live caches may be rolled back by.
  int rollback_limit() const;

  // Brings the live caches to the longest cached prefix of `prompt` no longer than
  // `limit` tokens and returns its length: the caller prefills from there.
  int attach(const std::vector<int>& prompt, int limit);
  // The live caches took in `tokens` after what they held (prefill chunks, decode steps).
  void append(std::span<const int> tokens);
  // Offsets of the live path (0 < offset <= live_length()) that later requests will want
  // to resume from; prompt ends outlive other nodes under eviction.
  void mark_restore_point(int offset, bool prompt_end);
  // After a failure the live caches may hold writes that were never evaluated: forget the
  // live path (what also lives elsewhere stays) and empty the caches.
  void drop_live();
  // With a disk tier: writes every live node up to the deepest restore point that is not
  // on disk yet, so the conversation survives a restart.
  void persist();

  PrefixCacheStats stats() const;
  // Recounts every node's bytes; throws heron::Error when the running totals disagree.
  void check_accounting() const;

 private:
  struct Node;
  void sync();
  Node* split(Node* node, int at);
  bool restorable(Node* x, bool* lost);
  bool load_from_disk(Node* node);
  void save_out(Node* node);
  void evict();
  void erase(Node* node);
  void merge_into_child(Node* node);
  void adopt_disk_entries();
  void write_to_disk(Node* node);
  void free_memory(Node* node);
  std::vector<int> prefix_of(const Node* node) const;
  void for_each(const std::function<void(Node*)>& f) const;
  static void for_each_below(Node* node, const std::function<void(Node*)>& f);

  Caches live_;
  PrefixCacheOptions options_;
  std::unique_ptr<Node> root_;
  Node* live_tail_;           // deepest live node; the caches hold its prefix
  std::vector<int> pending_;  // appended after live_tail_, not yet in the trie
  uint64_t clock_ = 0;        // recency, for eviction
  size_t memory_bytes_ = 0;
  size_t disk_bytes_ = 0;
  uint64_t lookups_ = 0, hits_ = 0, reused_tokens_ = 0;
};

}  // namespace heron::cache
