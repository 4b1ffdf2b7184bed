// `heron render`: print the prompt a model's chat template makes of a conversation,
// exactly as transformers' apply_chat_template would (tokenize=False), with the template
// the server would choose (template/chat_prompt.h).
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "heron/cli/args.h"
#include "heron/cli/commands.h"
#include "heron/core/default_model.h"
#include "heron/io/gguf.h"
#include "heron/template/chat_prompt.h"
#include "heron/template/template.h"
#include "heron/tokenizer/tokenizer.h"

namespace heron::cli {

namespace {

using ojson = nlohmann::ordered_json;

const std::vector<FlagSpec> kFlags = {
    {"model", true,
     "GGUF file or Hugging Face directory whose chat template to use ('default': SmolLM2-135M)"},
    {"template", true, "a Jinja chat template file (instead of --model)"},
    {"messages", true, "JSON file: an array of messages (or an object holding \"messages\")"},
    {"tools", true, "JSON file: an array of tool schemas"},
    {"context", true, "JSON file: extra template variables (enable_thinking, documents, ...)"},
    {"no-generation-prompt", false, "do not open an assistant turn at the end"},
    {"bench", true, "render N times and print the mean CPU time per render on stderr"},
    {"bench-batches", true,
     "with --bench: do the N renders B times and print the fastest batch's mean (default 1)"},
    {"help", false, "show this help"},
};

ojson read_json(const std::string& flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot read --" + flag + " '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return ojson::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": not valid JSON: " + e.what());
  }
}

chat::ChatFormat from_model(const std::filesystem::path& path) {
  std::unique_ptr<tokenizer::Tokenizer> tok;
  if (std::filesystem::is_directory(path)) {
    tok = tokenizer::Tokenizer::from_hf_dir(path);
  } else {
    tok = tokenizer::Tokenizer::from_gguf_metadata(io::read_gguf_header(path.string()).metadata);
  }
  return chat::ChatFormat::from_tokenizer(*tok);
}

}  // namespace

int run_render(const std::vector<std::string>& argv) {
  Args args("render", kFlags, argv);
  if (args.has("help")) {
    std::cout << Args::usage("render", kFlags);
    return 0;
  }
  if (!args.positional().empty())
    throw UsageError("unexpected argument '" + args.positional()[0] + "'");
  if (args.has("model") && args.has("template"))
    throw UsageError("give --model or --template, not both");
  if (!args.has("messages")) throw UsageError("--messages is required");

  chat::ChatFormat format;
  std::optional<std::string> template_file;
  if (auto file = args.get("template")) {
    std::ifstream in(*file, std::ios::binary);
    if (!in) throw UsageError("cannot read --template '" + *file + "'");
    std::ostringstream text;
    text << in.rdbuf();
    template_file = text.str();
  } else {
    const std::string model = args.get_or("model", "default");
    format = from_model(builtin_model_path(model).value_or(std::filesystem::path(model)));
  }

  chat::ChatInput input;
  input.add_generation_prompt = !args.has("no-generation-prompt");
  auto take = [&](const std::string& key, ojson value) {
    if (key == "messages") {
      input.messages = std::move(value);
    } else if (key == "tools") {
      input.tools = std::move(value);
    } else if (key == "documents") {
      input.documents = std::move(value);
    } else if (key == "add_generation_prompt") {
      if (!value.is_boolean()) throw Error("add_generation_prompt must be true or false");
      input.add_generation_prompt = value.get<bool>();
    } else {
      input.extra[key] = std::move(value);
    }
  };
  ojson messages = read_json("messages", *args.get("messages"));
  if (messages.is_object()) {
    for (auto& [key, value] : messages.items()) take(key, value);
  } else if (messages.is_array()) {
    input.messages = std::move(messages);
  } else {
    throw Error("--messages must hold a JSON array of messages");
  }
  if (auto tools = args.get("tools")) input.tools = read_json("tools", *tools);
  if (auto extra = args.get("context")) {
    ojson more = read_json("context", *extra);
    if (!more.is_object()) throw Error("--context must hold a JSON object");
    for (auto& [key, value] : more.items()) take(key, value);
  }

  const auto tpl =
      chat::Template::parse(chat::select_template(format, !input.tools.is_null(), template_file));
  const ojson context = chat::chat_context(format, input);
  const int64_t repeat = args.get_int("bench", 0, 0, 1 << 24);
  const int64_t batches = args.get_int("bench-batches", 1, 1, 1000);
  std::string text = tpl.render(context);
  if (repeat > 0) {
    // CPU time: a busy machine inflates wall time, not the work a render does. The
    // fastest batch is the one least disturbed by the rest of the machine.
    double best_us = 0;
    for (int64_t b = 0; b < batches; ++b) {
      const std::clock_t start = std::clock();
      for (int64_t i = 0; i < repeat; ++i) text = tpl.render(context);
      const double us = 1e6 * static_cast<double>(std::clock() - start) /
                        static_cast<double>(CLOCKS_PER_SEC) / static_cast<double>(repeat);
      if (b == 0 || us < best_us) best_us = us;
    }
    std::cerr << nlohmann::json{{"renders", repeat},
                                {"batches", batches},
                                {"cpu_us_per_render", best_us},
                                {"bytes", text.size()}}
                     .dump()
              << "\n";
  }
  std::cout << text << std::flush;
  return 0;
}

}  // namespace heron::cli
