#include "heron/http/request_guard.h"

#include <httplib.h>

#include "heron/http/responses.h"

namespace heron::http {

using httplib::Server;

namespace {

// `curl -d '{...}'`, as Ollama's own examples send requests, labels a JSON body
// application/x-www-form-urlencoded; httplib would parse such a body as a form and refuse
// one over 8 KiB with a 413. Every body here is JSON whatever its label says (as Ollama
// reads it), so the label is corrected before httplib reads the body. The pre-routing
// handler runs on httplib's own non-const Request, so changing it through the reference is
// well defined.
void read_form_body_as_json(const httplib::Request& req) {
  auto& headers = const_cast<httplib::Headers&>(req.headers);
  for (auto [it, end] = headers.equal_range("Content-Type"); it != end; ++it) {
    if (it->second.starts_with("application/x-www-form-urlencoded")) {
      it->second = "application/json";
    }
  }
}

}  // namespace

void install_request_guard(Server& server, GuardConfig config) {
  server.set_payload_max_length(kMaxBodyBytes);
  server.set_pre_routing_handler([config = std::move(config)](const httplib::Request& req,
                                                              httplib::Response& res) {
    read_form_body_as_json(req);
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
