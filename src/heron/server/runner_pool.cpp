#include "heron/server/runner_pool.h"

#include <httplib.h>

#include "heron/http/http_error.h"
#include "heron/server/model_footprint.h"

namespace heron::server {

namespace {

nlohmann::json fetch_status(RunnerProcess& p) {
  httplib::Client client("127.0.0.1", p.port());
  client.set_read_timeout(30, 0);
  auto res = client.Get("/status", {{"Authorization", "Bearer " + p.token()}});
  if (!res || res->status != 200) {
    throw http::HttpError(500, "the model runner did not answer /status");
  }
  return nlohmann::json::parse(res->body);
}

// Each runner's /status as it is now (it never waits for the model); null for a runner
// that just stopped.
std::vector<nlohmann::json> fresh_statuses(
    const std::vector<std::shared_ptr<RunnerProcess>>& processes) {
  std::vector<nlohmann::json> out(processes.size());
  for (size_t i = 0; i < processes.size(); ++i) {
    try {
      out[i] = fetch_status(*processes[i]);
    } catch (const std::exception&) {
    }
  }
  return out;
}

// Counts a request as waiting while it is inside acquire.
class WaitingCount {
 public:
  explicit WaitingCount(std::atomic<int>& n) : n_(n) { ++n_; }
  ~WaitingCount() { --n_; }
  WaitingCount(const WaitingCount&) = delete;
  WaitingCount& operator=(const WaitingCount&) = delete;

 private:
  std::atomic<int>& n_;
};

bool expired(const RunnerSlot& s, Clock::time_point now) {
  return s.active == 0 && !s.keep_alive.forever && now >= s.last_used + s.keep_alive.duration;
}

}  // namespace

Lease::Lease(RunnerPool& pool, std::shared_ptr<RunnerSlot> slot, KeepAlive keep_alive,
             double load_seconds)
    : pool_(pool), slot_(std::move(slot)), keep_alive_(keep_alive), load_seconds_(load_seconds) {
  std::lock_guard lock(pool_.mu_);
  process_ = slot_->process;
  status_ = slot_->status;
}

Lease::~Lease() {
  pool_.release(slot_, keep_alive_);
}

RunnerPool::RunnerPool(PoolConfig config)
    : config_(std::move(config)), reaper_([this] { reap_loop(); }) {}

RunnerPool::~RunnerPool() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  reaper_.join();
  std::lock_guard lock(mu_);
  slots_.clear();  // kills the runners
}

std::unique_ptr<Lease> RunnerPool::acquire(const ResolvedModel& model, KeepAlive keep_alive) {
  const WaitingCount waiting(waiting_);
  const std::string key = model.path.string();
  std::shared_ptr<RunnerSlot> slot;
  {
    std::unique_lock lock(mu_);
    if (!slots_.count(key)) {
      make_room_locked(lock, model, model.weight_bytes);
      auto& s = slots_[key];  // another request may have started it while we waited
      if (!s) {
        s = std::make_shared<RunnerSlot>();
        s->model = model;
        s->bytes = model.weight_bytes;
      }
    }
    slot = slots_[key];
    ++slot->active;
  }
  double load_seconds = 0;
  try {
    std::lock_guard start(slot->start_mu);
    std::shared_ptr<RunnerProcess> current;
    {
      std::lock_guard lock(mu_);
      current = slot->process;
    }
    if (!current || !current->alive()) {
      const auto t0 = Clock::now();
      auto process = std::make_shared<RunnerProcess>(config_.exe, model.path, config_.max_queue,
                                                     config_.load_timeout);
      auto status = std::make_shared<const nlohmann::json>(fetch_status(*process));
      load_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      const uint64_t reported =
          status->value("memory", nlohmann::json::object()).value("active", uint64_t{0});
      std::lock_guard lock(mu_);
      slot->bytes = std::max(slot->bytes, reported);
      slot->process = std::move(process);
      slot->status = std::move(status);
    }
  } catch (...) {
    std::lock_guard lock(mu_);
    --slot->active;
    auto it = slots_.find(key);
    if (it != slots_.end() && it->second == slot && slot->active == 0) slots_.erase(it);
    cv_.notify_all();
    throw;
  }
  return std::make_unique<Lease>(*this, slot, keep_alive, load_seconds);
}

void RunnerPool::release(const std::shared_ptr<RunnerSlot>& slot, KeepAlive keep_alive) {
  std::shared_ptr<RunnerSlot> doomed;  // destroyed (runner stopped) outside the lock
  {
    std::lock_guard lock(mu_);
    --slot->active;
    slot->keep_alive = keep_alive;
    slot->last_used = Clock::now();
    if (expired(*slot, slot->last_used)) {
      auto it = slots_.find(slot->model.path.string());
      if (it != slots_.end() && it->second == slot) {
        doomed = it->second;
        slots_.erase(it);
      }
    }
  }
  cv_.notify_all();
}

void RunnerPool::unload(const ResolvedModel& model) {
  std::shared_ptr<RunnerSlot> doomed;
  std::lock_guard lock(mu_);
  auto it = slots_.find(model.path.string());
  if (it == slots_.end()) return;
  it->second->keep_alive = {false, std::chrono::milliseconds(0)};
  if (it->second->active == 0) {
    doomed = it->second;
    slots_.erase(it);
  }
}

void RunnerPool::make_room_locked(std::unique_lock<std::mutex>& lock, const ResolvedModel& model,
                                  uint64_t bytes) {
  const uint64_t limit = config_.max_memory;
  if (limit && bytes > limit) {
    throw http::HttpError(500, "model '" + model.name + "' needs about " + format_bytes(bytes) +
                                   " of memory but at most " + format_bytes(limit) +
                                   " may be used (HERON_MAX_MEMORY)");
  }
  const auto deadline = Clock::now() + config_.load_timeout;
  for (;;) {
    uint64_t used = 0;
    for (const auto& [path, s] : slots_) used += s->bytes;
    if (slots_.size() < config_.max_loaded && (!limit || used + bytes <= limit)) return;
    if (evict_lru_locked()) continue;
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout) {
      throw http::HttpError(
          503, "no room to load '" + model.name + "': " + std::to_string(slots_.size()) +
                   " busy model(s) hold " + format_bytes(used) + " of " +
                   (limit ? format_bytes(limit) : std::string("memory")) + "; try again later");
    }
  }
}

bool RunnerPool::evict_lru_locked() {
  auto victim = slots_.end();
  for (auto it = slots_.begin(); it != slots_.end(); ++it) {
    if (it->second->active > 0) continue;
    if (victim == slots_.end() || it->second->last_used < victim->second->last_used) victim = it;
  }
  if (victim == slots_.end()) return false;
  slots_.erase(victim);
  return true;
}

nlohmann::json RunnerPool::ps() {
  auto models = nlohmann::json::array();
  std::vector<std::shared_ptr<RunnerProcess>> processes;
  {
    std::lock_guard lock(mu_);
    list_locked(models, processes);
  }
  const auto statuses = fresh_statuses(processes);
  for (size_t i = 0; i < statuses.size(); ++i) {
    if (!statuses[i].is_object()) continue;
    models[i]["prefix_cache"] = statuses[i].value("cache", nlohmann::json());
    // Of the active requests, those the runner has accepted and not started.
    models[i]["requests"]["waiting"] = statuses[i].value("waiting", 0);
  }
  return {{"models", models}};
}

std::vector<RunnerPool::Loaded> RunnerPool::loaded() {
  std::vector<Loaded> out;
  std::vector<std::shared_ptr<RunnerProcess>> processes;
  {
    std::lock_guard lock(mu_);
    for (const auto& [path, s] : slots_) {
      if (!s->process || !s->status) continue;
      out.push_back({s->model.name, s->bytes, nullptr});
      processes.push_back(s->process);
    }
  }
  auto statuses = fresh_statuses(processes);
  for (size_t i = 0; i < out.size(); ++i) out[i].status = std::move(statuses[i]);
  return out;
}

void RunnerPool::list_locked(nlohmann::json& models,
                             std::vector<std::shared_ptr<RunnerProcess>>& processes) {
  const auto now_sys = std::chrono::system_clock::now();
  const auto now = Clock::now();
  for (const auto& [path, s] : slots_) {
    if (!s->process || !s->status) continue;
    const auto& status = *s->status;
    nlohmann::json m = {
        {"name", s->model.name},
        {"model", s->model.name},
        {"size", status.value("memory", nlohmann::json::object()).value("active", uint64_t{0})},
        {"size_vram", 0},
        {"context_length", status.value("context_length", 0)},
        // heron's addition: requests holding the model now (running, queued in its runner,
        // or waiting for it to load).
        {"requests", {{"active", s->active}}},
        {"details",
         {{"format", path.ends_with(".gguf") ? "gguf" : "safetensors"},
          {"family", status.value("architecture", "")}}}};
    if (s->keep_alive.forever) {
      m["expires_at"] = "2318-01-01T00:00:00Z";
    } else {
      auto left =
          s->active > 0 ? s->keep_alive.duration : s->last_used + s->keep_alive.duration - now;
      auto at = std::chrono::system_clock::to_time_t(
          now_sys + std::chrono::duration_cast<std::chrono::system_clock::duration>(left));
      char buf[32];
      std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&at));
      m["expires_at"] = buf;
    }
    models.push_back(std::move(m));
    processes.push_back(s->process);
  }
}

void RunnerPool::reap_loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, std::chrono::milliseconds(250));
    std::vector<std::shared_ptr<RunnerSlot>> doomed;
    const auto now = Clock::now();
    for (auto it = slots_.begin(); it != slots_.end();) {
      if (expired(*it->second, now) && it->second->process) {
        doomed.push_back(it->second);
        it = slots_.erase(it);
      } else {
        ++it;
      }
    }
    lock.unlock();
    doomed.clear();  // stops the runners without holding the lock
    lock.lock();
  }
}

}  // namespace heron::server
