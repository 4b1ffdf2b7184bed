#include "heron/runner/draft_setup.h"

#include "heron/core/error.h"
#include "heron/model/draft_head_loader.h"
#include "heron/runner/cache_setup.h"
#include "heron/spec/draft_model.h"
#include "heron/store/model_files.h"

namespace heron::runner {

std::optional<LoadedDraft> load_draft(const std::filesystem::path& model_path,
                                      const model::Model& model,
                                      const std::optional<std::filesystem::path>& explicit_draft,
                                      model::LoadOptions options) {
  options.load_tokenizer = false;  // the model's tokenizer serves both
  LoadedDraft draft;
  std::optional<store::ModelFiles> files;
  if (explicit_draft) {
    files = model::files_at(*explicit_draft);
    draft.key = "draft " + model_cache_key(*explicit_draft);
  } else if (store::is_manifest_path(model_path)) {
    files = store::draft_files(store::files_of_manifest_path(model_path));
    if (!files) return std::nullopt;
    options.draft = true;
    draft.key = "stored draft";  // the manifest's key already covers its draft's files
  } else {
    return std::nullopt;
  }
  if (files && model::is_draft_head(*files)) {
    draft.head = model::load_draft_head(*files, model, options);
    return draft;
  }
  draft.loaded = model::load_model(explicit_draft ? *explicit_draft : model_path, options);
  spec::check_draft_vocabulary(model.config(), draft.loaded->model->config(), draft.loaded->source);
  return draft;
}

Drafters::Drafters(const model::Model& model, const std::optional<LoadedDraft>& draft) {
  const int context = model.config().max_position_embeddings;
  if (draft && draft->head) {
    head_.emplace(*draft->head, context);
    lookup_first_.emplace(*head_);
  } else if (draft) {
    draft_model_.emplace(*draft->loaded->model);
  } else if (const auto* head = model.prediction_head()) {
    head_.emplace(*head, context);
  }
}

spec::Drafter& Drafters::chosen() {
  if (draft_model_) return *draft_model_;
  if (lookup_first_) return *lookup_first_;
  if (head_) return *head_;
  return lookup_;
}

std::string speculation_key(const std::filesystem::path& model_path,
                            const std::optional<LoadedDraft>& draft) {
  auto key = model_cache_key(model_path);
  return draft ? key + " + " + draft->key : key;
}

}  // namespace heron::runner
