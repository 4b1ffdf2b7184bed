// Decoder steps that join words: WordPiece, BPEDecoder, and the space join HF uses
// without a decoder (see decoder.h).
#include "heron/tokenizer/decoder_stage.h"

namespace heron::tokenizer {
namespace {

using namespace decoder_detail;

// ------------------------------------------------------------------------- WordPiece
// HF: tokens after the first lose their "##" prefix or gain a leading space; then the
// optional cleanup of spaces before punctuation, applied per token.

void wordpiece_cleanup(std::string& s) {
  static constexpr std::pair<std::string_view, std::string_view> kRules[] = {
      {" .", "."},   {" ?", "?"},     {" !", "!"},    {" ,", ","},
      {" ' ", "'"},  {" n't", "n't"}, {" 'm", "'m"},  {" do not", " don't"},
      {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : kRules) replace_all(s, from, to);
}

class WordPieceStage final : public Stage {
 public:
  WordPieceStage(DecodeSink& next, const std::string& prefix, bool cleanup)
      : Stage(next), prefix_(prefix), cleanup_(cleanup) {}
  void push(std::string_view text, bool, bool ends) override {
    token_ += text;
    if (!ends) return;
    if (tokens_++ > 0) {
      if (token_.compare(0, prefix_.size(), prefix_) == 0) {
        token_.erase(0, prefix_.size());
      } else {
        token_.insert(0, 1, ' ');
      }
    }
    if (cleanup_) wordpiece_cleanup(token_);
    emit(token_, true);
    token_.clear();
  }

 private:
  const std::string& prefix_;
  bool cleanup_;
  std::string token_;
  size_t tokens_ = 0;
};

class WordPieceStep final : public DecoderStep {
 public:
  WordPieceStep(std::string prefix, bool cleanup) : prefix_(std::move(prefix)), cleanup_(cleanup) {}
  std::unique_ptr<DecodeSink> stage(DecodeSink& next) const override {
    return std::make_unique<WordPieceStage>(next, prefix_, cleanup_);
  }
  void middle(std::string& token) const override {
    if (token.compare(0, prefix_.size(), prefix_) == 0) {
      token.erase(0, prefix_.size());
    } else {
      token.insert(0, 1, ' ');
    }
    if (cleanup_) wordpiece_cleanup(token);
  }

 private:
  std::string prefix_;
  bool cleanup_;
};

// ------------------------------------------------------------------------ BPEDecoder
// HF: the end-of-word suffix becomes a space, or nothing in the last token; so each
// token waits for the next one (or the end) to know which.

class BpeDecoderStage final : public Stage {
 public:
  BpeDecoderStage(DecodeSink& next, const std::string& suffix) : Stage(next), suffix_(suffix) {}
  void push(std::string_view text, bool starts, bool ends) override {
    if (starts) release(" ");
    token_ += text;
    held_ = held_ || ends;
  }
  void finish() override {
    release("");
    Stage::finish();
  }

 private:
  void release(std::string_view with) {
    if (!held_) return;
    replace_all(token_, suffix_, with);
    emit(token_, true);
    token_.clear();
    held_ = false;
  }

  const std::string& suffix_;
  std::string token_;
  bool held_ = false;
};

class BpeDecoderStep final : public DecoderStep {
 public:
  explicit BpeDecoderStep(std::string suffix) : suffix_(std::move(suffix)) {}
  std::unique_ptr<DecodeSink> stage(DecodeSink& next) const override {
    return std::make_unique<BpeDecoderStage>(next, suffix_);
  }
  void middle(std::string& token) const override { replace_all(token, suffix_, " "); }

 private:
  std::string suffix_;
};

// ------------------------------------------------------------------ no decoder at all
// HF joins the tokens with spaces.

class JoinStage final : public Stage {
 public:
  using Stage::Stage;
  void push(std::string_view text, bool starts, bool) override {
    if (starts && tokens_++ > 0) emit(" ", false);
    emit(text, false);
  }
  void finish() override {
    emit("", true);
    Stage::finish();
  }

 private:
  size_t tokens_ = 0;
};

class JoinStep final : public DecoderStep {
 public:
  std::unique_ptr<DecodeSink> stage(DecodeSink& next) const override {
    return std::make_unique<JoinStage>(next);
  }
  void middle(std::string& token) const override { token.insert(0, 1, ' '); }
};

}  // namespace

std::shared_ptr<const DecoderStep> make_wordpiece_decoder(std::string prefix, bool cleanup) {
  return std::make_shared<WordPieceStep>(std::move(prefix), cleanup);
}

std::shared_ptr<const DecoderStep> make_bpe_decoder(std::string suffix) {
  return std::make_shared<BpeDecoderStep>(std::move(suffix));
}

std::shared_ptr<const DecoderStep> make_join_with_spaces_decoder() {
  return std::make_shared<JoinStep>();
}

}  // namespace heron::tokenizer
