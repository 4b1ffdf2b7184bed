#pragma once
// Tokenizer front door: the whole tokenizer.json family (BPE, WordPiece, Unigram with
// their normalizers, pre-tokenizers, post-processors and decoders) and GGUF vocabularies.
//
// Rules every implementation follows:
// - encode() input that is not valid UTF-8 is repaired first: each maximal invalid
//   subpart becomes one U+FFFD (Python's errors="replace", Rust's from_utf8_lossy), so
//   "a\xFFb" encodes exactly like "a\uFFFDb".
// - decode() runs the tokenizer's decoder over the tokens of the ids, as HF `tokenizers`
//   does (ids without a token are skipped); its result is always valid UTF-8.
// - All methods are const and safe to call from several threads at once.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace heron::tokenizer {

class DecodeStream;

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // tokenizer.json (+ tokenizer_config.json beside it when present, for add_bos_token /
  // add_eos_token, bos/eos tokens and chat_template; chat_template.jinja when the config
  // has none). Throws heron::Error on malformed or unsupported input.
  static std::unique_ptr<Tokenizer> from_hf_dir(const std::filesystem::path& dir);
  static std::unique_ptr<Tokenizer> from_json_files(
      const std::filesystem::path& tokenizer_json,
      const std::optional<std::filesystem::path>& tokenizer_config);
  // Same from parsed JSON; `tokenizer_config` may be null.
  static std::unique_ptr<Tokenizer> from_json(const nlohmann::json& tokenizer_json,
                                              const nlohmann::json& tokenizer_config);
  // GGUF metadata (tokenizer.ggml.*), as read by io::read_gguf_header.
  static std::unique_ptr<Tokenizer> from_gguf_metadata(const nlohmann::json& metadata);

  // add_special: add BOS/EOS as the tokenizer's config asks (post-processor; an explicit
  // add_bos_token/add_eos_token in tokenizer_config.json replaces it, as transformers does).
  // parse_special: match special added tokens (e.g. "<|im_start|>") inside text; when
  // false they are tokenized as ordinary text (non-special added tokens still match).
  virtual std::vector<int32_t> encode(std::string_view text, bool add_special = true,
                                      bool parse_special = true) const = 0;
  virtual std::string decode(std::span<const int32_t> ids, bool skip_special = false) const = 0;
  // Raw bytes one token stands for in the middle of a text ("Ġhi" and "▁hi" -> " hi",
  // "<0xE2>" -> "\xE2", "##hi" -> "hi"; possibly part of a code point); empty for ids
  // without a token.
  virtual std::string token_bytes(int32_t id) const = 0;
  // Token as spelled in the vocab ("Ġhello", "▁hello") or an added token's content;
  // nullptr for ids without a token.
  virtual const std::string* id_to_token(int32_t id) const = 0;
  // A fresh incremental decode (see StreamingDetokenizer).
  virtual std::unique_ptr<DecodeStream> start_decode() const = 0;

  // One past the largest token id (model vocab and added tokens). A model's embedding
  // table may be larger; ids in between have no token.
  virtual int32_t vocab_size() const = 0;
  // Token as spelled in the vocab ("Ġhello") or an added token's content ("<|im_end|>").
  virtual std::optional<int32_t> token_to_id(std::string_view token) const = 0;
  virtual bool is_special(int32_t id) const = 0;

  std::optional<int32_t> bos_id() const { return bos_id_; }
  std::optional<int32_t> eos_id() const { return eos_id_; }
  // Chat templates by name, as transformers keeps them: tokenizer_config.json's string
  // (or chat_template.jinja) is "default"; its list form and GGUF's
  // tokenizer.chat_template.<name> keys add others ("tool_use", "rag", ...).
  const std::map<std::string, std::string>& chat_templates() const { return chat_templates_; }
  // The "default" template, or empty.
  const std::string& chat_template() const;

 protected:
  std::optional<int32_t> bos_id_, eos_id_;
  std::map<std::string, std::string> chat_templates_;
};

// Fed one id at a time, returns text as soon as no later id can change it, so that the
// concatenation of every feed() and the final flush() always equals decode() of the same
// ids. What is held back: bytes of a code point split across tokens; a run of "<0xAB>"
// byte-fallback tokens while it is still valid UTF-8 (HF decodes a run as a whole: its
// text if valid, else one U+FFFD per byte token); and whatever the decoder can only settle
// at the end (a WordPiece or BPE-suffix token until the next one, a trailing space a
// Strip decoder removes). flush() ends the sequence and returns the rest (an incomplete
// code point becomes one U+FFFD); feeding after it starts a new sequence.
class StreamingDetokenizer {
 public:
  explicit StreamingDetokenizer(const Tokenizer& tok, bool skip_special = false);
  ~StreamingDetokenizer();
  StreamingDetokenizer(const StreamingDetokenizer&) = delete;
  StreamingDetokenizer& operator=(const StreamingDetokenizer&) = delete;
  std::string feed(int32_t id);
  std::string flush();

 private:
  const Tokenizer& tok_;
  bool skip_special_;
  std::unique_ptr<DecodeStream> stream_;
};

}  // namespace heron::tokenizer
