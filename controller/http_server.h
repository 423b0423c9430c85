// controller/http_server.h — the controller's HTTP side (`fleetbench
// controller --http-listen ADDR:PORT`): /metrics today, the dashboard's
// pages later, each a route given at Start.
//
// Contract: GET (and HEAD) only, any other method 405; every request must
// carry "Authorization: Bearer <token>" that the Authenticator the gRPC API
// uses (controller/auth.h) accepts as a viewer or above, else 401 (403 for
// an enroll token) before any route runs, so nobody
// unauthenticated reads fleet data. Requests are bounded: headers and URI by
// cpp-httplib's limits (8 KiB each), a body by max_request_bytes (413), slow
// clients by read_timeout. An unknown path is 404.
//
// Threading: routes run on the server's worker threads (`threads` of
// them), several at once; a route must be thread-safe and must not block on
// FleetCore's actor past its own deadline. cpp-httplib stays inside
// http_server.cc.
#ifndef FLEETBENCH_CONTROLLER_HTTP_SERVER_H_
#define FLEETBENCH_CONTROLLER_HTTP_SERVER_H_

#include <atomic>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "controller/auth.h"

namespace httplib {
class Server;
}

namespace fleetbench::controller {

struct HttpRequest {
  std::string path;
  // The query's parameters, decoded.
  std::multimap<std::string, std::string> params;
};

struct HttpReply {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

using HttpHandler = std::function<HttpReply(const HttpRequest&)>;

struct HttpServerOptions {
  std::string listen;  // host:port, [v6]:port; port 0 picks a free one
  const Authenticator* authenticator = nullptr;  // required; outlives the server
  int threads = 4;
  size_t max_request_bytes = 4096;
  absl::Duration read_timeout = absl::Seconds(10);
  absl::Duration write_timeout = absl::Seconds(30);
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

  std::unique_ptr<httplib::Server> server_;
  std::map<std::string, HttpHandler> routes_;
  std::thread listener_;
  std::atomic<bool> listener_done_{false};
  int port_ = 0;
};

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_HTTP_SERVER_H_
