#pragma once
// Test-only: with HERON_TEST_SCRIPTED_OUTPUT naming a file in the runner's environment,
// every completion "generates" that file's text (its tokens, as the model's tokenizer
// encodes it, go to the caller as if sampled) instead of running the model, so the
// integration tests can make a real model answer with tool calls or reasoning in any
// family's syntax. Only the environment heron serve was started with can set it; no
// request field reaches it. The file is read per completion, so a test may rewrite it.
#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

#include "heron/engine/generator.h"
#include "heron/tokenizer/tokenizer.h"

namespace heron::runner {

std::optional<std::filesystem::path> scripted_output_from_env();

// Feeds the script's tokens to on_token, at most options.max_tokens of them (when >= 0).
// Throws heron::Error when the file cannot be read.
engine::GenerateStats emit_scripted_output(
    const std::filesystem::path& script, const tokenizer::Tokenizer& tokenizer, int prompt_tokens,
    const engine::GenerateOptions& options,
    const std::function<engine::Next(const engine::TokenStep&)>& on_token);

}  // namespace heron::runner
