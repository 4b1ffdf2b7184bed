#pragma once
// The runner's embedding model: loaded and run on one MLX thread, as ModelHost does for
// generative models. HTTP threads tokenize and wait for their inputs' vectors; at most
// `max_queue` requests wait at once.
#include <atomic>
#include <filesystem>
#include <mutex>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "heron/core/worker.h"
#include "heron/model/encoder_loader.h"

namespace heron::runner {

class EncoderHost {
 public:
  EncoderHost(std::filesystem::path path, int max_queue);
  ~EncoderHost();
  void load();  // blocks; throws heron::Error when the model cannot be loaded

  const tokenizer::Tokenizer& tokenizer() const { return *loaded_.tokenizer; }
  int vocab_size() const { return loaded_.encoder->config().vocab_size; }
  // One input's ids (special tokens included) cut to the model's longest input: the
  // first tokens and the closing special token, as Hugging Face's truncation keeps them.
  // Without `truncate` a longer input is a heron::Error.
  std::vector<int32_t> fit(std::vector<int32_t> ids, bool truncate) const;
  // One vector per input, in order; nullopt when the queue is full.
  std::optional<std::vector<std::vector<float>>> embed(
      const std::vector<std::vector<int32_t>>& inputs);
  nlohmann::json status() const;

 private:
  std::vector<std::vector<float>> run(const std::vector<std::vector<int32_t>>& inputs);
  void refresh_status();

  std::filesystem::path path_;
  int max_queue_;
  model::LoadedEncoder loaded_;
  std::atomic<int> queued_{0};
  mutable std::mutex status_mu_;
  nlohmann::json status_;
  Worker worker_;  // last member: destroyed first, so no job outlives the model
};

}  // namespace heron::runner
