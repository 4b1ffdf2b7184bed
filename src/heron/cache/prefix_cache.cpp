#include "heron/cache/prefix_cache.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <optional>

#include <mlx/transforms.h>

#include "heron/core/error.h"

namespace heron::cache {

namespace mx = mlx::core;

struct PrefixCache::Node {
  Node* parent = nullptr;
  std::vector<int> edge;  // the tokens from the parent's end to this node's end
  int end = 0;            // position after the edge (the root: 0)
  std::map<int, std::unique_ptr<Node>> children;  // by their edge's first token
  bool live = false;                              // held by the live caches
  std::vector<SegmentPtr> saved;  // one per cache while an inactive snapshot is in memory
  size_t saved_bytes = 0;
  std::optional<DiskTier::Entry> disk;
  uint64_t used = 0;           // recency
  bool restore_point = false;  // a boundary later requests resume from: never merged away
  bool prompt_end = false;     // a prompt's end: evicted after every other node

  int begin() const { return end - static_cast<int>(edge.size()); }
  bool has_state() const { return live || !saved.empty() || disk.has_value(); }
};

namespace {

size_t common_length(std::span<const int> a, std::span<const int> b) {
  const size_t n = std::min(a.size(), b.size());
  return static_cast<size_t>(
      std::mismatch(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(n), b.begin()).first -
      a.begin());
}

}  // namespace

PrefixCache::PrefixCache(Caches live, PrefixCacheOptions options)
    : live_(std::move(live)), options_(std::move(options)), root_(std::make_unique<Node>()) {
  root_->live = true;
  live_tail_ = root_.get();
  if (options_.disk) adopt_disk_entries();
}

PrefixCache::~PrefixCache() = default;

int PrefixCache::live_length() const {
  return live_tail_->end + static_cast<int>(pending_.size());
}

int PrefixCache::rollback_limit() const {
  int limit = std::numeric_limits<int>::max();
  for (const auto& c : live_) limit = std::min(limit, c->rollback_limit());
  return limit;
}

void PrefixCache::append(std::span<const int> tokens) {
  pending_.insert(pending_.end(), tokens.begin(), tokens.end());
}

void PrefixCache::for_each(const std::function<void(Node*)>& f) const {
  std::vector<Node*> stack{root_.get()};
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    f(n);
    for (auto& [token, child] : n->children) stack.push_back(child.get());
  }
}

std::vector<int> PrefixCache::prefix_of(const Node* node) const {
  std::vector<const Node*> path;
  for (const Node* n = node; n != root_.get(); n = n->parent) path.push_back(n);
  std::vector<int> tokens;
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    tokens.insert(tokens.end(), (*it)->edge.begin(), (*it)->edge.end());
  }
  return tokens;
}

void PrefixCache::free_memory(Node* node) {
  memory_bytes_ -= node->saved_bytes;
  node->saved.clear();
  node->saved_bytes = 0;
}

// Puts the appended tokens into the trie: down existing children as far as they match
// (their snapshots become redundant: the live caches now hold the same state), then as
// a new leaf, or onto the live leaf's own edge.
void PrefixCache::sync() {
  std::span<const int> rest(pending_);
  Node* at = live_tail_;
  while (!rest.empty()) {
    if (auto it = at->children.find(rest[0]); it != at->children.end()) {
      Node* child = it->second.get();
      const size_t m = common_length(child->edge, rest);
      if (m < child->edge.size()) child = split(child, child->begin() + static_cast<int>(m));
      if (child != nullptr) {
        free_memory(child);
        child->live = true;
        child->used = ++clock_;
        at = child;
        rest = rest.subspan(m);
        continue;
      }
    }
    if (at != root_.get() && at->children.empty() && !at->restore_point && !at->disk) {
      at->edge.insert(at->edge.end(), rest.begin(), rest.end());
      at->end += static_cast<int>(rest.size());
    } else {
      auto leaf = std::make_unique<Node>();
      leaf->parent = at;
      leaf->edge.assign(rest.begin(), rest.end());
      leaf->end = at->end + static_cast<int>(rest.size());
      leaf->live = true;
      Node* raw = leaf.get();
      at->children[rest[0]] = std::move(leaf);
      at = raw;
    }
    at->used = ++clock_;
    break;
  }
  live_tail_ = at;
  pending_.clear();
}

// Cuts `node`'s edge at position `at` (begin < at < end) and returns the new upper
// node; nullptr when its snapshot had to come from disk and could not be read.
PrefixCache::Node* PrefixCache::split(Node* node, int at) {
  if (!node->live && node->saved.empty() && !load_from_disk(node)) return nullptr;
  const auto cut = static_cast<std::ptrdiff_t>(at - node->begin());
  auto head = std::make_unique<Node>();
  head->parent = node->parent;
  head->edge.assign(node->edge.begin(), node->edge.begin() + cut);
  head->end = at;
  head->live = node->live;
  head->used = node->used;
  if (!node->saved.empty()) {
    std::vector<SegmentPtr> tails;
    for (auto& s : node->saved) {
      auto [upper, lower] = s->split(at);
      head->saved.push_back(std::move(upper));
      tails.push_back(std::move(lower));
    }
    node->saved = std::move(tails);
    // Splitting keeps every byte: the two halves together are the segment.
    head->saved_bytes = 0;
    for (const auto& s : head->saved) head->saved_bytes += s->nbytes();
    node->saved_bytes = 0;
    for (const auto& s : node->saved) node->saved_bytes += s->nbytes();
  }
  if (node->disk) {  // the file holds the whole edge: no longer a node's
    disk_bytes_ -= node->disk->bytes;
    options_.disk->remove(*node->disk);
    node->disk.reset();
  }
  node->edge.erase(node->edge.begin(), node->edge.begin() + cut);
  Node* parent = node->parent;
  auto self = std::move(parent->children[head->edge[0]]);
  node->parent = head.get();
  head->children[node->edge[0]] = std::move(self);
  Node* raw = head.get();
  parent->children[raw->edge[0]] = std::move(head);
  return raw;
}

// Brings a disk-only node's snapshot into memory; a file that cannot be read is gone,
// and so is the node with everything below it.
bool PrefixCache::load_from_disk(Node* node) {
  std::vector<std::vector<mx::array>> tensors;
  try {
    tensors = options_.disk->read(*node->disk);
    if (tensors.size() != live_.size()) throw Error("the snapshot has the wrong cache count");
    std::vector<SegmentPtr> segments;
    size_t bytes = 0;
    for (size_t i = 0; i < live_.size(); ++i) {
      segments.push_back(live_[i]->segment_from(node->begin(), node->end, std::move(tensors[i])));
      bytes += segments.back()->nbytes();
    }
    node->saved = std::move(segments);
    node->saved_bytes = bytes;
    memory_bytes_ += bytes;
    options_.disk->touch(*node->disk);
    return true;
  } catch (const Error&) {
    erase(node);
    return false;
  }
}

void PrefixCache::save_out(Node* node) {
  node->live = false;
  if (!node->saved.empty()) return;
  size_t bytes = 0;
  for (const auto& c : live_) {
    node->saved.push_back(c->save(node->begin(), node->end));
    bytes += node->saved.back()->nbytes();
  }
  node->saved_bytes = bytes;
  memory_bytes_ += bytes;
}

// Whether every cache can hold its state at x's end: walking up from x, the segments
// (and at the live ancestor, what the live cache keeps) must cover the positions the
// cache needs there. Snapshots only on disk are read to know; false with *lost set when
// one could not be read (it is gone, and may have taken x with it).
bool PrefixCache::restorable(Node* x, bool* lost) {
  Node* ancestor = x;
  while (!ancestor->live) ancestor = ancestor->parent;
  for (Node* n = x; n != ancestor; n = n->parent) {
    if (n->saved.empty() && !load_from_disk(n)) {
      *lost = true;
      return false;
    }
  }
  for (size_t i = 0; i < live_.size(); ++i) {
    const Cache& cache = *live_[i];
    const int need = cache.needs_from(x->end);
    int held = x->end;  // the cache would hold [held, x->end)
    bool gap = false;
    for (Node* n = x; n != ancestor && held > need && !gap; n = n->parent) {
      const Segment& s = *n->saved[i];
      held = s.data_begin();
      gap = s.data_begin() > s.begin();
    }
    if (!gap && held == ancestor->end) held = std::min(held, cache.held_from_at(ancestor->end));
    if (held > need) return false;
  }
  return true;
}

int PrefixCache::attach(const std::vector<int>& prompt, int limit) {
  sync();
  ++lookups_;
  limit = std::clamp(limit, 0, static_cast<int>(prompt.size()));
  const std::span<const int> wanted(prompt.data(), static_cast<size_t>(limit));
  Node* target = nullptr;
  for (bool lost = true; lost;) {
    lost = false;
    // The deepest node on the prompt's path, cutting an edge where the prompt leaves it.
    target = root_.get();
    for (int pos = 0; pos < limit;) {
      auto it = target->children.find(wanted[static_cast<size_t>(pos)]);
      if (it == target->children.end()) break;
      Node* child = it->second.get();
      const auto m =
          static_cast<int>(common_length(child->edge, wanted.subspan(static_cast<size_t>(pos))));
      if (m < static_cast<int>(child->edge.size())) child = split(child, child->begin() + m);
      if (child == nullptr) break;
      target = child;
      pos += m;
    }
    // Then the deepest node above it whose state can be restored (a sliding window's
    // snapshot may hold only what its end needs; a failed read starts the search again).
    while (target != root_.get() && !restorable(target, &lost) && !lost) target = target->parent;
  }
  Node* ancestor = target;
  while (!ancestor->live) ancestor = ancestor->parent;
  // What leaves the live path becomes inactive snapshots; copy them out before the live
  // buffers are rewound and written again.
  std::vector<mx::array> copies;
  for (Node* n = live_tail_; n != ancestor; n = n->parent) {
    save_out(n);
    for (const auto& s : n->saved) {
      for (auto& t : s->tensors()) copies.push_back(t);
    }
  }
  mx::eval(copies);
  for (auto& c : live_) c->rewind(c->offset() - ancestor->end);
  live_tail_ = ancestor;
  std::vector<Node*> down;
  for (Node* n = target; n != ancestor; n = n->parent) down.push_back(n);
  for (auto it = down.rbegin(); it != down.rend(); ++it) {
    Node* n = *it;
    if (n->saved.empty() && !load_from_disk(n)) break;
    for (size_t i = 0; i < live_.size(); ++i) live_[i]->load(*n->saved[i]);
    free_memory(n);
    n->live = true;
    live_tail_ = n;
  }
  for (Node* n = live_tail_; n != nullptr; n = n->parent) n->used = ++clock_;
  evict();
  const int reused = live_tail_->end;
  hits_ += reused > 0 ? 1 : 0;
  reused_tokens_ += static_cast<uint64_t>(reused);
  return reused;
}

void PrefixCache::mark_restore_point(int offset, bool prompt_end) {
  sync();
  if (offset <= 0 || offset > live_tail_->end) return;
  Node* n = live_tail_;
  while (n->begin() >= offset) n = n->parent;
  if (offset < n->end) n = split(n, offset);
  n->restore_point = true;
  n->prompt_end = n->prompt_end || prompt_end;
}

// Removes `node` and everything below it (their snapshots and files).
void PrefixCache::erase(Node* node) {
  for_each_below(node, [this](Node* n) {
    free_memory(n);
    if (n->disk) {
      disk_bytes_ -= n->disk->bytes;
      options_.disk->remove(*n->disk);
    }
  });
  node->parent->children.erase(node->edge[0]);
}

void PrefixCache::for_each_below(Node* node, const std::function<void(Node*)>& f) {
  std::vector<Node*> stack{node};
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    f(n);
    for (auto& [token, child] : n->children) stack.push_back(child.get());
  }
}

// A node left with one child and nothing else to mark it joins that child, when both
// are plain in-memory snapshots: fewer, larger segments to load.
void PrefixCache::merge_into_child(Node* node) {
  if (node == root_.get() || node->children.size() != 1 || node->live || node->restore_point ||
      node->disk || node->saved.empty()) {
    return;
  }
  Node* child = node->children.begin()->second.get();
  if (child->live || child->disk || child->saved.empty()) return;
  std::vector<SegmentPtr> merged;
  size_t bytes = 0;
  for (size_t i = 0; i < node->saved.size(); ++i) {
    merged.push_back(node->saved[i]->merge(*child->saved[i]));
    bytes += merged.back()->nbytes();
  }
  free_memory(node);
  free_memory(child);
  child->saved = std::move(merged);
  child->saved_bytes = bytes;
  memory_bytes_ += bytes;
  child->edge.insert(child->edge.begin(), node->edge.begin(), node->edge.end());
  child->used = std::max(child->used, node->used);
  Node* parent = node->parent;
  auto self = std::move(node->children.begin()->second);
  self->parent = parent;
  parent->children[self->edge[0]] = std::move(self);  // replaces (and frees) `node`
}

void PrefixCache::write_to_disk(Node* node) {
  std::vector<std::vector<mx::array>> tensors;
  for (size_t i = 0; i < live_.size(); ++i) {
    const SegmentPtr copy =
        node->saved.empty() ? live_[i]->save(node->begin(), node->end) : nullptr;
    tensors.push_back((copy ? *copy : *node->saved[i]).tensors());
  }
  auto entry = options_.disk->write(prefix_of(node), node->begin(), tensors);
  disk_bytes_ += entry.bytes;
  node->disk = std::move(entry);
}

void PrefixCache::evict() {
  auto older = [](const Node* a, const Node* b) {
    return std::pair(a->prompt_end, a->used) < std::pair(b->prompt_end, b->used);
  };
  while (memory_bytes_ > options_.memory_budget) {
    Node* victim = nullptr;
    for_each([&](Node* n) {
      const bool movable =
          !n->live && !n->saved.empty() && (n->disk || options_.disk || n->children.empty());
      if (movable && (victim == nullptr || older(n, victim))) victim = n;
    });
    if (victim == nullptr) break;
    if (options_.disk && !victim->disk) {
      try {
        write_to_disk(victim);
      } catch (const Error&) {
        // A full or failing disk: the snapshot is dropped like one without a disk tier.
      }
    }
    if (victim->disk) {
      free_memory(victim);
    } else {
      Node* parent = victim->parent;
      erase(victim);
      merge_into_child(parent);
    }
  }
  if (!options_.disk) return;
  while (disk_bytes_ > options_.disk->budget()) {
    Node* victim = nullptr;
    for_each([&](Node* n) {
      if (n->disk && !n->live && n->children.empty() && (victim == nullptr || older(n, victim))) {
        victim = n;
      }
    });
    if (victim == nullptr) break;
    disk_bytes_ -= victim->disk->bytes;
    options_.disk->remove(*victim->disk);
    victim->disk.reset();
    if (!victim->has_state()) erase(victim);
  }
}

void PrefixCache::persist() {
  if (!options_.disk) return;
  sync();
  Node* deepest = live_tail_;
  while (deepest != root_.get() && !deepest->restore_point) deepest = deepest->parent;
  std::vector<Node*> path;
  for (Node* n = deepest; n != root_.get(); n = n->parent) path.push_back(n);
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    if (!(*it)->disk) write_to_disk(*it);
  }
  evict();
}

void PrefixCache::drop_live() {
  pending_.clear();
  for (Node* n = live_tail_; n != root_.get();) {
    Node* parent = n->parent;
    n->live = false;
    if (!n->has_state()) erase(n);
    n = parent;
  }
  live_tail_ = root_.get();
  for (auto& c : live_) c->rewind(c->offset());
}

// Files of earlier runs join the trie under their prefixes, parents first; one whose
// parent is gone (or that conflicts with a node already there) is deleted.
void PrefixCache::adopt_disk_entries() {
  for (auto& entry : options_.disk->scan()) {
    Node* at = root_.get();
    const std::span<const int> tokens(entry.tokens);
    while (at->end < entry.begin) {
      auto it = at->children.find(tokens[static_cast<size_t>(at->end)]);
      if (it == at->children.end() || it->second->end > entry.begin ||
          common_length(it->second->edge, tokens.subspan(static_cast<size_t>(at->end))) !=
              it->second->edge.size()) {
        at = nullptr;
        break;
      }
      at = it->second.get();
    }
    if (at == nullptr || at->end != entry.begin || entry.end() <= entry.begin ||
        at->children.contains(tokens[static_cast<size_t>(entry.begin)])) {
      options_.disk->remove(entry);
      continue;
    }
    auto node = std::make_unique<Node>();
    node->parent = at;
    node->edge.assign(tokens.begin() + entry.begin, tokens.end());
    node->end = entry.end();
    node->used = static_cast<uint64_t>(std::max<int64_t>(entry.used, 0));
    disk_bytes_ += entry.bytes;
    node->disk = std::move(entry);
    at->children[node->edge[0]] = std::move(node);
  }
  // Recency from earlier runs orders eviction; this run's clock starts after it.
  for_each([this](Node* n) { clock_ = std::max(clock_, n->used); });
}

PrefixCacheStats PrefixCache::stats() const {
  PrefixCacheStats s;
  for (const auto& c : live_) s.live_bytes += c->nbytes();
  s.memory_bytes = memory_bytes_;
  s.disk_bytes = disk_bytes_;
  s.memory_budget = options_.memory_budget;
  s.disk_budget = options_.disk ? options_.disk->budget() : 0;
  for_each([&](Node*) { ++s.entries; });
  --s.entries;  // the root holds nothing
  s.live_tokens = live_length();
  s.lookups = lookups_;
  s.hits = hits_;
  s.reused_tokens = reused_tokens_;
  return s;
}

void PrefixCache::check_accounting() const {
  size_t memory = 0, disk = 0;
  int live_nodes = 0;
  bool ok = true;
  for_each([&](Node* n) {
    size_t bytes = 0;
    for (const auto& s : n->saved) bytes += s->nbytes();
    ok = ok && bytes == n->saved_bytes && (n == root_.get() || n->has_state());
    ok = ok && (n->saved.empty() || n->saved.size() == live_.size());
    memory += bytes;
    if (n->disk) disk += n->disk->bytes;
    if (n->live) ++live_nodes;
    for (const auto& [token, child] : n->children) {
      ok = ok && child->parent == n && !child->edge.empty() && child->edge[0] == token &&
           child->end == n->end + static_cast<int>(child->edge.size());
      ok = ok && (!child->live || n->live);  // the live nodes are one path from the root
    }
  });
  int path = 0;
  for (Node* n = live_tail_; n != nullptr; n = n->parent) path += n->live ? 1 : 0;
  for (const auto& c : live_) ok = ok && c->offset() == live_length();
  if (!ok || memory != memory_bytes_ || disk != disk_bytes_ || path != live_nodes) {
    throw Error("prefix cache accounting is off: memory " + std::to_string(memory) + " counted " +
                std::to_string(memory_bytes_) + ", disk " + std::to_string(disk) + " counted " +
                std::to_string(disk_bytes_) + ", live nodes " + std::to_string(live_nodes) +
                " on the path " + std::to_string(path));
  }
}

}  // namespace heron::cache
