#include "heron/io/fused_experts.h"

#include <optional>
#include <string>
#include <vector>

#include <mlx/ops.h>

#include "heron/io/file_errors.h"

namespace heron::io {

namespace mx = mlx::core;

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Rows start, start + 2, ... of axis `axis` (gate's or up's of the interleaved pair).
mx::array every_other(const mx::array& a, int axis, int start) {
  mx::Shape begin(a.ndim(), 0), step(a.ndim(), 1);
  begin[axis] = start;
  step[axis] = 2;
  return mx::contiguous(mx::slice(a, begin, a.shape(), step));
}

// MXFP4 blocks [..., groups, 16] uint8 as MLX packs them: uint32 [..., groups * 4].
mx::array packed(const std::string& source, const std::string& name, const mx::array& blocks) {
  if (blocks.dtype() != mx::uint8 || blocks.ndim() != 4 || blocks.shape(3) != 16) {
    fail_file(source, "'" + name + "' is not MXFP4 blocks (uint8 [experts, rows, groups, 16])");
  }
  auto shape = blocks.shape();
  shape.pop_back();
  shape.back() *= 16;
  return mx::view(mx::reshape(blocks, shape), mx::uint32);
}

// Takes `name` out of `weights`, if there.
std::optional<mx::array> take(WeightMap& weights, const std::string& name) {
  const auto it = weights.find(name);
  if (it == weights.end()) return std::nullopt;
  auto a = it->second;
  weights.erase(it);
  return a;
}

// Qwen3.5's: gate's rows, then up's.
void unfuse_halves(WeightMap& weights, const std::string& p, const std::string& source) {
  auto gate_up = *take(weights, p + ".gate_up_proj");
  if (gate_up.ndim() != 3 || gate_up.shape(1) % 2 != 0) {
    fail_file(source, "'" + p + ".gate_up_proj' is not [experts, 2 x width, hidden]");
  }
  const int width = gate_up.shape(1) / 2;
  const auto parts = mx::split(gate_up, mx::Shape{width}, 1);
  const std::string m = p.substr(0, p.size() - 8) + ".switch_mlp";  // without ".experts"
  weights.insert_or_assign(m + ".gate_proj.weight", mx::contiguous(parts[0]));
  weights.insert_or_assign(m + ".up_proj.weight", mx::contiguous(parts[1]));
  if (auto down = take(weights, p + ".down_proj")) {
    weights.insert_or_assign(m + ".down_proj.weight", *down);
  }
}

void unfuse_layer(WeightMap& weights, const std::string& p, const std::string& source) {
  // Interleaved gate/up rows into P.gate_proj.WHAT and P.up_proj.WHAT.
  auto split = [&](const std::optional<mx::array>& a, const std::string& what) {
    if (!a) return;
    if (a->ndim() < 2 || a->shape(1) % 2 != 0) {
      fail_file(source, "'" + p + ".gate_up_proj' " + what + " has no even row axis");
    }
    weights.insert_or_assign(p + ".gate_proj." + what, every_other(*a, 1, 0));
    weights.insert_or_assign(p + ".up_proj." + what, every_other(*a, 1, 1));
  };
  auto put = [&](const std::optional<mx::array>& a, const std::string& name) {
    if (a) weights.insert_or_assign(name, *a);
  };
  if (auto blocks = take(weights, p + ".gate_up_proj_blocks")) {
    split(packed(source, p + ".gate_up_proj_blocks", *blocks), "weight");
    split(take(weights, p + ".gate_up_proj_scales"), "scales");
    if (auto down = take(weights, p + ".down_proj_blocks")) {
      weights.insert_or_assign(p + ".down_proj.weight",
                               packed(source, p + ".down_proj_blocks", *down));
    }
    put(take(weights, p + ".down_proj_scales"), p + ".down_proj.scales");
  } else {
    // transformers' float layout multiplies x @ W: [E, in, out], transposed here.
    auto transposed = [&](const std::string& name) -> std::optional<mx::array> {
      auto a = take(weights, name);
      if (!a) return std::nullopt;
      if (a->ndim() != 3) fail_file(source, "'" + name + "' is not [experts, in, out]");
      return mx::swapaxes(*a, 1, 2);
    };
    split(transposed(p + ".gate_up_proj"), "weight");
    if (auto down = transposed(p + ".down_proj")) {
      weights.insert_or_assign(p + ".down_proj.weight", mx::contiguous(*down));
    }
  }
  split(take(weights, p + ".gate_up_proj_bias"), "bias");
  put(take(weights, p + ".down_proj_bias"), p + ".down_proj.bias");
}

}  // namespace

bool has_fused_experts(const WeightMap& weights) {
  for (const auto& [name, a] : weights) {
    if (ends_with(name, ".experts.gate_up_proj_blocks") ||
        ends_with(name, ".experts.gate_up_proj")) {
      return true;
    }
  }
  return false;
}

FusedExperts fused_experts_of(const std::string& architecture) {
  return architecture == "qwen3_5_moe" ? FusedExperts::Halves : FusedExperts::Interleaved;
}

WeightMap with_unfused_experts(WeightMap weights, const std::string& source, FusedExperts layout) {
  std::vector<std::string> layers;  // P, for each P.gate_up_proj(_blocks)
  for (const auto& [name, a] : weights) {
    for (const std::string tail : {".gate_up_proj_blocks", ".gate_up_proj"}) {
      if (ends_with(name, ".experts" + tail)) {
        layers.push_back(name.substr(0, name.size() - tail.size()));
      }
    }
  }
  for (const auto& p : layers) {
    if (layout == FusedExperts::Halves && weights.contains(p + ".gate_up_proj")) {
      unfuse_halves(weights, p, source);
    } else {
      unfuse_layer(weights, p, source);
    }
  }
  return weights;
}

}  // namespace heron::io
