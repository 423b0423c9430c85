// controller/http/http_server.h — the controller's HTTP side (`fleetbench
// controller --http-listen ADDR:PORT`): /metrics and the dashboard's pages
// (controller/http/dashboard/), each a route given at Start.
//
// Contract: GET (and HEAD) only, any other method 405 — except POST /login
// when browser login is on (login_page set), the one form the server takes.
// Every request is authenticated before any route runs, so nobody
// unauthenticated reads fleet data: "Authorization: Bearer <token>", or the
// session cookie a browser got from POST /login, must stand for a viewer or
// above by the Authenticator the gRPC API uses (controller/security/auth.h). Else
// 401 (403 for an enroll token); an anonymous request for a page_paths
// route is sent to /login instead (303), and an unknown path stays 401 for
// it. Only open_paths are served without a token (/metrics with
// `--metrics-open`, which the caller logs as a warning).
//
// Browser login: GET /login is the form; POST /login (a body of at most
// max_request_bytes) authenticates the token, then sets the cookie
// `fleetbench_session` (a random id kept server-side with the token;
// HttpOnly, SameSite=Strict, Path=/, Max-Age = session_lifetime) and sends
// the browser to `next` (a local path only); a refused token is 401 with the
// form again. Every request with the cookie authenticates the token again,
// so a revoked token ends its sessions. Sessions live in memory: a
// controller restart logs every browser out. GET /logout ends the session.
// No Secure flag: the HTTP server speaks plain HTTP; put it behind TLS (a
// proxy) when the network is not trusted.
//
// Requests are bounded: headers and URI by
// cpp-httplib's limits (8 KiB each), a body by max_request_bytes (413), slow
// clients by read_timeout. An unknown path is 404.
//
// Threading: routes run on the server's worker threads (`threads` of
// them), several at once; a route must be thread-safe and must not block on
// FleetCore's actor past its own deadline. cpp-httplib stays inside
// http_server.cc.
#ifndef FLEETBENCH_CONTROLLER_HTTP_HTTP_SERVER_H_
#define FLEETBENCH_CONTROLLER_HTTP_HTTP_SERVER_H_

#include <atomic>
#include <cstddef>
#include <functional>
#include <map>
#include <set>
#include <memory>
#include <string>
#include <thread>
#include <variant>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "controller/security/auth.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}

namespace fleetbench::controller {

class HttpSessions;

struct HttpRequest {
  std::string path;
  // The query's parameters, decoded.
  std::multimap<std::string, std::string> params;
  // Who asked; an empty name on an open path asked without a token.
  Principal principal;
};

struct HttpReply {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::string location;  // a Location header (a 303 to another page)
};

using HttpHandler = std::function<HttpReply(const HttpRequest&)>;

struct HttpServerOptions {
  std::string listen;  // host:port, [v6]:port; port 0 picks a free one
  const Authenticator* authenticator = nullptr;  // required; outlives the server
  int threads = 4;
  size_t max_request_bytes = 4096;
  absl::Duration read_timeout = absl::Seconds(10);
  absl::Duration write_timeout = absl::Seconds(30);
  // Browser login (the dashboard): the login form's HTML given an error
  // line (text, "" for none) and the local path to go to after it. Null:
  // no /login, bearer tokens only.
  std::function<std::string(absl::string_view error, absl::string_view next)> login_page;
  absl::Duration session_lifetime = absl::Hours(12);
  size_t max_sessions = 10000;
  // Routes an anonymous request is sent to /login from (with login_page).
  std::set<std::string> page_paths;
  // Routes served without any token.
  std::set<std::string> open_paths;
};

class HttpServer {
 public:
  // Binds, then serves `routes` (exact paths, "/metrics") on its own
  // threads. INVALID_ARGUMENT for a bad address or no token, UNAVAILABLE
  // when the address cannot be bound.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(
      const HttpServerOptions& options, std::map<std::string, HttpHandler> routes);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const { return port_; }
  // Stops accepting and waits for the listener. Idempotent.
  void Shutdown();

 private:
  HttpServer() = default;
  // The principal behind a request's bearer header or session cookie, or
  // why there is none (one line); `from_cookie` says the cookie was used.
  std::variant<Principal, std::string> Identify(const httplib::Request& req, bool* from_cookie);
  void HandleGet(const httplib::Request& req, httplib::Response& res);
  void HandleLoginPost(const httplib::Request& req, httplib::Response& res);

  std::unique_ptr<httplib::Server> server_;
  HttpServerOptions options_;
  std::unique_ptr<HttpSessions> sessions_;
  std::map<std::string, HttpHandler> routes_;
  std::thread listener_;
  std::atomic<bool> listener_done_{false};
  int port_ = 0;
};

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_HTTP_HTTP_SERVER_H_
