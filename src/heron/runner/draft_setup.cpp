#include "heron/runner/draft_setup.h"

#include "heron/core/error.h"
#include "heron/runner/cache_setup.h"
#include "heron/spec/draft_model.h"
#include "heron/store/model_files.h"

namespace heron::runner {

std::optional<LoadedDraft> load_draft(const std::filesystem::path& model_path,
                                      const model::ModelConfig& model_config,
                                      const std::optional<std::filesystem::path>& explicit_draft,
                                      model::LoadOptions options) {
  options.load_tokenizer = false;  // the model's tokenizer serves both
  LoadedDraft draft;
  if (explicit_draft) {
    draft.loaded = model::load_model(*explicit_draft, options);
    draft.key = "draft " + model_cache_key(*explicit_draft);
  } else if (store::is_manifest_path(model_path) &&
             store::draft_files(store::files_of_manifest_path(model_path))) {
    options.draft = true;
    draft.loaded = model::load_model(model_path, options);
    draft.key = "stored draft";  // the manifest's key already covers its draft's files
  } else {
    return std::nullopt;
  }
  spec::check_draft_vocabulary(model_config, draft.loaded.model->config(), draft.loaded.source);
  return draft;
}

Drafters::Drafters(const model::Model& model, const std::optional<LoadedDraft>& draft) {
  if (draft) {
    draft_model_.emplace(*draft->loaded.model);
  } else if (const auto* head = model.prediction_head()) {
    mtp_.emplace(*head, model.config().max_position_embeddings);
  }
}

spec::Drafter& Drafters::chosen() {
  if (draft_model_) return *draft_model_;
  if (mtp_) return *mtp_;
  return lookup_;
}

std::string speculation_key(const std::filesystem::path& model_path,
                            const std::optional<LoadedDraft>& draft) {
  auto key = model_cache_key(model_path);
  return draft ? key + " + " + draft->key : key;
}

}  // namespace heron::runner
