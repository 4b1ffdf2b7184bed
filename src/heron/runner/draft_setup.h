#pragma once
// Which draft speculates for a model: the one named explicitly (`heron generate --draft`),
// else the draft a store model was created with (Modelfile DRAFT), else none. A draft is
// a model, loaded like the model with its vocabulary checked, or a trained draft head
// (model/draft_head_loader.h) bound to the model. Drafters: which drafter speculates.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "heron/model/loader.h"
#include "heron/spec/draft_model.h"
#include "heron/spec/head_drafter.h"
#include "heron/spec/lookup_first.h"
#include "heron/spec/prompt_lookup.h"

namespace heron::runner {

struct LoadedDraft {
  std::optional<model::LoadedModel> loaded;     // a draft model
  std::unique_ptr<model::PredictionHead> head;  // or a draft head
  std::string key;  // names the pair's speculation costs (spec/cost_file.h)
};

// Throws heron::Error when the draft cannot be loaded or does not fit the model (another
// vocabulary, a head trained for another model). `model` outlives the draft.
std::optional<LoadedDraft> load_draft(const std::filesystem::path& model_path,
                                      const model::Model& model,
                                      const std::optional<std::filesystem::path>& explicit_draft,
                                      model::LoadOptions options);

// The drafter a model speculates with: its draft model when it has one; its draft head
// when it has one, behind prompt lookup where the text repeats (spec/lookup_first.h);
// else its own multi-token-prediction head when its files have one; else prompt lookup. The model
// and the draft outlive it; used on the MLX thread.
class Drafters {
 public:
  Drafters(const model::Model& model, const std::optional<LoadedDraft>& draft);
  spec::Drafter& chosen();
  Drafters(const Drafters&) = delete;  // lookup_first_ refers to head_
  Drafters& operator=(const Drafters&) = delete;

 private:
  spec::PromptLookup lookup_;
  std::optional<spec::DraftModel> draft_model_;
  std::optional<spec::HeadDrafter> head_;
  std::optional<spec::LookupFirst> lookup_first_;
};

// The key of a model's speculation costs: the model's, and its draft's when it has one.
std::string speculation_key(const std::filesystem::path& model_path,
                            const std::optional<LoadedDraft>& draft);

}  // namespace heron::runner
