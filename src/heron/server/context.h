#pragma once
// What every API handler shares.
#include "heron/server/keep_alive.h"
#include "heron/server/model_resolver.h"
#include "heron/server/runner_pool.h"

namespace heron::server {

struct ServerContext {
  RunnerPool& pool;
  const ModelResolver& resolver;
  KeepAlive default_keep_alive;
};

}  // namespace heron::server
