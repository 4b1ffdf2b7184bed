#include "heron/tokenizer/json_reader.h"

#include "heron/core/error.h"

namespace heron::tokenizer {
namespace {

using json = nlohmann::json;

// nlohmann's SAX interface: a tree builder that diverts model.vocab and model.merges.
class Reader {
 public:
  static constexpr size_t kMaxDepth = 256;

  explicit Reader(StreamedModelParts& parts) : parts_(parts) {}

  json root;

  bool null() { return value(json()); }
  bool boolean(bool v) { return value(json(v)); }
  bool number_integer(json::number_integer_t v) {
    if (mode_ == Mode::Vocab) return vocab_id(v);
    return value(json(v));
  }
  bool number_unsigned(json::number_unsigned_t v) {
    if (mode_ == Mode::Vocab) {
      return vocab_id(v > static_cast<uint64_t>(INT64_MAX) ? -1 : static_cast<int64_t>(v));
    }
    return value(json(v));
  }
  bool number_float(json::number_float_t v, const std::string&) { return value(json(v)); }
  bool string(std::string& s) {
    if (mode_ == Mode::Merges) {
      const size_t space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos) {
        throw Error("tokenizer.json: merge '" + s + "' is not of the form 'left right'");
      }
      parts_.merges->emplace_back(s.substr(0, space), s.substr(space + 1));
      return true;
    }
    if (mode_ == Mode::MergePair) {
      pair_.push_back(std::move(s));
      return true;
    }
    return value(json(std::move(s)));
  }
  bool binary(json::binary_t&) { return value(json()); }

  bool start_object(size_t) {
    if (mode_ != Mode::Tree) unexpected();
    if (at_model_key("vocab")) {
      value(json());
      mode_ = Mode::Vocab;
      parts_.vocab.emplace();
      return true;
    }
    return open(json::object());
  }
  bool key(std::string& k) {
    if (mode_ == Mode::Vocab) {
      key_ = std::move(k);
      return true;
    }
    keys_.back() = std::move(k);
    return true;
  }
  bool end_object() {
    if (mode_ == Mode::Vocab) {
      mode_ = Mode::Tree;
      return true;
    }
    return close();
  }
  bool start_array(size_t) {
    if (mode_ == Mode::Merges) {
      mode_ = Mode::MergePair;
      pair_.clear();
      return true;
    }
    if (mode_ != Mode::Tree) unexpected();
    if (at_model_key("merges")) {
      value(json());
      mode_ = Mode::Merges;
      parts_.merges.emplace();
      return true;
    }
    return open(json::array());
  }
  bool end_array() {
    if (mode_ == Mode::MergePair) {
      if (pair_.size() != 2) unexpected();
      parts_.merges->emplace_back(std::move(pair_[0]), std::move(pair_[1]));
      mode_ = Mode::Merges;
      return true;
    }
    if (mode_ == Mode::Merges) {
      mode_ = Mode::Tree;
      return true;
    }
    return close();
  }
  bool parse_error(size_t position, const std::string&, const nlohmann::detail::exception& e) {
    throw Error("tokenizer.json is not valid JSON (at byte " + std::to_string(position) +
                "): " + e.what());
  }

 private:
  enum class Mode { Tree, Vocab, Merges, MergePair };

  // Entering the value of `key` in the top-level "model" object.
  bool at_model_key(const char* key) const {
    return stack_.size() == 2 && keys_[0] == "model" && keys_[1] == key && stack_[1]->is_object();
  }

  bool vocab_id(int64_t v) {
    if (v < 0 || v >= kMaxTokenId) {
      throw Error("tokenizer.json: vocab id of '" + key_ + "' is out of range");
    }
    parts_.vocab->emplace(std::move(key_), static_cast<int32_t>(v));
    return true;
  }

  [[noreturn]] void unexpected() {
    if (mode_ == Mode::Vocab) {
      throw Error("tokenizer.json: vocab id of '" + key_ + "' must be an integer");
    }
    throw Error("tokenizer.json: a merge must be \"left right\" or [\"left\", \"right\"]");
  }

  // Places a scalar (or a diverted container's placeholder) in the current container.
  bool value(json v) {
    if (mode_ != Mode::Tree) unexpected();
    if (stack_.empty()) {
      root = std::move(v);
    } else if (stack_.back()->is_array()) {
      stack_.back()->push_back(std::move(v));
    } else {
      (*stack_.back())[keys_.back()] = std::move(v);
    }
    return true;
  }

  bool open(json container) {
    // nlohmann parses iteratively, but copying or comparing a tree recurses once per
    // level: 100,000 nested arrays overflowed the stack of an ASan build (found by the
    // sanitized unit tests). Real tokenizer files nest fewer than 10 levels.
    if (stack_.size() >= kMaxDepth) {
      throw Error("tokenizer.json: nested more than " + std::to_string(kMaxDepth) + " levels deep");
    }
    json* slot;
    if (stack_.empty()) {
      root = std::move(container);
      slot = &root;
    } else if (stack_.back()->is_array()) {
      stack_.back()->push_back(std::move(container));
      slot = &stack_.back()->back();
    } else {
      slot = &((*stack_.back())[keys_.back()] = std::move(container));
    }
    stack_.push_back(slot);
    keys_.emplace_back();
    return true;
  }

  bool close() {
    stack_.pop_back();
    keys_.pop_back();
    return true;
  }

  StreamedModelParts& parts_;
  Mode mode_ = Mode::Tree;
  std::vector<json*> stack_;
  std::vector<std::string> keys_;  // per open container: its latest key
  std::string key_;                // latest vocab key
  std::vector<std::string> pair_;
};

}  // namespace

nlohmann::json read_tokenizer_json(std::string_view text, StreamedModelParts& parts) {
  Reader reader(parts);
  json::sax_parse(text.begin(), text.end(), &reader);
  return std::move(reader.root);
}

}  // namespace heron::tokenizer
