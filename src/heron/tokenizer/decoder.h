#pragma once
// tokenizer.json "decoder" step as a chain of streaming stages.
//
// An HF decoder maps the list of token strings to a list of strings that are then
// joined; position matters (Metaspace drops the first token's leading space, WordPiece
// glues "##" pieces, ByteFallback decodes whole runs of "<0xAB>" tokens, Fuse and
// ByteLevel join everything into one string). Here each stage does the same to a stream
// of pieces: a token may arrive in several pieces (the first marked `starts`, the last
// `ends`), so a stage that joins tokens can pass text on before the sequence is over.
// Fed every token and then finished, a chain yields exactly HF's decode; fed one token at
// a time it emits text as soon as no later token can change it.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace heron::tokenizer {

class DecodeSink {
 public:
  virtual ~DecodeSink() = default;
  // Every token is a run of pieces from one with `starts` to one with `ends` (a piece may
  // have both; text may be empty).
  virtual void push(std::string_view text, bool starts, bool ends) = 0;
  // End of the sequence, after the last token ended.
  virtual void finish() = 0;
};

// One immutable decoder step (shared by every stream); makes per-stream stages.
class DecoderStep {
 public:
  virtual ~DecoderStep() = default;
  virtual std::unique_ptr<DecodeSink> stage(DecodeSink& next) const = 0;
  // What a single token contributes in the middle of a sequence (see token_text).
  virtual void middle(std::string& token) const = 0;
};

class DecodeStream {
 public:
  virtual ~DecodeStream() = default;
  virtual void push(std::string_view token) = 0;
  virtual void finish() = 0;
  // Text produced since the last take().
  virtual std::string take() = 0;
};

class Decoder {
 public:
  // From a tokenizer.json "decoder" value; null joins tokens with spaces, as HF does.
  // Throws heron::Error for malformed or unsupported decoders.
  static Decoder from_json(const nlohmann::json& spec);
  static Decoder byte_level();
  // Replace("▁", " "), ByteFallback, Fuse, and Strip(" ", 1, 0) when the encoder adds a
  // leading space.
  static Decoder sentencepiece(bool strip_leading_space);

  std::unique_ptr<DecodeStream> start() const;
  std::string decode(const std::vector<std::string_view>& tokens) const;
  // A token's text in the middle of a sequence: "Ġhi" -> " hi", "▁hi" -> " hi",
  // "<0xE2>" -> "\xE2", "##hi" -> "hi". May be part of a code point.
  std::string token_text(std::string_view token) const;

 private:
  std::vector<std::shared_ptr<const DecoderStep>> steps_;  // empty: join with spaces
};

// Steps: decoder_bytes.cpp (ByteLevel, ByteFallback, Fuse), decoder_text.cpp (Replace,
// Strip, Metaspace), decoder_words.cpp (WordPiece, BPEDecoder, the no-decoder space join).
std::shared_ptr<const DecoderStep> make_byte_level_decoder();
// pattern: a literal, or an Oniguruma regex when `regex` is true.
std::shared_ptr<const DecoderStep> make_replace_decoder(std::string pattern, bool regex,
                                                        std::string content);
std::shared_ptr<const DecoderStep> make_byte_fallback_decoder();
std::shared_ptr<const DecoderStep> make_fuse_decoder();
std::shared_ptr<const DecoderStep> make_strip_decoder(char32_t content, size_t start, size_t stop);
std::shared_ptr<const DecoderStep> make_metaspace_decoder(char32_t replacement, bool strip_first);
std::shared_ptr<const DecoderStep> make_wordpiece_decoder(std::string prefix, bool cleanup);
std::shared_ptr<const DecoderStep> make_bpe_decoder(std::string suffix);
std::shared_ptr<const DecoderStep> make_join_with_spaces_decoder();

}  // namespace heron::tokenizer
