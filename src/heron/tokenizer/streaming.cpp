#include "heron/tokenizer/decoder.h"
#include "heron/tokenizer/tokenizer.h"

namespace heron::tokenizer {

StreamingDetokenizer::StreamingDetokenizer(const Tokenizer& tok, bool skip_special)
    : tok_(tok), skip_special_(skip_special), stream_(tok.start_decode()) {}

StreamingDetokenizer::~StreamingDetokenizer() = default;

std::string StreamingDetokenizer::feed(int32_t id) {
  if (skip_special_ && tok_.is_special(id)) return {};
  const std::string* token = tok_.id_to_token(id);
  if (token == nullptr) return {};  // decode() skips ids without a token too
  stream_->push(*token);
  return stream_->take();
}

std::string StreamingDetokenizer::flush() {
  stream_->finish();
  std::string out = stream_->take();
  stream_ = tok_.start_decode();
  return out;
}

}  // namespace heron::tokenizer
