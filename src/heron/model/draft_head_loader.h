#pragma once
// Opens a trained draft head (model/layers/draft_head.h): a directory with config.json
// ("architectures": ["HeronDraftHead"]) and model.safetensors, or the draft a store model
// was created with (Modelfile DRAFT), for the model it drafts for.
#include <memory>

#include "heron/model/loader.h"
#include "heron/model/model.h"
#include "heron/store/model_files.h"

namespace heron::model {

inline constexpr const char* kDraftHeadArchitecture = "HeronDraftHead";

// Whether config.json names a draft head.
bool is_draft_head_config(const nlohmann::json& config);
// Whether these files hold a draft head (their config.json says so).
bool is_draft_head(const store::ModelFiles& files);
// Throws heron::Error when the files are not a valid head for `target` (which outlives it).
std::unique_ptr<PredictionHead> load_draft_head(const store::ModelFiles& files, const Model& target,
                                                const LoadOptions& options);

}  // namespace heron::model
