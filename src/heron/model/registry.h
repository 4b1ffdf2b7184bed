#pragma once
#include <memory>
#include <string>
#include <vector>

#include "heron/model/model.h"
#include "heron/model/weights.h"

namespace heron::model {

// Builds the model for config.architecture (HF model_type or GGUF
// general.architecture); an unknown name is a clear error listing the known ones.
std::unique_ptr<Model> build_model(const ModelConfig& config, Weights& weights);
std::vector<std::string> known_architectures();
// Throws that error, naming `source`, unless heron can build `architecture`.
void require_known_architecture(const std::string& architecture, const std::string& source);

}  // namespace heron::model
