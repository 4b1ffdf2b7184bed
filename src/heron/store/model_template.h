#pragma once
// The chat template a model's own files carry, read without loading the model or its
// tokenizer, for /api/show: the GGUF metadata's tokenizer.chat_template (model.gguf, or
// gguf_model.json for a quantized float GGUF), else tokenizer_config.json's
// chat_template, else chat_template.jinja. A list of named templates gives "default".
#include <filesystem>
#include <string>

#include "heron/store/model_files.h"

namespace heron::store {

// "" when the model has none (the server then falls back as chat_prompt describes).
std::string own_chat_template(const ModelFiles& files);

// The files of a model path outside the store: a Hugging Face directory or a GGUF file.
ModelFiles files_of_path(const std::filesystem::path& path);

}  // namespace heron::store
