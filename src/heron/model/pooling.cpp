#include "heron/model/pooling.h"

#include <mlx/ops.h>
#include <nlohmann/json.hpp>

#include "heron/core/error.h"
#include "heron/model/loader.h"

namespace heron::model {

namespace mx = mlx::core;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

Pooling::Mode mode_of(const json& config, const fs::path& path) {
  if (!config.is_object()) throw Error(path.string() + ": expected a JSON object");
  auto on = [&](const char* key) {
    const auto it = config.find(key);
    return it != config.end() && it->is_boolean() && it->get<bool>();
  };
  if (on("pooling_mode_mean_tokens")) return Pooling::Mode::Mean;
  if (on("pooling_mode_cls_token")) return Pooling::Mode::Cls;
  if (on("pooling_mode_max_tokens")) return Pooling::Mode::Max;
  if (on("pooling_mode_mean_sqrt_len_tokens")) return Pooling::Mode::MeanSqrtLen;
  if (on("pooling_mode_lasttoken")) return Pooling::Mode::LastToken;
  throw Error(path.string() +
              ": no pooling mode heron supports is on (mean, cls, max, "
              "mean_sqrt_len, lasttoken)");
}

// modules.json's Pooling module entry (null when there is none) and whether a Normalize
// module follows.
std::pair<json, bool> pooling_module(const fs::path& modules_path) {
  const json modules = read_json_file(modules_path);
  if (!modules.is_array()) throw Error(modules_path.string() + ": expected a JSON array");
  json pooling = nullptr;
  bool normalize = false;
  for (const auto& m : modules) {
    const std::string type = m.is_object() ? m.value("type", "") : "";
    if (type.ends_with(".Pooling")) pooling = m;
    if (type.ends_with(".Normalize")) normalize = true;
  }
  if (pooling.is_null()) throw Error(modules_path.string() + ": no Pooling module");
  return {pooling, normalize};
}

}  // namespace

std::optional<fs::path> pooling_config_path(const store::ModelFiles& files) {
  const auto* modules_path = files.find("modules.json");
  if (!modules_path) return std::nullopt;
  if (!files.dir) {
    const auto* stored = files.find("pooling_config.json");
    if (!stored) throw Error(files.source + ": no pooling_config.json");
    return *stored;
  }
  const std::string sub = pooling_module(*modules_path).first.value("path", "");
  if (sub.find("..") != std::string::npos || fs::path(sub).is_absolute()) {
    throw Error(modules_path->string() + ": the pooling module's path must stay inside " +
                files.source);
  }
  return *files.dir / sub / "config.json";
}

Pooling read_pooling(const store::ModelFiles& files) {
  const auto config = pooling_config_path(files);
  if (!config) return {Pooling::Mode::Mean, true};
  return {mode_of(read_json_file(*config), *config),
          pooling_module(*files.find("modules.json")).second};
}

mx::array Pooling::operator()(const mx::array& hidden, const mx::array& lengths) const {
  const int L = hidden.shape(1);
  const auto h = mx::astype(hidden, mx::float32);
  const auto positions = mx::expand_dims(mx::arange(L, mx::int32), 0);      // [1, L]
  const auto real = mx::less(positions, mx::expand_dims(lengths, 1));       // [B, L]
  const auto count = mx::astype(mx::expand_dims(lengths, 1), mx::float32);  // [B, 1]
  mx::array pooled(0.0f);
  switch (mode) {
    case Mode::Cls:
      pooled = mx::squeeze(mx::slice(h, {0, 0, 0}, {h.shape(0), 1, h.shape(2)}), 1);
      break;
    case Mode::LastToken: {
      const auto last = mx::reshape(mx::subtract(lengths, mx::array(1)), {-1, 1, 1});
      pooled = mx::squeeze(mx::take_along_axis(h, last, 1), 1);
      break;
    }
    case Mode::Max:
      pooled = mx::max(mx::where(mx::expand_dims(real, 2), h, mx::array(-1e9f)), 1);
      break;
    case Mode::Mean:
    case Mode::MeanSqrtLen: {
      const auto sum =
          mx::sum(mx::multiply(h, mx::astype(mx::expand_dims(real, 2), mx::float32)), 1);
      pooled = mx::divide(sum, mode == Mode::Mean ? count : mx::sqrt(count));
      break;
    }
  }
  if (!normalize) return pooled;
  // As torch.nn.functional.normalize: x / max(|x|, 1e-12).
  const auto norm = mx::sqrt(mx::sum(mx::square(pooled), 1, /*keepdims=*/true));
  return mx::divide(pooled, mx::maximum(norm, mx::array(1e-12f)));
}

}  // namespace heron::model
