#pragma once
// How much memory a model will take once loaded, guessed from its files before a
// runner starts (the pool then uses what the runner reports); byte sizes in settings.
#include <cstdint>
#include <filesystem>
#include <string>

namespace heron::server {

// Bytes of weights: a GGUF file's size, or the sum of a directory's *.safetensors
// and *.gguf files. 0 when nothing is found (the runner's report decides then).
uint64_t estimate_model_bytes(const std::filesystem::path& path);

// "12GiB", "512MiB", "4G", "1000000": bytes; throws heron::Error naming `what`.
uint64_t parse_byte_size(const std::string& text, const std::string& what);

// Human form for messages: "1.5 GiB".
std::string format_bytes(uint64_t bytes);

}  // namespace heron::server
