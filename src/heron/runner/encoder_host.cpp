#include "heron/runner/encoder_host.h"

#include <algorithm>
#include <numeric>

#include <mlx/memory.h>
#include <mlx/ops.h>
#include <mlx/transforms.h>

#include "heron/core/error.h"

namespace heron::runner {

namespace mx = mlx::core;

namespace {

// Inputs of similar length share a forward pass, padded to the longest of them: up to
// this many rows, this many positions in all ...
constexpr size_t kBatchRows = 64;
constexpr size_t kBatchPositions = 16384;
// ... and no row longer than half as long again as the shortest (plus this), so padding
// stays a small share of the work.
constexpr size_t kPaddingSlack = 8;

}  // namespace

EncoderHost::EncoderHost(std::filesystem::path path, int max_queue)
    : path_(std::move(path)), max_queue_(max_queue) {
  status_ = {{"state", "loading"}, {"model", path_.string()}};
}

EncoderHost::~EncoderHost() {
  worker_.submit([this] { loaded_.encoder.reset(); }).wait();  // freed on the MLX thread
}

void EncoderHost::load() {
  worker_
      .submit([this] {
        loaded_ = model::load_encoder(path_);
        refresh_status();
      })
      .get();
}

std::vector<int32_t> EncoderHost::fit(std::vector<int32_t> ids, bool truncate) const {
  const auto limit = static_cast<size_t>(loaded_.max_tokens);
  if (ids.size() <= limit) return ids;
  if (!truncate) {
    throw Error("the input has " + std::to_string(ids.size()) +
                " tokens, over the model's limit of " + std::to_string(limit) +
                " (truncate: true cuts it)");
  }
  const int32_t last = ids.back();
  ids.resize(limit - 1);
  ids.push_back(last);
  return ids;
}

std::optional<std::vector<std::vector<float>>> EncoderHost::embed(
    const std::vector<std::vector<int32_t>>& inputs) {
  if (queued_.fetch_add(1) >= max_queue_) {
    --queued_;
    return std::nullopt;
  }
  auto result = worker_.submit([this, &inputs] {
    struct Release {
      std::atomic<int>& n;
      ~Release() { --n; }
    } release{queued_};
    return run(inputs);
  });
  return result.get();
}

std::vector<std::vector<float>> EncoderHost::run(const std::vector<std::vector<int32_t>>& inputs) {
  std::vector<size_t> order(inputs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return inputs[a].size() < inputs[b].size(); });
  std::vector<std::vector<float>> out(inputs.size());
  for (size_t begin = 0; begin < order.size();) {
    // Sorted by length: the batch's last row is its longest.
    size_t end = begin + 1;
    const size_t shortest = inputs[order[begin]].size();
    while (end < order.size() && end - begin < kBatchRows &&
           (end - begin + 1) * inputs[order[end]].size() <= kBatchPositions &&
           inputs[order[end]].size() <= shortest + shortest / 2 + kPaddingSlack) {
      ++end;
    }
    const int rows = static_cast<int>(end - begin);
    const int width = static_cast<int>(std::max<size_t>(inputs[order[end - 1]].size(), 1));
    std::vector<int32_t> ids(static_cast<size_t>(rows) * width, 0);
    std::vector<int32_t> lengths(static_cast<size_t>(rows));
    for (int r = 0; r < rows; ++r) {
      const auto& in = inputs[order[begin + r]];
      std::copy(in.begin(), in.end(), ids.begin() + static_cast<ptrdiff_t>(r) * width);
      lengths[r] = static_cast<int32_t>(in.size());
    }
    const mx::array ids_array(ids.data(), {rows, width}, mx::int32);
    const mx::array lengths_array(lengths.data(), {rows}, mx::int32);
    // Row-major for the copy below (CLS pooling is a strided slice otherwise).
    auto pooled = mx::contiguous(
        loaded_.pooling(loaded_.encoder->forward(ids_array, lengths_array), lengths_array));
    mx::eval(pooled);
    const int dims = pooled.shape(1);
    const float* data = pooled.data<float>();
    for (int r = 0; r < rows; ++r) {
      out[order[begin + r]].assign(data + static_cast<ptrdiff_t>(r) * dims,
                                   data + static_cast<ptrdiff_t>(r + 1) * dims);
    }
    begin = end;
  }
  refresh_status();
  return out;
}

nlohmann::json EncoderHost::status() const {
  std::lock_guard lock(status_mu_);
  auto s = status_;
  s["queued"] = queued_.load();
  return s;
}

void EncoderHost::refresh_status() {
  const auto& config = loaded_.encoder->config();
  nlohmann::json s = {
      {"state", "ready"},
      {"model", path_.string()},
      {"architecture", config.architecture},
      {"capabilities", {"embedding"}},
      {"embedding_length", config.hidden_size},
      {"context_length", loaded_.max_tokens},
      {"trained_context_length", config.max_position_embeddings},
      {"vocab_size", config.vocab_size},
      {"memory",
       {{"active", mlx::core::get_active_memory()}, {"peak", mlx::core::get_peak_memory()}}},
  };
  std::lock_guard lock(status_mu_);
  status_ = std::move(s);
}

}  // namespace heron::runner
