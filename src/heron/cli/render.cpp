// `heron render`: print the prompt a model's chat template makes of a conversation,
// exactly as transformers' apply_chat_template would (tokenize=False).
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
    {"bench", true, "render N times and print the mean time on stderr"},
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

struct TemplateSource {
  std::string source;
  std::string bos, eos;
};

TemplateSource from_model(const std::filesystem::path& path) {
  std::unique_ptr<tokenizer::Tokenizer> tok;
  if (std::filesystem::is_directory(path)) {
    tok = tokenizer::Tokenizer::from_hf_dir(path);
  } else {
    tok = tokenizer::Tokenizer::from_gguf_metadata(io::read_gguf_header(path.string()).metadata);
  }
  if (tok->chat_template().empty()) throw Error(path.string() + ": the model has no chat template");
  TemplateSource out{tok->chat_template(), "", ""};
  auto spell = [&](std::optional<int32_t> id) {
    const std::string* token = id ? tok->id_to_token(*id) : nullptr;
    return token ? *token : std::string();
  };
  out.bos = spell(tok->bos_id());
  out.eos = spell(tok->eos_id());
  return out;
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

  TemplateSource src;
  if (auto file = args.get("template")) {
    std::ifstream in(*file, std::ios::binary);
    if (!in) throw UsageError("cannot read --template '" + *file + "'");
    std::ostringstream text;
    text << in.rdbuf();
    src.source = text.str();
  } else {
    const std::string model = args.get_or("model", "default");
    src = from_model(model == "default" ? default_model_path() : std::filesystem::path(model));
  }

  // What transformers passes: tools and documents are None unless given.
  ojson context = {
      {"messages", ojson::array()}, {"tools", nullptr},
      {"documents", nullptr},       {"add_generation_prompt", !args.has("no-generation-prompt")},
      {"bos_token", src.bos},       {"eos_token", src.eos}};
  ojson messages = read_json("messages", *args.get("messages"));
  if (messages.is_object()) {
    for (auto& [key, value] : messages.items()) context[key] = value;
  } else if (messages.is_array()) {
    context["messages"] = std::move(messages);
  } else {
    throw Error("--messages must hold a JSON array of messages");
  }
  if (auto tools = args.get("tools")) context["tools"] = read_json("tools", *tools);
  if (auto extra = args.get("context")) {
    ojson more = read_json("context", *extra);
    if (!more.is_object()) throw Error("--context must hold a JSON object");
    for (auto& [key, value] : more.items()) context[key] = value;
  }

  const auto tpl = chat::Template::parse(src.source);
  const int64_t repeat = args.get_int("bench", 0, 0, 1 << 24);
  std::string text = tpl.render(context);
  if (repeat > 0) {
    // CPU time: a busy machine inflates wall time, not the work a render does.
    const std::clock_t start = std::clock();
    for (int64_t i = 0; i < repeat; ++i) text = tpl.render(context);
    const double spent_us =
        1e6 * static_cast<double>(std::clock() - start) / static_cast<double>(CLOCKS_PER_SEC);
    std::cerr << nlohmann::json{{"renders", repeat},
                                {"cpu_us_per_render", spent_us / static_cast<double>(repeat)},
                                {"bytes", text.size()}}
                     .dump()
              << "\n";
  }
  std::cout << text << std::flush;
  return 0;
}

}  // namespace heron::cli
