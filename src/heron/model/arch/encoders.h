#pragma once
// One builder per encoder architecture file; model/encoder_loader maps names to these.
#include <memory>

#include "heron/model/encoder.h"
#include "heron/model/weights.h"

namespace heron::model::arch {

std::unique_ptr<Encoder> build_bert(const EncoderConfig& config, Weights& weights);

}  // namespace heron::model::arch
