#include "heron/http/request_guard.h"

#include <httplib.h>

#include "heron/http/responses.h"

namespace heron::http {

using httplib::Server;

void install_request_guard(Server& server, GuardConfig config) {
  server.set_payload_max_length(kMaxBodyBytes);
  server.set_pre_routing_handler([config = std::move(config)](const httplib::Request& req,
                                                              httplib::Response& res) {
    const ErrorWriter refuse = config.errors_for ? config.errors_for(req.path) : send_error;
    const auto host = req.get_header_value("Host");
    if (config.check_host && !host_allowed(host, config.machine_name)) {
      refuse(res, 403,
             "Host '" + host +
                 "' is not allowed: heron listens on a loopback address and answers only "
                 "requests addressed to this machine (localhost, 127.0.0.1, [::1]); this "
                 "blocks DNS rebinding");
      return Server::HandlerResponse::Handled;
    }
    if (!req.has_header("Origin")) return Server::HandlerResponse::Unhandled;
    const auto origin = req.get_header_value("Origin");
    if (!config.origins.allowed(origin)) {
      refuse(res, 403,
             "Origin '" + origin +
                 "' is not allowed; add it to HERON_ORIGINS (comma-separated, * wildcards) "
                 "to let that site call heron");
      return Server::HandlerResponse::Handled;
    }
    res.set_header("Access-Control-Allow-Origin", origin);
    res.set_header("Vary", "Origin");
    if (req.method != "OPTIONS") return Server::HandlerResponse::Unhandled;
    res.set_header("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS");
    res.set_header("Access-Control-Allow-Headers",
                   req.has_header("Access-Control-Request-Headers")
                       ? req.get_header_value("Access-Control-Request-Headers")
                       : "Authorization, Content-Type");
    res.set_header("Access-Control-Max-Age", "43200");
    res.status = 204;
    return Server::HandlerResponse::Handled;
  });
}

std::string rejection_message(int status, const std::string& method, const std::string& path) {
  switch (status) {
    case 404:
      return "no such endpoint: " + method + " " + path;
    case 413:
      return "the request body is over the limit of " + std::to_string(kMaxBodyBytes >> 20) +
             " MiB";
    default:
      return "request rejected (HTTP " + std::to_string(status) + ")";
  }
}

}  // namespace heron::http
