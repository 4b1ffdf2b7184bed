#pragma once
// What every API handler shares.
#include "heron/server/keep_alive.h"
#include "heron/server/model_resolver.h"
#include "heron/server/runner_pool.h"

namespace heron::server {

class ServerMetrics;

struct ServerContext {
  RunnerPool& pool;
  const ModelResolver& resolver;
  KeepAlive default_keep_alive;
  ServerMetrics* metrics = nullptr;  // null: nothing is recorded (tests of request parsing)
};

}  // namespace heron::server
