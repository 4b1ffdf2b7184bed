#pragma once
// Which draft model speculates for a model: the one named explicitly (`heron generate
// --draft`), else the draft a store model was created with (Modelfile DRAFT), else none.
// Loaded like the model, vocabulary checked. Drafters: which drafter speculates.
#include <filesystem>
#include <optional>
#include <string>

#include "heron/model/loader.h"
#include "heron/spec/draft_model.h"
#include "heron/spec/mtp_drafter.h"
#include "heron/spec/prompt_lookup.h"

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

// The drafter a model speculates with: its draft model when it has one, else its own
// multi-token-prediction head when its files have one, else prompt lookup. The model and
// the draft outlive it; used on the MLX thread.
class Drafters {
 public:
  Drafters(const model::Model& model, const std::optional<LoadedDraft>& draft);
  spec::Drafter& chosen();

 private:
  spec::PromptLookup lookup_;
  std::optional<spec::DraftModel> draft_model_;
  std::optional<spec::MtpDrafter> mtp_;
};

// The key of a model's speculation costs: the model's, and its draft's when it has one.
std::string speculation_key(const std::filesystem::path& model_path,
                            const std::optional<LoadedDraft>& draft);

}  // namespace heron::runner
