#pragma once
// Tokenizer front door. Byte-level BPE (GPT-2 / Llama-3 / Qwen style) for now; the
// full tokenizer.json pipeline grows behind this interface.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace heron::tokenizer {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // tokenizer.json (+ optional tokenizer_config.json beside it for add_bos_token,
  // bos/eos tokens and chat_template). Throws heron::Error on malformed input.
  static std::unique_ptr<Tokenizer> from_hf_dir(const std::filesystem::path& dir);
  static std::unique_ptr<Tokenizer> from_json_files(
      const std::filesystem::path& tokenizer_json,
      const std::optional<std::filesystem::path>& tokenizer_config);
  // GGUF metadata (tokenizer.ggml.*), as read by io::read_gguf_header.
  static std::unique_ptr<Tokenizer> from_gguf_metadata(const nlohmann::json& metadata);

  // add_special: add BOS/EOS as the tokenizer's config asks (post-processor).
  // parse_special: match special added tokens (e.g. "<|im_start|>") inside text.
  virtual std::vector<int32_t> encode(std::string_view text, bool add_special = true,
                                      bool parse_special = true) const = 0;
  virtual std::string decode(std::span<const int32_t> ids, bool skip_special = false) const = 0;
  // Raw bytes one token stands for (byte-level decoded), for streaming.
  virtual std::string token_bytes(int32_t id) const = 0;

  virtual int32_t vocab_size() const = 0;
  virtual std::optional<int32_t> token_to_id(std::string_view token) const = 0;
  virtual bool is_special(int32_t id) const = 0;

  std::optional<int32_t> bos_id() const { return bos_id_; }
  std::optional<int32_t> eos_id() const { return eos_id_; }
  const std::string& chat_template() const { return chat_template_; }

 protected:
  std::optional<int32_t> bos_id_, eos_id_;
  std::string chat_template_;
};

// Fed one id at a time, returns only complete UTF-8 text. flush() returns what is
// left at the end; incomplete sequences become U+FFFD (documented rule).
class StreamingDetokenizer {
 public:
  explicit StreamingDetokenizer(const Tokenizer& tok) : tok_(tok) {}
  std::string feed(int32_t id);
  std::string flush();

 private:
  const Tokenizer& tok_;
  std::string pending_;
};

}  // namespace heron::tokenizer
