#include "controller/http/http_server.h"

#include <sys/socket.h>

#include <cctype>
#include <chrono>
#include <optional>
#include <variant>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/token.h"
#include "controller/http/http_sessions.h"
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

  server->options_ = options;
  server->sessions_ =
      std::make_unique<HttpSessions>(options.session_lifetime, options.max_sessions);
  HttpServer* self = server.get();
  const bool login = static_cast<bool>(options.login_page);
  // Before any route: the method. POST reaches only /login (its handler
  // reads the bounded body).
  http.set_pre_routing_handler([login](const httplib::Request& req, httplib::Response& res) {
    const bool post_login = login && req.method == "POST" && req.path == "/login";
    if (req.method != "GET" && req.method != "HEAD" && !post_login) {
      res.status = 405;
      res.set_header("Allow", login && req.path == "/login" ? "GET, HEAD, POST" : "GET, HEAD");
      res.set_content("only GET and HEAD are served\n", "text/plain; charset=utf-8");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  if (login) {
    http.Post("/login", [self](const httplib::Request& req, httplib::Response& res) {
      self->HandleLoginPost(req, res);
    });
  }
  http.Get(".*", [self](const httplib::Request& req, httplib::Response& res) {
    self->HandleGet(req, res);
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


namespace {

constexpr char kSessionCookie[] = "fleetbench_session";
constexpr char kText[] = "text/plain; charset=utf-8";
constexpr char kHtml[] = "text/html; charset=utf-8";

// Where to go after logging in: a local path only (no "//host", no scheme,
// no control characters), else "/".
std::string LocalPath(const std::string& next) {
  if (next.empty() || next.size() > 1024 || next[0] != '/' ||
      (next.size() > 1 && (next[1] == '/' || next[1] == '\\'))) {
    return "/";
  }
  for (unsigned char c : next) {
    if (c < 0x20 || c >= 0x7f || c == '\\') return "/";
  }
  return next;
}

std::string PercentEncode(const std::string& text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '/') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

void Unauthorized(const std::string& why, httplib::Response& res) {
  res.status = 401;
  res.set_header("WWW-Authenticate", "Bearer realm=\"fleetbench\"");
  res.set_content(absl::StrCat(why, "\n"), kText);
}

std::string SessionCookie(const std::string& id, absl::Duration lifetime) {
  return absl::StrCat(kSessionCookie, "=", id, "; Max-Age=", absl::ToInt64Seconds(lifetime),
                      "; Path=/; HttpOnly; SameSite=Strict");
}

}  // namespace

std::variant<Principal, std::string> HttpServer::Identify(const httplib::Request& req,
                                                         bool* from_cookie) {
  *from_cookie = false;
  const std::string header = req.get_header_value("Authorization");
  std::string token;
  std::string session;
  if (!header.empty()) {
    token = TokenFromAuthorizationHeader(header);
  } else if (options_.login_page) {
    session = CookieValue(req.get_header_value("Cookie"), kSessionCookie);
    if (!session.empty()) {
      std::optional<std::string> stored = sessions_->TokenOf(session, absl::Now());
      if (!stored) return std::string("your session ended: log in again");
      token = *stored;
      *from_cookie = true;
    }
  }
  if (header.empty() && token.empty()) {
    return std::string("missing token: send Authorization: Bearer <token>");
  }
  absl::StatusOr<Principal> who = options_.authenticator->Authenticate(token);
  if (!who.ok()) {
    // A revoked or expired token ends the sessions that stand for it.
    if (!session.empty()) sessions_->Remove(session);
    return std::string(who.status().message());
  }
  return *who;
}

void HttpServer::HandleGet(const httplib::Request& req, httplib::Response& res) {
  const bool login = static_cast<bool>(options_.login_page);
  if (login && req.path == "/login") {
    res.set_content(options_.login_page("", LocalPath(req.get_param_value("next"))), kHtml);
    return;
  }
  if (login && req.path == "/logout") {
    const std::string id = CookieValue(req.get_header_value("Cookie"), kSessionCookie);
    if (!id.empty()) sessions_->Remove(id);
    res.status = 303;
    res.set_header("Location", "/login");
    res.set_header("Set-Cookie", SessionCookie("", absl::ZeroDuration()));
    return;
  }
  auto route = routes_.find(req.path);
  HttpRequest request;
  request.path = req.path;
  if (route == routes_.end() || !options_.open_paths.contains(req.path)) {
    bool from_cookie = false;
    std::variant<Principal, std::string> who = Identify(req, &from_cookie);
    if (const std::string* why = std::get_if<std::string>(&who)) {
      if (login && route != routes_.end() && options_.page_paths.contains(req.path)) {
        // A browser: to the form, and back here after it.
        std::string target = req.path;
        if (!req.params.empty()) {
          std::string query;
          for (const auto& [key, value] : req.params) {
            absl::StrAppend(&query, query.empty() ? "?" : "&", PercentEncode(key), "=",
                            PercentEncode(value));
          }
          target += query;
        }
        res.status = 303;
        res.set_header("Location", "/login?next=" + PercentEncode(target));
        if (from_cookie || !req.get_header_value("Cookie").empty()) {
          res.set_header("Set-Cookie", SessionCookie("", absl::ZeroDuration()));
        }
        res.set_content(absl::StrCat(*why, "\n"), kText);
        return;
      }
      Unauthorized(*why, res);
      return;
    }
    request.principal = std::get<Principal>(who);
    if (!RoleAllows(request.principal.role, Role::kViewer)) {
      res.status = 403;
      res.set_content(absl::StrCat("'", request.principal.name, "' is ",
                                   RoleName(request.principal.role), "; pages need viewer\n"),
                      kText);
      return;
    }
  }
  if (route == routes_.end()) {
    res.status = 404;
    res.set_content(absl::StrCat("no page at ", req.path.substr(0, 200), "\n"), kText);
    return;
  }
  for (const auto& [key, value] : req.params) request.params.emplace(key, value);
  HttpReply reply = route->second(request);
  res.status = reply.status;
  if (!reply.location.empty()) res.set_header("Location", reply.location);
  res.set_content(reply.body, reply.content_type);
}

void HttpServer::HandleLoginPost(const httplib::Request& req, httplib::Response& res) {
  const std::string next = LocalPath(req.get_param_value("next"));
  const std::string token = req.get_param_value("token");
  if (token.empty()) {
    res.status = 400;
    res.set_content(options_.login_page("no token given", next), kHtml);
    return;
  }
  absl::StatusOr<Principal> who = options_.authenticator->Authenticate(token);
  if (!who.ok()) {
    res.status = 401;
    res.set_content(options_.login_page(who.status().message(), next), kHtml);
    return;
  }
  if (!RoleAllows(who->role, Role::kViewer)) {
    res.status = 403;
    res.set_content(options_.login_page(absl::StrCat("'", who->name, "' is ", RoleName(who->role),
                                                     "; pages need viewer"),
                                        next),
                    kHtml);
    return;
  }
  const std::string id = sessions_->Create(token, absl::Now());
  res.status = 303;
  res.set_header("Set-Cookie", SessionCookie(id, sessions_->lifetime()));
  res.set_header("Location", next);
}

HttpServer::~HttpServer() { Shutdown(); }

void HttpServer::Shutdown() {
  if (server_) server_->stop();
  if (listener_.joinable()) listener_.join();
}

}  // namespace fleetbench::controller
