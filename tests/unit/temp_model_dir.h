#pragma once
// A model directory in the temporary folder, made from a fixture's config and tokenizer
// files, whose weights and config a test then writes or edits; removed at the end.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <unordered_map>

#include <mlx/io.h>
#include <nlohmann/json.hpp>

#include "heron/core/error.h"
#include "heron/model/loader.h"

namespace heron::test {

class TempModelDir {
 public:
  TempModelDir(const std::string& name, const std::filesystem::path& fixture)
      : path_(std::filesystem::temp_directory_path() / (name + "-" + std::to_string(getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
    for (const char* f : {"config.json", "tokenizer.json", "tokenizer_config.json"}) {
      std::filesystem::copy(fixture / f, path_ / f);
    }
  }
  ~TempModelDir() { std::filesystem::remove_all(path_); }
  TempModelDir(const TempModelDir&) = delete;
  TempModelDir& operator=(const TempModelDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  void write_weights(const std::unordered_map<std::string, mlx::core::array>& w) const {
    mlx::core::save_safetensors((path_ / "model.safetensors").string(), w, {{"format", "mlx"}});
  }
  void edit_config(const std::function<void(nlohmann::json&)>& edit) const {
    auto config = nlohmann::json::parse(std::ifstream(path_ / "config.json"));
    edit(config);
    std::ofstream(path_ / "config.json") << config.dump(2);
  }
  // What loading the directory throws, or "(loaded)".
  std::string load_error() const {
    try {
      model::load_model(path_, model::LoadOptions{.load_tokenizer = false});
    } catch (const Error& e) {
      return e.what();
    }
    return "(loaded)";
  }

 private:
  std::filesystem::path path_;
};

}  // namespace heron::test
