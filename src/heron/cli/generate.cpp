// `heron generate`: load a model, answer one prompt, stream the text, print speed.
#include <sys/resource.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "heron/cli/args.h"
#include "heron/cli/commands.h"
#include "heron/core/channel.h"
#include "heron/core/default_model.h"
#include "heron/core/worker.h"
#include "heron/engine/generator.h"
#include "heron/model/loader.h"
#include "heron/runner/cache_setup.h"
#include "heron/runner/draft_setup.h"
#include "heron/spec/cost_file.h"
#include "heron/store/store.h"
#include "heron/template/chat_prompt.h"

namespace heron::cli {

namespace {

const std::vector<FlagSpec> kFlags = {
    {"model", true,
     "GGUF file or Hugging Face directory ('default': SmolLM2-135M; 'gemma3': Gemma 3 270M)"},
    {"prompt", true, "the prompt text"},
    {"prompt-file", true, "read the prompt from a file"},
    {"system", true, "system message (chat mode)"},
    {"max-tokens", true, "most tokens to generate (default 256)"},
    {"temperature", true, "sampling temperature, 0 = greedy (default 0.8)"},
    {"top-k", true, "keep the K most likely tokens, 0 = off (default 0)"},
    {"top-p", true, "nucleus sampling mass in (0, 1] (default 1)"},
    {"seed", true, "random seed for reproducible sampling"},
    {"raw", false, "send the prompt as is (with the tokenizer's BOS), without the chat template"},
    {"ignore-eos", false, "keep generating past end-of-sequence tokens"},
    {"speculation", true, "on or off: speculative decoding (default $HERON_SPECULATION, on)"},
    {"draft", true,
     "a smaller model with the same vocabulary, or a trained draft head's directory, that "
     "drafts for speculative decoding (default: the model's stored draft, else prompt lookup)"},
    {"draft-depth", true,
     "speculate this many tokens every round instead of the depth controller's choice"},
    {"stats-json", false, "print the statistics as one JSON line on stderr"},
    {"dtype", true,
     "compute type: float32, float16 or bfloat16 (default: float32 on the CPU, "
     "the model's 16-bit type on GPUs)"},
    {"help", false, "show this help"},
};

std::string read_prompt(const Args& args) {
  if (args.has("prompt") == args.has("prompt-file")) {
    throw UsageError("give exactly one of --prompt or --prompt-file");
  }
  if (auto p = args.get("prompt")) return *p;
  std::ifstream in(*args.get("prompt-file"), std::ios::binary);
  if (!in) throw UsageError("cannot read --prompt-file '" + *args.get("prompt-file") + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// What the MLX thread streams back: text pieces, then one final event.
struct Event {
  std::string text;
  bool done = false;
  engine::GenerateStats stats = {};
  std::string error = {};
};

Event piece(std::string text) {
  return Event{std::move(text), false};
}

}  // namespace

int run_generate(const std::vector<std::string>& argv) {
  Args args("generate", kFlags, argv);
  if (args.has("help")) {
    std::cout << Args::usage("generate", kFlags);
    return 0;
  }
  if (!args.positional().empty()) {
    throw UsageError("unexpected argument '" + args.positional()[0] + "'");
  }
  const std::string prompt = read_prompt(args);
  engine::GenerateOptions options;
  options.max_tokens = static_cast<int>(args.get_int("max-tokens", 256, 1, 1 << 20));
  options.sampling.temperature = static_cast<float>(args.get_double("temperature", 0.8, 0, 100));
  options.sampling.top_k = static_cast<int>(args.get_int("top-k", 0, 0, 1 << 24));
  options.sampling.top_p = static_cast<float>(args.get_double("top-p", 1.0, 0, 1));
  if (options.sampling.top_p <= 0) throw UsageError("--top-p must be greater than 0");
  if (args.has("seed")) {
    options.sampling.seed = static_cast<uint64_t>(args.get_int("seed", 0, 0, INT64_MAX));
  }
  options.ignore_eos = args.has("ignore-eos");
  std::string model_arg = args.get_or("model", "default");
  const std::filesystem::path model_path = builtin_model_path(model_arg).value_or(model_arg);
  model::LoadOptions load_options;
  if (auto name = args.get("dtype")) {
    load_options.dtype = model::dtype_from_name(*name);
    if (!load_options.dtype) {
      throw UsageError("--dtype must be float32, float16 or bfloat16, not '" + *name + "'");
    }
  }
  bool speculate = true;
  try {
    speculate = spec::speculation_enabled_from_env();
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  if (auto v = args.get("speculation")) {
    if (*v != "on" && *v != "off") throw UsageError("--speculation must be on or off");
    speculate = *v == "on";
  }
  spec::DepthController::Options depth_options;
  if (args.has("draft-depth")) {
    depth_options.fixed_depth = static_cast<int>(args.get_int("draft-depth", 0, 0, 1 << 16));
  }
  std::optional<std::filesystem::path> draft_path;
  if (auto d = args.get("draft")) draft_path = builtin_model_path(*d).value_or(*d);
  if (draft_path && !speculate) throw UsageError("--draft needs speculation on");
  const bool raw = args.has("raw");
  const auto system = args.get("system");

  Channel<Event> events;
  Worker mlx_thread;
  auto job = mlx_thread.submit([&] {
    try {
      auto loaded = model::load_model(model_path, load_options);
      if (!loaded.tokenizer) throw Error(model_path.string() + ": the model has no tokenizer");
      auto& tok = *loaded.tokenizer;
      std::string text = prompt;
      if (!raw) {
        chat::ChatInput input;
        if (system) input.messages.push_back({{"role", "system"}, {"content", *system}});
        input.messages.push_back({{"role", "user"}, {"content", prompt}});
        text = chat::render_chat(chat::ChatFormat::from_tokenizer(tok), input);
      }
      // The template writes its own special tokens (as transformers' apply_chat_template).
      auto ids = tok.encode(text, /*add_special=*/raw, /*parse_special=*/true);
      cache::PrefixCache cache(loaded.model->make_caches(), {});
      std::optional<runner::LoadedDraft> draft;
      if (speculate) {
        draft = runner::load_draft(model_path, *loaded.model, draft_path, load_options);
      }
      runner::Drafters drafters(*loaded.model, draft);
      spec::DepthController controller(depth_options);
      const auto costs =
          spec::cost_file(store::Store::default_root(), runner::speculation_key(model_path, draft));
      try {
        spec::load_costs(costs, controller);
      } catch (const Error& e) {
        std::cerr << "heron: speculation costs start fresh: " << e.what() << std::endl;
      }
      engine::Speculation speculation{drafters.chosen(), controller};
      tokenizer::StreamingDetokenizer detok(tok);
      Event done = piece("");
      done.done = true;
      done.stats = engine::generate(
          *loaded.model, cache, {ids.begin(), ids.end()}, options,
          [&](const engine::TokenStep& step) {
            if (auto out = detok.feed(step.id); !out.empty()) {
              events.push(piece(std::move(out)));
            }
            return engine::Next::Continue;
          },
          speculate ? &speculation : nullptr);
      if (done.stats.speculation.rounds > 0 && !depth_options.fixed_depth) {
        try {
          spec::save_costs(costs, controller);
        } catch (const std::exception& e) {
          std::cerr << "heron: speculation costs not saved: " << e.what() << std::endl;
        }
      }
      done.text = detok.flush();
      events.push(std::move(done));
    } catch (const std::exception& e) {
      Event failed = piece("");
      failed.done = true;
      failed.error = e.what();
      events.push(std::move(failed));
    }
    events.close();
  });

  engine::GenerateStats stats;
  while (auto event = events.pop()) {
    if (!event->error.empty()) throw Error(event->error);
    std::cout << event->text << std::flush;
    if (event->done) stats = event->stats;
  }
  job.get();
  // The answer ends its line before the statistics go to stderr, even on one terminal.
  std::cout << std::endl;

  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double peak_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;
  const double prompt_tps = stats.prompt_tokens / std::max(stats.prompt_seconds, 1e-9);
  const double decode_tps = stats.decode_tokens > 1
                                ? (stats.decode_tokens - 1) / std::max(stats.decode_seconds, 1e-9)
                                : 0.0;
  const auto& spec = stats.speculation;
  if (args.has("stats-json")) {
    nlohmann::json j = {
        {"prompt_tokens", stats.prompt_tokens},
        {"prompt_tps", prompt_tps},
        {"decode_tokens", stats.decode_tokens},
        {"decode_tps", decode_tps},
        {"peak_rss_mib", peak_mib},
        {"done_reason", stats.done_reason},
        {"speculation",
         {{"rounds", spec.rounds}, {"drafted", spec.drafted}, {"accepted", spec.accepted}}}};
    std::cerr << j.dump() << "\n";
  } else {
    std::fprintf(stderr,
                 "prompt: %d tokens, %.1f tokens/s | decode: %d tokens, %.1f tokens/s | "
                 "peak memory %.0f MiB | %s\n",
                 stats.prompt_tokens, prompt_tps, stats.decode_tokens, decode_tps, peak_mib,
                 stats.done_reason.c_str());
    if (spec.rounds > 0) {
      std::fprintf(stderr,
                   "speculation: %d rounds, mean depth %.2f, mean accepted %.2f "
                   "(%.2f tokens per round)\n",
                   spec.rounds, static_cast<double>(spec.drafted) / spec.rounds,
                   static_cast<double>(spec.accepted) / spec.rounds,
                   static_cast<double>(spec.accepted + spec.rounds) / spec.rounds);
    }
  }
  return 0;
}

}  // namespace heron::cli
