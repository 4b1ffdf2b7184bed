// Which tensors `create --quantize` quantizes and at what precision.
#include <gtest/gtest.h>

#include <mlx/ops.h>

#include "heron/core/error.h"
#include "heron/store/quantize_plan.h"

namespace heron::store {
namespace {

namespace mx = mlx::core;

std::string plan(const std::string& name, mx::Shape shape, const std::string& type,
                 bool tied = false, mx::Dtype dtype = mx::float32) {
  auto p = plan_tensor(name, mx::zeros(shape, dtype), QuantType::parse(type), tied);
  return p ? p->mode + "/" + std::to_string(p->bits) + "/" + std::to_string(p->group_size) : "keep";
}

TEST(QuantizePlan, TypesAndAliases) {
  EXPECT_EQ(QuantType::parse("q4"), QuantType::parse("int4"));
  EXPECT_EQ(QuantType::parse("q8"), QuantType::parse("int8"));
  EXPECT_EQ(QuantType::parse("mxfp4").group_size, 32);
  EXPECT_EQ(QuantType::parse("nvfp4").group_size, 16);
  EXPECT_THROW(QuantType::parse("q4_K_M"), Error);
  EXPECT_THROW(QuantType::parse("INT4"), Error);
}

TEST(QuantizePlan, Int4KeepsSensitiveLayersAtEightBits) {
  EXPECT_EQ(plan("model.layers.0.self_attn.q_proj.weight", {128, 128}, "int4"), "affine/4/64");
  EXPECT_EQ(plan("model.layers.0.self_attn.k_proj.weight", {64, 128}, "int4"), "affine/8/64");
  EXPECT_EQ(plan("model.layers.0.self_attn.v_proj.weight", {64, 128}, "int4"), "affine/8/64");
  EXPECT_EQ(plan("model.layers.0.mlp.down_proj.weight", {128, 256}, "int4"), "affine/8/64");
  EXPECT_EQ(plan("model.layers.0.mlp.up_proj.weight", {256, 128}, "int4"), "affine/4/64");
  EXPECT_EQ(plan("model.layers.0.self_attn.k_proj.weight", {64, 128}, "mxfp4"), "mxfp4/4/32");
}

TEST(QuantizePlan, OutputHeadAtEightBits) {
  EXPECT_EQ(plan("lm_head.weight", {512, 64}, "int4"), "affine/8/64");
  EXPECT_EQ(plan("lm_head.weight", {512, 64}, "nvfp4"), "mxfp8/8/32");
  EXPECT_EQ(plan("model.embed_tokens.weight", {512, 64}, "int4", /*tied=*/true), "affine/8/64");
  EXPECT_EQ(plan("model.embed_tokens.weight", {512, 64}, "int4", /*tied=*/false), "affine/4/64");
}

TEST(QuantizePlan, KeepsNormsBiasesRoutersOddWidthsAndNonFloats) {
  EXPECT_EQ(plan("model.layers.0.input_layernorm.weight", {64}, "int4"), "keep");
  EXPECT_EQ(plan("model.layers.0.self_attn.q_norm.weight", {64, 64}, "int8"), "keep");
  EXPECT_EQ(plan("model.layers.0.self_attn.q_proj.bias", {64}, "int8"), "keep");
  EXPECT_EQ(plan("model.layers.0.mlp.gate.weight", {8, 64}, "int4"), "keep");  // MoE router
  EXPECT_EQ(plan("model.layers.0.mlp.gate_proj.weight", {128, 64}, "int4"), "affine/4/64");
  EXPECT_EQ(plan("model.layers.0.mlp.shared_expert_gate.weight", {1, 64}, "int4"), "keep");
  EXPECT_EQ(plan("model.layers.0.self_attn.o_proj.weight", {64, 96}, "int4"), "keep");
  EXPECT_EQ(plan("model.layers.0.self_attn.o_proj.weight", {64, 96}, "mxfp4"), "mxfp4/4/32");
  EXPECT_EQ(plan("model.layers.0.conv.weight", {64, 1, 4}, "int4"), "keep");
  EXPECT_EQ(plan("model.layers.0.mlp.up_proj.weight", {64, 64}, "int4", false, mx::int32), "keep");
}

}  // namespace
}  // namespace heron::store
