#pragma once
// Reads tokenizer.json text into a JSON tree, except the two big parts of a BPE or
// WordPiece model, model.vocab (an object) and model.merges, which go straight into the
// containers the model is built from: building a tree of a few hundred thousand small
// nodes, and freeing it, would be most of the load time.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "heron/tokenizer/model.h"

namespace heron::tokenizer {

struct StreamedModelParts {
  std::optional<Vocab> vocab;  // model.vocab when it is an object
  std::optional<std::vector<std::pair<std::string, std::string>>> merges;
};

// The tree lacks what went into `parts` (those keys hold null). Throws heron::Error on
// malformed JSON or a malformed vocab / merges entry.
nlohmann::json read_tokenizer_json(std::string_view text, StreamedModelParts& parts);

}  // namespace heron::tokenizer
