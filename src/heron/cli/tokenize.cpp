// `heron tokenize` / `heron detokenize`: a model's tokenizer from the command line, loaded
// without the weights.
#include <charconv>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "heron/cli/args.h"
#include "heron/cli/commands.h"
#include "heron/core/default_model.h"
#include "heron/io/gguf.h"
#include "heron/tokenizer/tokenizer.h"

namespace heron::cli {

namespace {

namespace fs = std::filesystem;

const char* kModelHelp =
    "GGUF file, Hugging Face directory or tokenizer.json ('default': SmolLM2-135M)";

const std::vector<FlagSpec> kTokenizeFlags = {
    {"model", true, kModelHelp},
    {"ids", false, "print only the ids, space-separated (what detokenize takes)"},
    {"pieces", false, "print only the tokens, as a JSON list of strings"},
    {"no-special", false, "add no BOS/EOS and read special-token text as plain text"},
    {"help", false, "show this help"},
};

const std::vector<FlagSpec> kDetokenizeFlags = {
    {"model", true, kModelHelp},
    {"skip-special", false, "leave special tokens (BOS, EOS, ...) out of the text"},
    {"help", false, "show this help"},
};

std::unique_ptr<tokenizer::Tokenizer> load(const Args& args) {
  const std::string m = args.get_or("model", "default");
  const fs::path path = builtin_model_path(m).value_or(fs::path(m));
  if (fs::is_directory(path)) return tokenizer::Tokenizer::from_hf_dir(path);
  if (!fs::exists(path)) throw Error("model '" + m + "' not found");
  if (path.extension() == ".json") {
    const fs::path config = path.parent_path() / "tokenizer_config.json";
    return tokenizer::Tokenizer::from_json_files(
        path, fs::exists(config) ? std::optional<fs::path>(config) : std::nullopt);
  }
  return tokenizer::Tokenizer::from_gguf_metadata(io::read_gguf_header(path.string()).metadata);
}

std::string json_string(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// "12", "12,13", "[12," and "13]" all name ids: detokenize takes --ids output and JSON lists.
std::vector<int32_t> parse_ids(const std::vector<std::string>& words) {
  std::vector<int32_t> ids;
  for (const std::string& w : words) {
    size_t i = 0;
    while (i < w.size()) {
      if (w[i] == '[' || w[i] == ']' || w[i] == ',' || w[i] == ' ') {
        ++i;
        continue;
      }
      int64_t id = 0;
      const auto [end, ec] = std::from_chars(w.data() + i, w.data() + w.size(), id);
      if (ec != std::errc() || id < 0 || id > INT32_MAX) {
        throw UsageError("'" + w + "' is not a list of token ids");
      }
      ids.push_back(static_cast<int32_t>(id));
      i = static_cast<size_t>(end - w.data());
    }
  }
  return ids;
}

}  // namespace

int run_tokenize(const std::vector<std::string>& argv) {
  Args args("tokenize", kTokenizeFlags, argv);
  if (args.has("help")) {
    std::cout << "usage: heron tokenize [flags] TEXT   (TEXT '-' reads standard input)\n"
              << "default output: one token per line, its id and its spelling\n\n"
              << Args::usage("tokenize", kTokenizeFlags);
    return 0;
  }
  if (args.has("ids") && args.has("pieces"))
    throw UsageError("give at most one of --ids, --pieces");
  if (args.positional().size() != 1) {
    throw UsageError("give the text as one argument (quote it), or '-' to read standard input");
  }
  std::string text = args.positional()[0];
  if (text == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  const auto tok = load(args);
  const bool special = !args.has("no-special");
  const std::vector<int32_t> ids = tok->encode(text, special, special);

  auto piece = [&](int32_t id) {
    const std::string* t = tok->id_to_token(id);
    return t == nullptr ? std::string() : *t;
  };
  if (args.has("ids")) {
    for (size_t i = 0; i < ids.size(); ++i) std::cout << (i > 0 ? " " : "") << ids[i];
    std::cout << "\n";
  } else if (args.has("pieces")) {
    std::cout << "[";
    for (size_t i = 0; i < ids.size(); ++i)
      std::cout << (i > 0 ? ", " : "") << json_string(piece(ids[i]));
    std::cout << "]\n";
  } else {
    for (int32_t id : ids) std::cout << id << "\t" << json_string(piece(id)) << "\n";
  }
  return 0;
}

int run_detokenize(const std::vector<std::string>& argv) {
  Args args("detokenize", kDetokenizeFlags, argv);
  if (args.has("help")) {
    std::cout
        << "usage: heron detokenize [flags] ID...   (also takes \"1,2,3\" or \"[1, 2, 3]\")\n\n"
        << Args::usage("detokenize", kDetokenizeFlags);
    return 0;
  }
  const std::vector<int32_t> ids = parse_ids(args.positional());
  if (ids.empty()) throw UsageError("give the token ids to decode");
  const auto tok = load(args);
  for (int32_t id : ids) {
    if (id >= tok->vocab_size()) {
      throw UsageError("token id " + std::to_string(id) + " is outside the vocabulary (size " +
                       std::to_string(tok->vocab_size()) + ")");
    }
  }
  std::cout << tok->decode(ids, args.has("skip-special")) << "\n";
  return 0;
}

}  // namespace heron::cli
