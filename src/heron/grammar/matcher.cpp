#include "heron/grammar/matcher.h"

#include <algorithm>
#include <mutex>
#include <unordered_map>

namespace heron::grammar {

namespace {

constexpr size_t kMaskCacheBytes = size_t{64} << 20;
constexpr size_t kMaxStacks = 4096;

struct StateHash {
  size_t operator()(const std::vector<uint32_t>& v) const {
    uint64_t h = 1469598103934665603ull;
    for (uint32_t x : v) h = (h ^ x) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

}  // namespace

class MatcherEngine {
 public:
  MatcherEngine(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const Vocabulary> vocab)
      : grammar_(std::move(grammar)), vocab_(std::move(vocab)), el_(grammar_->elements()) {
    nodes_.push_back({0, 0});  // id 0: the empty stack
    clear_sets();
  }

  std::vector<uint32_t> initial() {
    std::lock_guard lock(mu_);
    std::vector<uint32_t> out;
    for (uint32_t a : grammar_->alternatives(grammar_->root())) expand(push(0, a), out);
    normalize(out);
    return out;
  }

  // Advances `state` by `bytes`; false (state untouched) when a byte is not allowed.
  bool advance(std::vector<uint32_t>& state, std::string_view bytes) {
    std::lock_guard lock(mu_);
    std::vector<uint32_t> cur = state, next;
    for (char c : bytes) {
      step(cur, static_cast<uint8_t>(c), next);
      if (next.empty()) return false;
      cur.swap(next);
    }
    state = std::move(cur);
    return true;
  }

  std::shared_ptr<const TokenMask> mask(const std::vector<uint32_t>& state) {
    std::lock_guard lock(mu_);
    if (auto it = masks_.find(state); it != masks_.end()) return it->second;
    auto m = std::make_shared<TokenMask>();
    m->allowed.assign(vocab_->size(), 0);
    const auto& trie = vocab_->trie();
    const auto& tokens = vocab_->trie_tokens();
    if (sets_.size() > kMaxSets) clear_sets();
    levels_.resize(vocab_->max_depth() + 1);
    levels_[0] = set_id(state);
    for (size_t i = 0; i < trie.size();) {
      const auto& node = trie[i];
      const uint32_t parent = levels_[node.depth - 1];
      if (node.plain && loops(parent)) {
        for (uint32_t t = node.tokens_begin; t < node.subtree_end; ++t) m->allowed[tokens[t]] = 1;
        i = node.skip;
        continue;
      }
      const uint32_t here = levels_[node.depth] = next(parent, node.byte);
      if (here == kEmptySet) {
        i = node.skip;
        continue;
      }
      for (uint32_t t = node.tokens_begin; t < node.tokens_end; ++t) m->allowed[tokens[t]] = 1;
      ++i;
    }
    if (!state.empty() && state.front() == 0)
      for (int32_t id : vocab_->end_ids()) m->allowed[id] = 1;
    if ((masks_.size() + 1) * m->allowed.size() > kMaskCacheBytes) masks_.clear();
    masks_.emplace(state, m);
    return m;
  }

  const Vocabulary& vocab() const { return *vocab_; }

 private:
  struct Node {
    uint32_t pos;     // the element this stack's top is at
    uint32_t parent;  // the stack below it
  };

  uint32_t push(uint32_t parent, uint32_t pos) {
    const uint64_t key = (uint64_t{parent} << 32) | pos;
    auto [it, fresh] = intern_.try_emplace(key, static_cast<uint32_t>(nodes_.size()));
    if (fresh) nodes_.push_back({pos, parent});
    return it->second;
  }

  static void normalize(std::vector<uint32_t>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }

  // Every stack `s` can become without consuming a byte whose top is a byte range (or
  // the empty stack: the input so far is complete). Left recursion is rejected when the
  // grammar is built, so this ends.
  void expand(uint32_t s, std::vector<uint32_t>& out) {
    std::vector<uint32_t> work{s};
    while (!work.empty()) {
      uint32_t cur = work.back();
      work.pop_back();
      while (true) {
        if (cur == 0) {
          out.push_back(0);
          break;
        }
        const uint32_t pos = nodes_[cur].pos;
        const Element& e = el_[pos];
        if (e.kind == Element::Kind::Bytes) {
          out.push_back(cur);
          break;
        }
        const uint32_t parent = nodes_[cur].parent;
        if (e.kind == Element::Kind::End) {
          cur = parent;
          continue;
        }
        // A reference in tail position returns straight to the parent: right recursion
        // (repetition) keeps the stack flat.
        const uint32_t base =
            el_[pos + 1].kind == Element::Kind::End ? parent : push(parent, pos + 1);
        const auto& alts = grammar_->alternatives(e.rule);
        if (alts.empty()) break;
        for (size_t k = 1; k < alts.size(); ++k) work.push_back(push(base, alts[k]));
        cur = push(base, alts[0]);
      }
    }
  }

  // The stacks after the byte range on top of stack `id` consumed a byte.
  const std::vector<uint32_t>& successors(uint32_t id) {
    if (id >= done_.size()) {
      done_.resize(nodes_.size() * 2, 0);
      succ_.resize(done_.size());
    }
    if (!done_[id]) {
      std::vector<uint32_t> out;
      const Node n = nodes_[id];
      expand(el_[n.pos + 1].kind == Element::Kind::End ? n.parent : push(n.parent, n.pos + 1), out);
      normalize(out);
      succ_[id] = std::move(out);
      done_[id] = 1;
    }
    return succ_[id];
  }

  void step(const std::vector<uint32_t>& in, uint8_t byte, std::vector<uint32_t>& out) {
    out.clear();
    for (uint32_t id : in) {
      if (id == 0) continue;
      const Element& e = el_[nodes_[id].pos];
      if (byte < e.lo || byte > e.hi) continue;
      const auto& next = successors(id);
      out.insert(out.end(), next.begin(), next.end());
    }
    if (out.size() > 1) normalize(out);
    // A pathologically ambiguous grammar (nested counted repetition in a pattern, say)
    // could make the set grow without bound: past the cap the byte counts as not allowed,
    // so output stays valid and each step stays bounded.
    if (out.size() > kMaxStacks) out.clear();
  }

  std::mutex mu_;
  std::shared_ptr<const Grammar> grammar_;
  std::shared_ptr<const Vocabulary> vocab_;
  const std::vector<Element>& el_;
  std::vector<Node> nodes_;
  std::unordered_map<uint64_t, uint32_t> intern_;
  std::vector<std::vector<uint32_t>> succ_;
  std::vector<uint8_t> done_;
  // Sets of stacks seen while walking the trie, numbered, with their transitions by byte
  // filled in as met (a DFA built lazily): most trie nodes then cost one array read.
  static constexpr uint32_t kEmptySet = 0;
  static constexpr size_t kMaxSets = 16384;  // 1 KiB of transitions each

  void clear_sets() {
    sets_.clear();
    loops_.clear();
    set_index_.clear();
    next_.clear();
    set_id({});
  }

  uint32_t set_id(const std::vector<uint32_t>& set) {
    auto [it, fresh] = set_index_.try_emplace(set, static_cast<uint32_t>(sets_.size()));
    if (fresh) {
      sets_.push_back(set);
      loops_.push_back(-1);
      next_.resize(next_.size() + 256, kUnknown);
    }
    return it->second;
  }

  uint32_t next(uint32_t set, uint8_t byte) {
    if (const uint32_t to = next_[size_t{set} * 256 + byte]; to != kUnknown) return to;
    step(sets_[set], byte, scratch_);
    const uint32_t to = set_id(scratch_);  // may grow next_: index it afresh
    next_[size_t{set} * 256 + byte] = to;
    return to;
  }

  // Whether the set reads any plain text (Vocabulary::TrieNode::plain) and is itself again
  // at every code point boundary, as inside an unbounded string: then a plain subtree is
  // allowed whole, unwalked. Checked by walking the set's DFA along the UTF-8 automaton.
  bool loops(uint32_t set) {
    if (set == kEmptySet) return false;
    if (loops_[set] < 0) {
      std::vector<std::pair<uint32_t, int>> todo{{set, 0}}, seen{{set, 0}};
      bool all = true;
      while (all && !todo.empty()) {
        const auto [from, q] = todo.back();
        todo.pop_back();
        for (unsigned b = 0x20; b < 0x100 && all; ++b) {
          const int to = Vocabulary::plain_next(q, static_cast<uint8_t>(b));
          if (to < 0) continue;
          const uint32_t t = next(from, static_cast<uint8_t>(b));
          if (to == 0) {
            all = t == set;
          } else if (t == kEmptySet) {
            all = false;
          } else if (std::find(seen.begin(), seen.end(), std::pair{t, to}) == seen.end()) {
            seen.emplace_back(t, to);
            todo.emplace_back(t, to);
          }
        }
      }
      loops_[set] = all ? 1 : 0;
    }
    return loops_[set] == 1;
  }

  static constexpr uint32_t kUnknown = UINT32_MAX;
  std::vector<std::vector<uint32_t>> sets_;
  std::vector<int8_t> loops_;  // per set: -1 unknown, 0 or 1
  std::unordered_map<std::vector<uint32_t>, uint32_t, StateHash> set_index_;
  std::vector<uint32_t> next_;
  std::vector<uint32_t> scratch_;
  std::vector<uint32_t> levels_;
  std::unordered_map<std::vector<uint32_t>, std::shared_ptr<const TokenMask>, StateHash> masks_;
};

Matcher::Matcher(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const Vocabulary> vocab)
    : engine_(std::make_shared<MatcherEngine>(std::move(grammar), std::move(vocab))),
      state_(engine_->initial()) {}

std::shared_ptr<const TokenMask> Matcher::allowed() const {
  return engine_->mask(state_);
}

bool Matcher::accept(int32_t id) {
  const Vocabulary& v = engine_->vocab();
  if (id < 0 || id >= v.size()) return false;
  if (v.is_end(id)) return accepting();
  const auto& bytes = v.bytes(id);
  return bytes && !bytes->empty() && engine_->advance(state_, *bytes);
}

bool Matcher::accept_bytes(std::string_view bytes) {
  return engine_->advance(state_, bytes);
}

bool Matcher::accepting() const {
  return !state_.empty() && state_.front() == 0;
}

bool Matcher::complete() const {
  return state_.size() == 1 && state_.front() == 0;
}

}  // namespace heron::grammar
