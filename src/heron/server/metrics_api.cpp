#include "heron/server/metrics_api.h"

#include <httplib.h>

#include "heron/http/responses.h"
#include "heron/metrics/text_format.h"
#include "heron/server/server_metrics.h"

namespace heron::server {

void install_metrics_route(httplib::Server& server, ServerContext& ctx) {
  server.Get("/metrics", http::guarded([&ctx](const httplib::Request&, httplib::Response& res) {
               const std::string text = ctx.metrics->render(ctx.pool.loaded(), ctx.pool.waiting());
               res.set_content(text, metrics::kTextContentType);
             }));
}

}  // namespace heron::server
