#pragma once
// The grammars requests constrain their output to (structured outputs), compiled against
// the model's vocabulary. The last few formats are kept, so a client that sends the same
// schema again reuses its compiled grammar and the masks its states have memoized.
// Called from HTTP threads.
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "heron/grammar/matcher.h"
#include "heron/tokenizer/tokenizer.h"

namespace heron::runner {

class OutputGrammars {
 public:
  // end_ids: the tokens that end generation, allowed once the value is complete.
  OutputGrammars(const tokenizer::Tokenizer& tokenizer, std::vector<int32_t> end_ids);
  // format: "json" (any JSON object) or a JSON schema's text. Throws heron::Error for
  // anything else and for a schema that does not compile.
  grammar::Matcher matcher_for(const std::string& format);

 private:
  static constexpr size_t kKept = 16;

  std::mutex mu_;
  const tokenizer::Tokenizer& tokenizer_;
  std::vector<int32_t> end_ids_;
  std::shared_ptr<const grammar::Vocabulary> vocabulary_;       // built on first use
  std::list<std::pair<std::string, grammar::Matcher>> recent_;  // most recent first
};

}  // namespace heron::runner
