#pragma once
// Opens a text encoder (an embedding model): a Hugging Face safetensors directory or a
// store model whose config.json names an encoder architecture, with its tokenizer and,
// from the sentence-transformers files beside it, its pooling and longest input.
#include <filesystem>
#include <memory>

#include "heron/model/encoder.h"
#include "heron/model/pooling.h"
#include "heron/tokenizer/tokenizer.h"

namespace heron::model {

struct LoadedEncoder {
  std::string source;
  std::unique_ptr<Encoder> encoder;
  std::unique_ptr<tokenizer::Tokenizer> tokenizer;
  Pooling pooling;
  // Tokens of the longest input, special tokens included: sentence_bert_config.json's
  // max_seq_length, capped at the trained positions.
  int max_tokens = 0;
};

// Whether heron builds `architecture` (a config.json model_type) as an encoder.
bool is_encoder_architecture(const std::string& architecture);
// True when `path` is a directory or store manifest whose config.json names an encoder.
bool is_encoder_model(const std::filesystem::path& path);
LoadedEncoder load_encoder(const std::filesystem::path& path);

}  // namespace heron::model
