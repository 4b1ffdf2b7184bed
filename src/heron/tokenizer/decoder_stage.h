#pragma once
// Shared by the decoder step files: the output side every stage has.
#include <string>
#include <string_view>

#include "heron/tokenizer/decoder.h"
#include "heron/tokenizer/utf8.h"

namespace heron::tokenizer::decoder_detail {

inline constexpr std::string_view kReplacementUtf8 = "\xEF\xBF\xBD";

class Stage : public DecodeSink {
 public:
  explicit Stage(DecodeSink& next) : next_(next) {}
  void finish() override { next_.finish(); }

 protected:
  void emit(std::string_view text, bool ends) {
    if (!open_ && text.empty() && !ends) return;
    next_.push(text, !open_, ends);
    open_ = !ends;
  }
  void emit_token(std::string_view text) {
    if (open_) emit("", true);
    emit(text, true);
  }

  DecodeSink& next_;
  bool open_ = false;
};

inline void replace_all(std::string& s, std::string_view from, std::string_view to) {
  if (from.empty()) return;
  std::string out;
  size_t pos = 0;
  for (size_t m; (m = s.find(from, pos)) != std::string::npos; pos = m + from.size()) {
    out.append(s, pos, m - pos);
    out += to;
  }
  if (pos == 0) return;
  out.append(s, pos);
  s = std::move(out);
}

inline std::string char_string(char32_t c) {
  std::string s;
  utf8::append(s, c);
  return s;
}

}  // namespace heron::tokenizer::decoder_detail
