#pragma once
// Shared helpers of the tokenizer tests: fixture files (zstd-compressed JSON written by
// tools/gen_tokenizer_refs.py), the corpus, and the tokenizers each fixture describes.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "heron/tokenizer/tokenizer.h"

namespace tokenizer_test {

namespace fs = std::filesystem;
using heron::tokenizer::Tokenizer;
using nlohmann::json;

inline const fs::path kFixtures = fs::path(HERON_FIXTURES) / "tokenizer";
// Real tokenizers of six model families (tests/fixtures/tokenizers/README.md).
inline const fs::path kRealTokenizers = fs::path(HERON_FIXTURES) / "tokenizers";

inline std::string zstd_decompress(const fs::path& path) {
  const std::string cmd = "zstd -dc --long=31 -- '" + path.string() + "'";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot run " + cmd);
  std::string out;
  char buf[1 << 16];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
  if (pclose(pipe) != 0) throw std::runtime_error(cmd + " failed");
  return out;
}

inline json zstd_json(const fs::path& path) {
  return json::parse(zstd_decompress(path));
}

inline std::string from_hex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

// JSON-quoted start of `s` for failure messages (never cuts a code point, never throws).
inline std::string preview(const std::string& s, size_t max = 100) {
  size_t n = std::min(s.size(), max);
  while (n < s.size() && n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return json(s.substr(0, n)).dump(-1, ' ', false, json::error_handler_t::replace) +
         (n < s.size() ? "..." : "");
}

struct Corpus {
  std::vector<std::string> strings;
  std::vector<std::string> invalid_utf8;
};

inline const Corpus& corpus() {
  static const Corpus c = [] {
    const json j = zstd_json(kFixtures / "corpus.json.zst");
    Corpus out;
    out.strings = j.at("strings").get<std::vector<std::string>>();
    for (const auto& h : j.at("invalid_utf8_hex")) out.invalid_utf8.push_back(from_hex(h));
    return out;
  }();
  return c;
}

// A per-process temp dir holding decompressed real tokenizers.
inline const fs::path& temp_dir() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("heron_tokenizer_test_" + std::to_string(getpid()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

// Decompresses a real tokenizer's tokenizer.json and tokenizer_config.json into one
// directory, as a model ships them.
inline fs::path hf_dir(const std::string& name) {
  const fs::path dir = temp_dir() / name;
  if (!fs::exists(dir / "tokenizer.json")) {
    fs::create_directories(dir);
    for (const char* file : {"tokenizer_config.json", "tokenizer.json"}) {
      std::ofstream(dir / file, std::ios::binary)
          << zstd_decompress(kRealTokenizers / name / (std::string(file) + ".zst"));
    }
  }
  return dir;
}

// tokenizer.json of a real tokenizer ("qwen3"), or of a fixture file ("bert", "unigram",
// "bpe_suffix").
inline const json& base_json(const std::string& name) {
  static std::map<std::string, json> cache;
  static std::mutex mu;
  std::lock_guard lock(mu);
  auto it = cache.find(name);
  if (it == cache.end()) {
    json j;
    if (name == "bert") {
      j = zstd_json(kFixtures / "bert_minilm.tokenizer.json.zst");
    } else if (name == "unigram" || name == "bpe_suffix") {
      j = zstd_json(kFixtures / (name + ".tokenizer.json.zst"));
    } else {
      std::ifstream in(hf_dir(name) / "tokenizer.json");
      j = json::parse(in);
    }
    it = cache.emplace(name, std::move(j)).first;
  }
  return it->second;
}

// Fixture edits: top-level keys replace, "model+" updates the model.
inline json apply_edits(json t, const json& edits) {
  for (const auto& [key, value] : edits.items()) {
    if (key == "model+") {
      t["model"].update(value);
    } else {
      t[key] = value;
    }
  }
  return t;
}

// The generator's unigram_with_bytes: 256 "<0xAB>" tokens below every other score.
inline json unigram_with_bytes(json t) {
  double low = 0;
  bool first = true;
  for (const auto& item : t["model"]["vocab"]) {
    const double s = item[1].get<double>();
    if (first || s < low) low = s;
    first = false;
  }
  static const char* kHex = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    const std::string tok = std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">";
    t["model"]["vocab"].push_back(json::array({tok, low - 1.0}));
  }
  return t;
}

// The same tokenizer.json edits the generator makes for its older variants.
json legacy_variant(const std::string& name);

// The generator's gguf_bpe_metadata: a byte-level tokenizer.json laid out as GGUF
// tokenizer metadata (tokens by id, added tokens CONTROL when special else USER_DEFINED,
// merges "left right"); `desc` is its entry in gguf_bpe.json.zst.
inline json gguf_bpe_metadata(const json& tj, const json& desc) {
  std::map<int64_t, std::pair<std::string, int>> by_id;
  for (const auto& [token, id] : tj.at("model").at("vocab").items())
    by_id[id.get<int64_t>()] = {token, 1};
  for (const auto& a : tj.at("added_tokens"))
    by_id[a.at("id").get<int64_t>()] = {a.at("content"), a.at("special").get<bool>() ? 3 : 4};
  json tokens = json::array(), types = json::array(), merges = json::array();
  for (const auto& [id, token] : by_id) {
    if (id != static_cast<int64_t>(tokens.size())) throw std::runtime_error("vocab has holes");
    tokens.push_back(token.first);
    types.push_back(token.second);
  }
  for (const auto& m : tj.at("model").at("merges"))
    merges.push_back(m.is_string() ? m.get<std::string>()
                                   : m[0].get<std::string>() + " " + m[1].get<std::string>());
  return {{"tokenizer.ggml.model", "gpt2"},
          {"tokenizer.ggml.pre", desc.at("pre")},
          {"tokenizer.ggml.tokens", std::move(tokens)},
          {"tokenizer.ggml.token_type", std::move(types)},
          {"tokenizer.ggml.merges", std::move(merges)},
          {"tokenizer.ggml.add_bos_token", desc.at("add_bos")},
          {"tokenizer.ggml.bos_token_id", desc.at("bos")},
          {"tokenizer.ggml.eos_token_id", desc.at("eos")}};
}

// Loads the tokenizer a fixture's "load" field describes ("config+": tokenizer_config.json
// keys replaced; "gguf+": GGUF metadata keys replaced).
inline std::unique_ptr<Tokenizer> load_tokenizer(const json& load) {
  if (load.contains("real") && load.contains("config+")) {
    const std::string name = load["real"];
    std::ifstream in(hf_dir(name) / "tokenizer_config.json");
    json config = json::parse(in);
    config.update(load["config+"]);
    return Tokenizer::from_json(base_json(name), config);
  }
  if (load.contains("real")) return Tokenizer::from_hf_dir(hf_dir(load["real"]));
  if (load.contains("file")) {
    return Tokenizer::from_json(zstd_json(kFixtures / load["file"].get<std::string>()), json());
  }
  if (load.contains("gguf")) {
    json metadata = zstd_json(kFixtures / load["gguf"].get<std::string>());
    if (load.contains("gguf+")) metadata.update(load["gguf+"]);
    return Tokenizer::from_gguf_metadata(metadata);
  }
  if (load.contains("legacy")) return Tokenizer::from_json(legacy_variant(load["legacy"]), json());
  json base = base_json(load.at("base").get<std::string>());
  if (load.value("unigram_bytes", false)) base = unigram_with_bytes(std::move(base));
  return Tokenizer::from_json(apply_edits(std::move(base), load.at("edits")), json());
}

inline const json& fixture(const std::string& name) {
  static std::map<std::string, json> cache;
  static std::mutex mu;
  std::lock_guard lock(mu);
  auto it = cache.find(name);
  if (it == cache.end())
    it = cache.emplace(name, zstd_json(kFixtures / (name + ".json.zst"))).first;
  return it->second;
}

// The tokenizer of fixture `name`, loaded once.
inline const Tokenizer& tokenizer(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Tokenizer>> cache;
  static std::mutex mu;
  {
    std::lock_guard lock(mu);
    if (auto it = cache.find(name); it != cache.end()) return *it->second;
  }
  auto tok = load_tokenizer(fixture(name).at("load"));
  std::lock_guard lock(mu);
  return *cache.emplace(name, std::move(tok)).first->second;
}

}  // namespace tokenizer_test
