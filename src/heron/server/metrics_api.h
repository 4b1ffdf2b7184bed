#pragma once
// GET /metrics: ServerMetrics in Prometheus' text format, the loaded models read from the
// pool at scrape time. The request guard applies as to every route. ctx.metrics must be set.
#include "heron/server/context.h"

namespace httplib {
class Server;
}

namespace heron::server {

void install_metrics_route(httplib::Server& server, ServerContext& ctx);

}  // namespace heron::server
