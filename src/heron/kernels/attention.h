#pragma once
// Scaled dot-product attention with a fast CPU path: same semantics as
// mx::fast::scaled_dot_product_attention(q, k, v, scale, causal ? "causal" :
// ""). On CPU MLX composes it from matmuls on a slow reference BLAS; this one
// is a fused online-softmax kernel using AVX2 and all cores. Other devices,
// dtypes and shapes go to MLX unchanged.
#include <optional>

#include <mlx/array.h>
#include <mlx/utils.h>

namespace heron::kernels {

// q [B, Hq, L, D], k [B, Hkv, T, D], v [B, Hkv, T, Dv] with Hq % Hkv == 0 (query head h
// reads kv head h / (Hq / Hkv)) -> [B, Hq, L, Dv]. causal: query i sees keys
// j <= T - L + i (the mask is aligned to the end of the keys). sinks [Hq]: each head's
// attention sink, a logit that joins the softmax and adds no value (mx::fast's sinks).
mlx::core::array scaled_dot_product_attention(
    const mlx::core::array& q, const mlx::core::array& k, const mlx::core::array& v, float scale,
    bool causal, const std::optional<mlx::core::array>& sinks = std::nullopt,
    mlx::core::StreamOrDevice s = {});

// The same with a bool mask [L, T] instead of the causal one: query i sees key j where
// mask[i, j] (mx::fast's boolean mask; keys stored out of position order, as in a
// sliding window's ring). Every query must see at least one key.
mlx::core::array masked_scaled_dot_product_attention(
    const mlx::core::array& q, const mlx::core::array& k, const mlx::core::array& v, float scale,
    const mlx::core::array& mask, const std::optional<mlx::core::array>& sinks = std::nullopt,
    mlx::core::StreamOrDevice s = {});

// The same with right-padded keys: batch row b sees keys j < key_lengths[b] (int32 [B],
// each at least 1), as a batch of texts of different lengths needs.
mlx::core::array padded_scaled_dot_product_attention(const mlx::core::array& q,
                                                     const mlx::core::array& k,
                                                     const mlx::core::array& v, float scale,
                                                     const mlx::core::array& key_lengths,
                                                     mlx::core::StreamOrDevice s = {});

}  // namespace heron::kernels
