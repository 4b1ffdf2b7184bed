#pragma once
// GPU warm-up at load time: MLX's CUDA backend compiles kernels the first time each
// is used, and the weights are read lazily. One short prefill and one decode step on
// throwaway caches do both inside model load, so the first request pays for neither.
#include "heron/model/model.h"

namespace heron::model {

void warm_up(const Model& model);

}  // namespace heron::model
