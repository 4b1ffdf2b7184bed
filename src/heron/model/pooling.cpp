#include "heron/model/pooling.h"

#include <fstream>

#include <mlx/ops.h>
#include <nlohmann/json.hpp>

#include "heron/core/error.h"

namespace heron::model {

namespace mx = mlx::core;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json read_json(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw Error(path.string() + ": cannot be read");
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw Error(path.string() + ": not valid JSON (" + e.what() + ")");
  }
}

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

}  // namespace

Pooling read_pooling(const fs::path& dir) {
  const fs::path modules_path = dir / "modules.json";
  if (!fs::exists(modules_path)) return {Pooling::Mode::Mean, true};
  const json modules = read_json(modules_path);
  if (!modules.is_array()) throw Error(modules_path.string() + ": expected a JSON array");
  Pooling p;
  bool pooled = false;
  for (const auto& m : modules) {
    const std::string type = m.is_object() ? m.value("type", "") : "";
    if (type.ends_with(".Pooling")) {
      const std::string sub = m.value("path", "");
      if (sub.find("..") != std::string::npos || fs::path(sub).is_absolute()) {
        throw Error(modules_path.string() + ": the pooling module's path must stay inside " +
                    dir.string());
      }
      const fs::path config = dir / sub / "config.json";
      p.mode = mode_of(read_json(config), config);
      pooled = true;
    } else if (type.ends_with(".Normalize")) {
      p.normalize = true;
    }
  }
  if (!pooled) throw Error(modules_path.string() + ": no Pooling module");
  return p;
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
