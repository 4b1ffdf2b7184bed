// Tokenizer micro benchmark, driven by bench/bench_tokenizers.py (which also times HF
// `tokenizers` on the same input):
//
//   tokenizer_bench MODEL DOCS [--repeat N]
//
// MODEL: a Hugging Face directory, a tokenizer.json or a GGUF file. DOCS: documents
// separated by NUL bytes. Prints one JSON line: the fastest of 3 loads and of N encode
// passes over every document (one thread, add_special off), with byte and token counts.
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "heron/io/gguf.h"
#include "heron/tokenizer/tokenizer.h"

namespace {

namespace fs = std::filesystem;
using heron::tokenizer::Tokenizer;
using Clock = std::chrono::steady_clock;

std::unique_ptr<Tokenizer> load(const fs::path& path) {
  if (fs::is_directory(path)) return Tokenizer::from_hf_dir(path);
  if (path.extension() == ".json") return Tokenizer::from_json_files(path, std::nullopt);
  return Tokenizer::from_gguf_metadata(heron::io::read_gguf_header(path.string()).metadata);
}

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: tokenizer_bench MODEL DOCS [--repeat N]\n";
    return 2;
  }
  int repeat = 3;
  if (argc >= 5 && std::strcmp(argv[3], "--repeat") == 0) repeat = std::max(1, std::atoi(argv[4]));
  try {
    std::ifstream in(argv[2], std::ios::binary);
    if (!in) throw std::runtime_error(std::string("cannot read ") + argv[2]);
    std::stringstream buf;
    buf << in.rdbuf();
    const std::string all = buf.str();
    std::vector<std::string_view> docs;
    for (size_t pos = 0; pos < all.size();) {
      size_t end = all.find('\0', pos);
      if (end == std::string::npos) end = all.size();
      if (end > pos) docs.push_back(std::string_view(all).substr(pos, end - pos));
      pos = end + 1;
    }

    double load_s = 1e30;
    std::unique_ptr<Tokenizer> tok;
    for (int i = 0; i < 3; ++i) {
      tok.reset();
      const auto t0 = Clock::now();
      tok = load(argv[1]);
      load_s = std::min(load_s, seconds_since(t0));
    }

    double encode_s = 1e30;
    size_t tokens = 0, bytes = 0;
    for (int r = 0; r < repeat; ++r) {
      tokens = bytes = 0;
      const auto t0 = Clock::now();
      for (std::string_view d : docs) {
        tokens += tok->encode(d, false, true).size();
        bytes += d.size();
      }
      encode_s = std::min(encode_s, seconds_since(t0));
    }
    std::cout << nlohmann::json{{"load_seconds", load_s},
                                {"encode_seconds", encode_s},
                                {"bytes", bytes},
                                {"tokens", tokens},
                                {"docs", docs.size()}}
                     .dump()
              << "\n";
  } catch (const std::exception& e) {
    std::cerr << "tokenizer_bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
