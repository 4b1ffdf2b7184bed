#pragma once
// Which draft model speculates for a model: the one named explicitly (`heron generate
// --draft`), else the draft a store model was created with (Modelfile DRAFT), else none
// (prompt lookup drafts). Loaded like the model, vocabulary checked.
#include <filesystem>
#include <optional>
#include <string>

#include "heron/model/loader.h"

namespace heron::runner {

struct LoadedDraft {
  model::LoadedModel loaded;
  std::string key;  // names the pair's speculation costs (spec/cost_file.h)
};

// Throws heron::Error when the draft cannot be loaded or does not share the vocabulary.
std::optional<LoadedDraft> load_draft(const std::filesystem::path& model_path,
                                      const model::ModelConfig& model_config,
                                      const std::optional<std::filesystem::path>& explicit_draft,
                                      model::LoadOptions options);

// The key of a model's speculation costs: the model's, and its draft's when it has one.
std::string speculation_key(const std::filesystem::path& model_path,
                            const std::optional<LoadedDraft>& draft);

}  // namespace heron::runner
