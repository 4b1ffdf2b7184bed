#include "heron/runner/output_grammars.h"

#include <nlohmann/json.hpp>

#include "heron/core/error.h"
#include "heron/grammar/json_schema.h"

namespace heron::runner {

OutputGrammars::OutputGrammars(const tokenizer::Tokenizer& tokenizer, std::vector<int32_t> end_ids)
    : tokenizer_(tokenizer), end_ids_(std::move(end_ids)) {}

grammar::Matcher OutputGrammars::matcher_for(const std::string& format) {
  std::lock_guard lock(mu_);
  for (auto it = recent_.begin(); it != recent_.end(); ++it) {
    if (it->first == format) {
      recent_.splice(recent_.begin(), recent_, it);
      return it->second;
    }
  }
  std::shared_ptr<const grammar::Grammar> compiled;
  if (format == "json") {
    compiled = grammar::json_object_grammar();
  } else {
    // Ordered: the schema's properties are written in the order the client gave them.
    const auto schema = nlohmann::ordered_json::parse(format, nullptr, /*allow_exceptions=*/false);
    if (!schema.is_object()) throw Error("format must be \"json\" or a JSON schema object");
    compiled = grammar::compile_json_schema(schema);
  }
  if (!vocabulary_) vocabulary_ = grammar::Vocabulary::from_tokenizer(tokenizer_, end_ids_);
  recent_.emplace_front(format, grammar::Matcher(std::move(compiled), vocabulary_));
  if (recent_.size() > kKept) recent_.pop_back();
  return recent_.front().second;
}

}  // namespace heron::runner
