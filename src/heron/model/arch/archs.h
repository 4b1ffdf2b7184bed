#pragma once
// One builder per architecture file; the registry maps names to these.
#include <memory>

#include "heron/model/model.h"
#include "heron/model/weights.h"

namespace heron::model::arch {

std::unique_ptr<Model> build_llama(const ModelConfig& config, Weights& weights);
std::unique_ptr<Model> build_qwen3(const ModelConfig& config, Weights& weights);
std::unique_ptr<Model> build_gemma3(const ModelConfig& config, Weights& weights);
std::unique_ptr<Model> build_glm4_moe_lite(const ModelConfig& config, Weights& weights);
std::unique_ptr<Model> build_gpt_oss(const ModelConfig& config, Weights& weights);
std::unique_ptr<Model> build_qwen3_next(const ModelConfig& config, Weights& weights);

}  // namespace heron::model::arch
