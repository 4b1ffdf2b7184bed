#pragma once
// Small helpers shared by the runner's and the server's handlers.
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace heron::http {

using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;
// How an error becomes a response body: {"error": "..."} unless an API says otherwise.
using ErrorWriter = std::function<void(httplib::Response&, int status, const std::string&)>;

void send_json(httplib::Response& res, const nlohmann::json& body, int status = 200);
void send_error(httplib::Response& res, int status, const std::string& message);

// Runs `handler`, turning an HttpError into its status, another heron::Error into 400
// and anything else into 500, written by `write_error`.
Handler guarded(Handler handler, ErrorWriter write_error = send_error);

// Compares secrets in time independent of where they differ.
bool equal_secret(const std::string& a, const std::string& b);

}  // namespace heron::http
