// Decoder steps that work on bytes: ByteLevel, ByteFallback, Fuse (see decoder.h).
#include <optional>

#include "heron/tokenizer/byte_level.h"
#include "heron/tokenizer/decoder_stage.h"
#include "heron/tokenizer/utf8.h"

namespace heron::tokenizer {
namespace {

using namespace decoder_detail;

// ------------------------------------------------------------------------- ByteLevel
// HF: every token unspelled (or kept as is when it has a character outside the byte
// alphabet), all joined into one string, invalid UTF-8 replaced. Complete code points
// can be passed on as soon as they are complete.

class ByteLevelStage final : public Stage {
 public:
  using Stage::Stage;
  void push(std::string_view text, bool starts, bool ends) override {
    if (starts) token_.clear();
    token_ += text;
    if (!ends) return;
    if (auto raw = byte_level::unspell(token_)) {
      bytes_ += *raw;
    } else {
      bytes_ += token_;
    }
    const size_t ready = utf8::complete_prefix(bytes_);
    if (ready == 0) return;
    emit(utf8::sanitize(std::string_view(bytes_).substr(0, ready)), false);
    bytes_.erase(0, ready);
  }
  void finish() override {
    emit(utf8::sanitize(bytes_), true);
    bytes_.clear();
    Stage::finish();
  }

 private:
  std::string token_, bytes_;
};

class ByteLevelStep final : public DecoderStep {
 public:
  std::unique_ptr<DecodeSink> stage(DecodeSink& next) const override {
    return std::make_unique<ByteLevelStage>(next);
  }
  void middle(std::string& token) const override {
    if (auto raw = byte_level::unspell(token)) token = std::move(*raw);
  }
};

// ---------------------------------------------------------------------- ByteFallback
// HF: a run of "<0xAB>" tokens becomes its bytes when they form valid UTF-8, else one
// U+FFFD per token; other tokens pass. A valid run is held until it ends; a run that
// can no longer be valid is replaced at once.

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Rust's u8::from_str_radix(&token[3..5], 16), which also takes a leading '+'.
std::optional<uint8_t> byte_token(std::string_view t) {
  if (t.size() != 6 || t.substr(0, 3) != "<0x" || t[5] != '>') return std::nullopt;
  if (t[3] == '+') {
    const int d = hex_digit(t[4]);
    if (d < 0) return std::nullopt;
    return static_cast<uint8_t>(d);
  }
  const int hi = hex_digit(t[3]), lo = hex_digit(t[4]);
  if (hi < 0 || lo < 0) return std::nullopt;
  return static_cast<uint8_t>(hi * 16 + lo);
}

// Valid UTF-8 except perhaps a sequence cut short by the end.
bool valid_so_far(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const utf8::Decoded d = utf8::decode(s, i);
    if (!d.valid && !d.truncated) return false;
    i += d.len;
  }
  return true;
}

class ByteFallbackStage final : public Stage {
 public:
  using Stage::Stage;
  void push(std::string_view text, bool starts, bool ends) override {
    if (starts) {
      token_.clear();
      passing_ = false;
    }
    if (passing_) {
      emit(text, ends);
      return;
    }
    token_ += text;
    if (ends) {
      if (const auto b = byte_token(token_)) {
        add_byte(*b);
      } else {
        close_run();
        emit_token(token_);
      }
    } else if (token_.size() > 6 || std::string_view("<0x").substr(0, token_.size()) !=
                                        std::string_view(token_).substr(0, 3)) {
      // Cannot be a byte token any more: pass it on as it comes.
      close_run();
      passing_ = true;
      emit(token_, false);
    }
  }
  void finish() override {
    close_run();
    Stage::finish();
  }

 private:
  void add_byte(uint8_t b) {
    ++run_len_;
    if (run_bad_) {
      emit_token(kReplacementUtf8);
      return;
    }
    run_.push_back(static_cast<char>(b));
    if (valid_so_far(run_)) return;
    run_bad_ = true;
    for (size_t i = 0; i < run_.size(); ++i) emit_token(kReplacementUtf8);
  }
  void close_run() {
    if (run_len_ > 0 && !run_bad_) {
      if (utf8::is_valid(run_)) {
        emit_token(run_);
      } else {
        for (size_t i = 0; i < run_len_; ++i) emit_token(kReplacementUtf8);
      }
    }
    run_.clear();
    run_len_ = 0;
    run_bad_ = false;
  }

  std::string token_, run_;
  size_t run_len_ = 0;
  bool run_bad_ = false;
  bool passing_ = false;
};

class ByteFallbackStep final : public DecoderStep {
 public:
  std::unique_ptr<DecodeSink> stage(DecodeSink& next) const override {
    return std::make_unique<ByteFallbackStage>(next);
  }
  void middle(std::string& token) const override {
    if (const auto b = byte_token(token)) token.assign(1, static_cast<char>(*b));
  }
};

// ------------------------------------------------------------------------------ Fuse

class FuseStage final : public Stage {
 public:
  using Stage::Stage;
  void push(std::string_view text, bool, bool) override { emit(text, false); }
  void finish() override {
    emit("", true);
    Stage::finish();
  }
};

class FuseStep final : public DecoderStep {
 public:
  std::unique_ptr<DecodeSink> stage(DecodeSink& next) const override {
    return std::make_unique<FuseStage>(next);
  }
  void middle(std::string&) const override {}
};

}  // namespace

std::shared_ptr<const DecoderStep> make_byte_level_decoder() {
  return std::make_shared<ByteLevelStep>();
}

std::shared_ptr<const DecoderStep> make_byte_fallback_decoder() {
  return std::make_shared<ByteFallbackStep>();
}

std::shared_ptr<const DecoderStep> make_fuse_decoder() {
  return std::make_shared<FuseStep>();
}

}  // namespace heron::tokenizer
