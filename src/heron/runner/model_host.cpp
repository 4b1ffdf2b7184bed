#include "heron/runner/model_host.h"

#include <algorithm>
#include <iostream>

#include <mlx/memory.h>

#include "heron/core/error.h"
#include "heron/runner/cache_setup.h"
#include "heron/runner/scripted_output.h"
#include "heron/spec/cost_file.h"
#include "heron/template/chat_prompt.h"

namespace heron::runner {

namespace {

void send_piece(CompletionJob& job, engine::Piece piece) {
  if (piece.empty()) return;
  CompletionEvent e;
  e.piece = std::move(piece);
  job.events.push(std::move(e));
}

// A generated token through the job's emitter (stop strings) to its client.
engine::Next feed(CompletionJob& job, engine::Emitter& emitter, const engine::TokenStep& step) {
  if (job.cancelled) return engine::Next::Cancel;
  send_piece(job, emitter.feed(step));
  return emitter.stopped() ? engine::Next::Stop : engine::Next::Continue;
}

}  // namespace

ModelHost::ModelHost(std::filesystem::path path, int max_queue, int default_context,
                     CacheSettings cache_settings, SpeculationSettings speculation,
                     int num_parallel)
    : path_(std::move(path)),
      max_queue_(max_queue),
      default_context_(default_context),
      cache_settings_(std::move(cache_settings)),
      speculation_(std::move(speculation)),
      num_parallel_(std::max(1, num_parallel)) {
  status_ = {{"state", "loading"}, {"model", path_.string()}};
}

ModelHost::~ModelHost() {
  // MLX arrays are freed on the thread that made them.
  worker_
      .submit([this] {
        scheduler_.reset();
        cache_.reset();
        drafters_.reset();
        draft_.reset();
        loaded_.model.reset();
      })
      .wait();
}

void ModelHost::load() {
  worker_
      .submit([this] {
        loaded_ = model::load_model(path_);
        if (!loaded_.tokenizer) throw Error(path_.string() + ": the model has no tokenizer");
        cache::PrefixCacheOptions options;
        options.memory_budget = cache_settings_.memory.value_or(
            default_cache_memory(loaded_.model->config(), context_length(0)));
        if (cache_settings_.dir) {
          const std::string key = model_cache_key(path_);
          options.disk = std::make_shared<cache::DiskTier>(*cache_settings_.dir / key, key,
                                                           cache_settings_.disk);
        }
        cache_ =
            std::make_unique<cache::PrefixCache>(loaded_.model->make_caches(), std::move(options));
        chat_format_ = chat::ChatFormat::from_tokenizer(*loaded_.tokenizer).to_json();
        grammars_ = std::make_unique<OutputGrammars>(*loaded_.tokenizer,
                                                     loaded_.model->config().eos_token_ids);
        if (speculation_.enabled) {
          draft_ = load_draft(path_, *loaded_.model, std::nullopt, {});
          drafters_.emplace(*loaded_.model, draft_);
        }
        if (speculation_.enabled && speculation_.store_root) {
          costs_file_ = spec::cost_file(*speculation_.store_root, speculation_key(path_, draft_));
          try {
            spec::load_costs(*costs_file_, controller_);
          } catch (const Error& e) {
            std::cerr << "heron runner: speculation costs start fresh: " << e.what() << std::endl;
          }
        }
        if (num_parallel_ > 1) {
          // Rows' caches are accounted against what memory is left after the weights.
          const engine::RowMemory memory{default_batch_memory(),
                                         cache_bytes_per_token(loaded_.model->config())};
          scheduler_ = std::make_unique<engine::Scheduler>(*loaded_.model, num_parallel_,
                                                           /*prefill_budget=*/512, memory);
        }
        refresh_status("ready");
      })
      .get();
}

int ModelHost::vocab_size() const {
  return loaded_.model->config().vocab_size;
}

int ModelHost::context_length(int requested) const {
  const int trained = loaded_.model->config().max_position_embeddings;
  return std::min(requested > 0 ? requested : default_context_, trained);
}

bool ModelHost::submit(std::shared_ptr<CompletionJob> job) {
  if (queued_.fetch_add(1) >= max_queue_) {
    --queued_;
    return false;
  }
  ++waiting_;
  if (num_parallel_ > 1 && !scripted_output_) {
    {
      std::lock_guard lock(arrivals_mu_);
      arrivals_.push_back(std::move(job));
    }
    worker_.submit([this] { pump(); });
    return true;
  }
  worker_.submit([this, job = std::move(job)] {
    --waiting_;
    run(*job);
    refresh_status("ready");
  });
  return true;
}

nlohmann::json ModelHost::status() const {
  std::lock_guard lock(status_mu_);
  auto s = status_;
  s["queued"] = queued_.load();
  s["waiting"] = waiting_.load();
  return s;
}

void ModelHost::refresh_status(const char* state) {
  const auto& config = loaded_.model->config();
  nlohmann::json s = {
      {"state", state},
      {"model", path_.string()},
      {"architecture", config.architecture},
      {"capabilities", {"completion"}},
      {"context_length", context_length(0)},
      {"trained_context_length", config.max_position_embeddings},
      {"vocab_size", config.vocab_size},
      {"memory",
       {{"active", mlx::core::get_active_memory()}, {"peak", mlx::core::get_peak_memory()}}},
      {"cache", cache_json(cache_->stats())},
      {"chat_template", loaded_.tokenizer->chat_template()},
      {"chat", chat_format_},
  };
  std::lock_guard lock(status_mu_);
  status_ = std::move(s);
}

void ModelHost::save_costs() {
  if (!costs_file_) return;
  try {
    spec::save_costs(*costs_file_, controller_);
  } catch (const std::exception& e) {
    std::cerr << "heron runner: speculation costs not saved: " << e.what() << std::endl;
  }
}

void ModelHost::finish(CompletionJob& job, CompletionEvent last) {
  // The queue place frees before the client can see the end: a client that sends its next
  // request as soon as this one ends must find room.
  --queued_;
  job.events.push(std::move(last));
}

void ModelHost::done(CompletionJob& job, engine::GenerateStats stats) {
  CompletionEvent e;
  e.kind = CompletionEvent::Kind::Done;
  e.stats = std::move(stats);
  finish(job, std::move(e));
}

void ModelHost::fail(CompletionJob& job, const std::exception& error) {
  CompletionEvent e;
  e.kind = CompletionEvent::Kind::Error;
  e.status = dynamic_cast<const engine::NoRoom*>(&error) ? 503
             : dynamic_cast<const Error*>(&error)        ? 400
                                                         : 500;
  e.message = error.what();
  finish(job, std::move(e));
}

void ModelHost::run(CompletionJob& job) {
  if (job.cancelled) {  // the client left while queued
    done(job, {.done_reason = "cancelled"});
    return;
  }
  refresh_status("busy");
  try {
    engine::Emitter emitter(*loaded_.tokenizer, job.stop);
    auto options = job.options;
    options.cancelled = [&job] { return job.cancelled.load(); };
    std::optional<engine::Speculation> speculation;
    if (drafters_) speculation.emplace(engine::Speculation{drafters_->chosen(), controller_});
    auto on_token = [&](const engine::TokenStep& step) { return feed(job, emitter, step); };
    auto stats = scripted_output_
                     ? emit_scripted_output(*scripted_output_, *loaded_.tokenizer,
                                            static_cast<int>(job.prompt.size()), options, on_token)
                     : engine::generate(*loaded_.model, *cache_, job.prompt, options, on_token,
                                        speculation ? &*speculation : nullptr);
    if (stats.done_reason != "cancelled") send_piece(job, emitter.finish());
    const bool speculated = stats.speculation.rounds > 0;
    done(job, std::move(stats));
    if (speculated) save_costs();
  } catch (const std::exception& e) {
    fail(job, e);
  }
  // After the answer has gone: the disk tier's copy of this conversation. A failing disk
  // costs the copy, never a request.
  try {
    cache_->persist();
  } catch (const std::exception& e) {
    std::cerr << "heron runner: the prefix cache's disk tier: " << e.what() << std::endl;
  }
}

void ModelHost::pump() {
  bool busy = false;
  for (;;) {
    std::vector<std::shared_ptr<CompletionJob>> arrived;
    {
      std::lock_guard lock(arrivals_mu_);
      arrived.swap(arrivals_);
    }
    for (const auto& job : arrived) join(job);
    if (scheduler_->idle()) break;
    if (!busy) refresh_status("busy");
    busy = true;
    scheduler_->step();
  }
  if (busy) refresh_status("ready");
}

void ModelHost::join(const std::shared_ptr<CompletionJob>& job) {
  --waiting_;
  if (job->cancelled) {  // the client left while queued
    done(*job, {.done_reason = "cancelled"});
    return;
  }
  auto emitter = std::make_shared<engine::Emitter>(*loaded_.tokenizer, job->stop);
  engine::RowRequest row;
  row.prompt = job->prompt;
  row.options = job->options;
  row.options.cancelled = [job] { return job->cancelled.load(); };
  row.on_token = [job, emitter](const engine::TokenStep& step) {
    return feed(*job, *emitter, step);
  };
  row.on_done = [this, job, emitter](const engine::GenerateStats& stats) {
    if (stats.done_reason != "cancelled") send_piece(*job, emitter->finish());
    done(*job, stats);
  };
  row.on_error = [this, job](const std::exception& e) { fail(*job, e); };
  try {
    scheduler_->add(std::move(row));
  } catch (const std::exception& e) {
    fail(*job, e);
  }
}

}  // namespace heron::runner
