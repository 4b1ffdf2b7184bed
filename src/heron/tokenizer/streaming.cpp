#include "heron/tokenizer/tokenizer.h"
#include "heron/tokenizer/utf8.h"

namespace heron::tokenizer {

std::string StreamingDetokenizer::feed(int32_t id) {
  if (skip_special_ && tok_.is_special(id)) return {};
  pending_ += tok_.token_bytes(id);
  const size_t ready = utf8::complete_prefix(pending_);
  if (ready == 0) return {};
  std::string out = utf8::sanitize(std::string_view(pending_).substr(0, ready));
  pending_.erase(0, ready);
  return out;
}

std::string StreamingDetokenizer::flush() {
  std::string out = utf8::sanitize(pending_);
  pending_.clear();
  return out;
}

}  // namespace heron::tokenizer
