#include "heron/store/model_template.h"

#include <fstream>
#include <sstream>

#include "heron/core/error.h"
#include "heron/io/gguf.h"
#include "heron/tokenizer/chat_templates.h"

namespace heron::store {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw Error(p.string() + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string default_of(const std::map<std::string, std::string>& templates) {
  const auto it = templates.find("default");
  return it == templates.end() ? "" : it->second;
}

}  // namespace

std::string own_chat_template(const ModelFiles& files) {
  if (const auto* g = files.find("model.gguf")) {
    return default_of(tokenizer::gguf_chat_templates(io::read_gguf_header(g->string()).metadata));
  }
  if (const auto* g = files.find("gguf_model.json")) {
    return default_of(tokenizer::gguf_chat_templates(read_gguf_model_json(*g).metadata));
  }
  if (const auto* c = files.find("tokenizer_config.json")) {
    json cfg;
    try {
      cfg = json::parse(read_text(*c));
    } catch (const json::exception& e) {
      throw Error(c->string() + ": invalid JSON: " + e.what());
    }
    auto own = default_of(tokenizer::config_chat_templates(cfg));
    if (!own.empty()) return own;
  }
  if (const auto* j = files.find("chat_template.jinja")) return read_text(*j);
  return "";
}

ModelFiles files_of_path(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return files_of_dir(path);
  return {path.string(), {{"model.gguf", path}}, std::nullopt, ""};
}

}  // namespace heron::store
