#include "controller/http_server.h"

#include <sys/socket.h>

#include <chrono>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/token.h"
#include "httplib.h"

namespace fleetbench::controller {
namespace {

// "host:port" or "[v6]:port" -> host and port.
absl::Status SplitListen(const std::string& listen, std::string* host, int* port) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == listen.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--http-listen wants HOST:PORT, e.g. 127.0.0.1:9464; got ", listen));
  }
  *host = listen.substr(0, colon);
  if (host->size() >= 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);
  }
  if (!absl::SimpleAtoi(listen.substr(colon + 1), port) || *port < 0 || *port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("--http-listen: the port of ", listen, " is not 0..65535"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    const HttpServerOptions& options, std::map<std::string, HttpHandler> routes) {
  if (options.authenticator == nullptr) {
    return absl::InvalidArgumentError("the HTTP server needs an authenticator");
  }
  std::string host;
  int port = 0;
  if (absl::Status s = SplitListen(options.listen, &host, &port); !s.ok()) return s;

  std::unique_ptr<HttpServer> server(new HttpServer);
  server->routes_ = std::move(routes);
  server->server_ = std::make_unique<httplib::Server>();
  httplib::Server& http = *server->server_;
  const int threads = options.threads > 0 ? options.threads : 1;
  http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  http.set_payload_max_length(options.max_request_bytes);
  http.set_read_timeout(std::chrono::milliseconds(absl::ToInt64Milliseconds(options.read_timeout)));
  http.set_write_timeout(
      std::chrono::milliseconds(absl::ToInt64Milliseconds(options.write_timeout)));
  // httplib's default sets SO_REUSEPORT, with which a second controller
  // binds the same port and the kernel splits scrapes between the two:
  // SO_REUSEADDR only (a restart still rebinds past TIME_WAIT), so a taken
  // port is an error.
  http.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  http.set_keep_alive_max_count(100);
  http.set_keep_alive_timeout(5);

  const Authenticator* authenticator = options.authenticator;
  // Before any route: the method, then the token.
  http.set_pre_routing_handler([authenticator](const httplib::Request& req,
                                               httplib::Response& res) {
    if (req.method != "GET" && req.method != "HEAD") {
      res.status = 405;
      res.set_header("Allow", "GET, HEAD");
      res.set_content("only GET and HEAD are served\n", "text/plain; charset=utf-8");
      return httplib::Server::HandlerResponse::Handled;
    }
    const std::string header = req.get_header_value("Authorization");
    if (header.empty()) {
      res.status = 401;
      res.set_header("WWW-Authenticate", "Bearer realm=\"fleetbench\"");
      res.set_content("missing token: send Authorization: Bearer <token>\n",
                      "text/plain; charset=utf-8");
      return httplib::Server::HandlerResponse::Handled;
    }
    absl::StatusOr<Principal> who =
        authenticator->Authenticate(TokenFromAuthorizationHeader(header));
    if (!who.ok()) {
      res.status = 401;
      res.set_header("WWW-Authenticate", "Bearer realm=\"fleetbench\"");
      res.set_content(absl::StrCat(who.status().message(), "\n"), "text/plain; charset=utf-8");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (!RoleAllows(who->role, Role::kViewer)) {
      res.status = 403;
      res.set_content(absl::StrCat("'", who->name, "' is ", RoleName(who->role),
                                   "; pages need viewer\n"),
                      "text/plain; charset=utf-8");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  HttpServer* self = server.get();
  http.Get(".*", [self](const httplib::Request& req, httplib::Response& res) {
    auto route = self->routes_.find(req.path);
    if (route == self->routes_.end()) {
      res.status = 404;
      res.set_content(absl::StrCat("no page at ", req.path.substr(0, 200), "\n"),
                      "text/plain; charset=utf-8");
      return;
    }
    HttpRequest request;
    request.path = req.path;
    for (const auto& [key, value] : req.params) request.params.emplace(key, value);
    HttpReply reply = route->second(request);
    res.status = reply.status;
    res.set_content(reply.body, reply.content_type);
  });

  if (port == 0) {
    port = http.bind_to_any_port(host);
    if (port <= 0) {
      return absl::UnavailableError(absl::StrCat("cannot listen on ", options.listen));
    }
  } else if (!http.bind_to_port(host, port)) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", options.listen));
  }
  server->port_ = port;
  // Bound: connections wait in the backlog until the listener accepts them.
  server->listener_ = std::thread([self] {
    self->server_->listen_after_bind();
    self->listener_done_ = true;
  });
  // httplib's stop() does nothing before the accept loop runs: wait for it,
  // so a Shutdown right after Start cannot leave the listener running.
  const absl::Time give_up = absl::Now() + absl::Seconds(10);
  while (!http.is_running() && !server->listener_done_ && absl::Now() < give_up) {
    std::this_thread::yield();
  }
  if (!http.is_running()) {
    return absl::UnavailableError(absl::StrCat("cannot serve HTTP on ", options.listen));
  }
  return server;
}

HttpServer::~HttpServer() { Shutdown(); }

void HttpServer::Shutdown() {
  if (server_) server_->stop();
  if (listener_.joinable()) listener_.join();
}

}  // namespace fleetbench::controller
