#include "controller/controller_server.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/logging.h"
#include "common/pem_files.h"
#include "common/transport.h"
#include "common/wire_limits.h"
#include "controller/api/agent_gateway_service.h"
#include "controller/security/audit_log.h"
#include "controller/http/dashboard/dashboard.h"
#include "controller/http/dashboard/html_page.h"
#include "controller/api/fleet_service.h"
#include "controller/http/http_server.h"
#include "controller/http/metrics_page.h"
#include "controller/security/node_identity.h"
#include "controller/http/prometheus_text.h"
#include "controller/security/token_authenticator.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_credentials_options.h"
#include "storage/postgres_store.h"
#include "storage/sqlite_store.h"

namespace fleetbench::controller {
namespace {

// gRPC replaces any socket file at the path it binds, a live one included:
// refuse to take the socket of a process that still answers on it (another
// controller given the same --local-socket, say). A stale file, left by a
// killed controller, refuses the connection and is replaced.
absl::Status CheckLocalSocketFree(const std::string& path) {
  if (path.size() > kMaxLocalSocketPath) {
    return absl::InvalidArgumentError(absl::StrCat("local socket path ", path, " is longer than ",
                                                   kMaxLocalSocketPath,
                                                   " bytes, the most a Unix socket's name holds"));
  }
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return absl::OkStatus();
  if (!S_ISSOCK(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("the local socket path ", path,
                     " is a file that is not a socket; it is left alone: give another "
                     "--local-socket (or off)"));
  }
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::OkStatus();
  sockaddr_un address = {};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.data(), path.size());
  const bool answers =
      connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
  close(fd);
  if (answers) {
    return absl::FailedPreconditionError(
        absl::StrCat("the local socket ", path,
                     " is served by another process; give this controller another "
                     "--local-socket (or off)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<storage::Store>> ControllerServer::OpenHistory(
    const ControllerOptions& options) {
  if (!options.store_url.empty()) {
    // Several controllers may share it; the lease says which one writes.
    storage::PostgresOptions postgres;
    postgres.url = options.store_url;
    postgres.password_file = options.store_password_file;
    postgres.lead = true;
    postgres.wait_for_lead = options.standby;
    postgres.lost_lead = options.lost_lead;
    postgres.standing_by = [](const std::string& holder) {
      LOG(INFO) << "standing by: another controller leads the history (" << holder
                << "); this one takes over when its lease is free";
    };
    return storage::OpenPostgresStore(postgres);
  }
  absl::StatusOr<HistoryLock> lock = HistoryLock::Take(options.db_path);
  if (!lock.ok()) return lock.status();
  history_lock_ = std::move(*lock);
  storage::SqliteOptions sqlite;
  sqlite.path = options.db_path;
  sqlite.synchronous_full = options.synchronous_full;
  // A damaged file is refused at start, not served as a smaller
  // history.
  sqlite.verify_on_open = true;
  // A large one is checked beside serving: a restart should not wait
  // minutes for a read of the whole file. What the check finds is logged;
  // damage also stops the writes, which `nodes` and /metrics then show as
  // the store failing (docs/storage.md, Checks at open).
  sqlite.verify_inline_max_bytes = options.verify_inline_max_bytes;
  const std::string db_path = options.db_path;
  sqlite.on_verified = [db_path](const absl::Status& status, absl::Duration took) {
    if (status.ok()) {
      LOG(INFO) << "history " << db_path << " checked beside serving: ok ("
                << absl::FormatDuration(absl::Trunc(took, absl::Milliseconds(1))) << ")";
    } else if (status.code() == absl::StatusCode::kDataLoss) {
      LOG(ERROR) << status.message() << "; writes are refused from now on";
    } else {
      LOG(WARNING) << "history " << db_path << " could not be checked: " << status.message();
    }
  };
  sqlite.on_verify_started = [db_path](int64_t file_bytes) {
    LOG(INFO) << "history " << db_path << " (" << (file_bytes >> 20)
              << " MiB) is over --verify-inline-mib: checking it beside serving";
  };
  return storage::OpenSqliteStore(sqlite);
}

absl::StatusOr<std::unique_ptr<ControllerServer>> ControllerServer::Start(
    const ControllerOptions& options) {
  if (options.token.empty()) {
    return absl::InvalidArgumentError("the controller needs a token");
  }
  std::unique_ptr<ControllerServer> server(new ControllerServer);
  absl::StatusOr<std::unique_ptr<storage::Store>> store = server->OpenHistory(options);
  if (!store.ok()) return store.status();
  server->store_ = std::move(*store);
  // Backups are written next to the history: a folder the controller
  // owns and writes, on the file system that already holds the history.
  FleetOptions fleet = options.fleet;
  if (fleet.backup_dir.empty()) {
    const std::filesystem::path folder = std::filesystem::path(options.db_path).parent_path();
    fleet.backup_dir = (folder.empty() ? std::filesystem::path(".") : folder).string();
  }
  server->core_ = std::make_unique<FleetCore>(server->store_.get(), Clock::Real(), fleet);
  if (absl::Status s = server->core_->Start(); !s.ok()) return s;
  // API tokens from the store, and the shared token while it is on
  // (docs/security.md).
  auto tokens = TokenAuthenticator::Load(server->store_.get(), Clock::Real(), options.token);
  if (!tokens.ok()) return tokens.status();
  server->tokens_ = tokens->get();
  server->authenticator_ = std::move(*tokens);
  if (!server->tokens_->shared_token_enabled()) {
    LOG(INFO) << "the shared token is off: only API tokens authenticate";
  }
  server->audit_ = std::make_unique<AuditLog>(server->store_.get(), Clock::Real());
  server->gateway_ =
      std::make_unique<AgentGatewayService>(server->core_.get(), server->authenticator_.get());
  server->fleet_ = std::make_unique<FleetService>(server->core_.get(), server->authenticator_.get(),
                                                  server->tokens_, server->audit_.get());

  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
  if (!options.insecure) {
    const std::string dir = options.tls_dir.empty() ? options.db_path + ".tls" : options.tls_dir;
    server->tls_dir_ = dir;
    server->tls_names_ = ServerNames(options.listen, options.tls_sans);
    absl::StatusOr<ServerTls> tls = LoadOrMakeServerTls(dir, server->tls_names_);
    if (!tls.ok()) {
      return absl::Status(tls.status().code(), absl::StrCat("TLS in ", dir, ": ",
                                                            tls.status().message()));
    }
    server->tls_ = std::make_unique<ServerTls>(std::move(*tls));
    server->identities_ = std::make_unique<NodeIdentities>(
        server->store_.get(), server->tls_->ca, Clock::Real(), options.node_cert_validity);
    server->gateway_->set_identities(server->identities_.get());
    server->fleet_->set_identities(server->identities_.get());
    // Served from serving.pem (key, certificate and, so that an agent
    // pinning the CA's fingerprint can fetch it in the handshake, the CA:
    // common/ca_fetch.h), reread each second: a reload needs no restart.
    server->cert_provider_ = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
        server->tls_->serving_path, server->tls_->serving_path, server->tls_->ca_path,
        /*refresh_interval_sec=*/1);
    grpc::experimental::TlsServerCredentialsOptions tls_options(server->cert_provider_);
    tls_options.watch_identity_key_cert_pairs();
    tls_options.watch_root_certs();
    // A client certificate is asked for but not required (the CLI and
    // enrolling nodes have none) and not checked by gRPC: the gateway
    // checks it against the CA and the stored identity itself, to answer
    // an expired or revoked one with a message that says so. The TLS
    // handshake still proves the peer holds the key.
    tls_options.set_cert_request_type(GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_BUT_DONT_VERIFY);
    credentials = grpc::experimental::TlsServerCredentials(tls_options);
  }

  // The port agents and remote clients dial: TLS (or --insecure), never a
  // unix: socket, which would carry no node certificate.
  if (IsLocalAddress(options.listen)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "listen address ", options.listen, " is a Unix socket; that is local_socket's job"));
  }
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, credentials, &server->port_);
  int local_bound = 0;
  if (!options.local_socket.empty()) {
    if (absl::Status free = CheckLocalSocketFree(options.local_socket); !free.ok()) return free;
    builder.AddListeningPort("unix:" + options.local_socket,
                             grpc::experimental::LocalServerCredentials(UDS), &local_bound);
  }
  builder.RegisterService(server->gateway_.get());
  builder.RegisterService(server->fleet_.get());
  // The limit every peer agrees on (common/wire_limits.h); inputs are
  // bounded far below it, so no answer outgrows what a client may read.
  builder.SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder.SetMaxSendMessageSize(kMaxMessageBytes);
  // Notice dead peers on idle streams (a NAT dropping the mapping).
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 30000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 5000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  {
    // gRPC binds and listens inside BuildAndStart with the process's
    // umask: the socket is made owner-only from its first instant, not
    // chmod-ed after callers may have connected. The umask is the process's,
    // so this holds it for as short as it can; the core's thread writes no
    // new file at start.
    const mode_t umask_before = umask(0177);
    server->server_ = builder.BuildAndStart();
    umask(umask_before);
  }
  // gRPC starts no port unless it can start them all.
  if (server->server_ == nullptr || server->port_ == 0 ||
      (!options.local_socket.empty() && local_bound == 0)) {
    return absl::UnavailableError(absl::StrCat(
        "cannot listen on ", options.listen,
        options.local_socket.empty()
            ? ""
            : absl::StrCat(" or make the local socket ", options.local_socket,
                           " (is its folder there?)")));
  }
  if (!options.http_listen.empty()) {
    MetricsPageOptions page;
    page.db_path = options.store_url.empty() ? options.db_path : "";  // a file to size
    server->metrics_page_ = std::make_unique<MetricsPage>(server->core_.get(), page);
    MetricsPage* metrics = server->metrics_page_.get();
    std::map<std::string, HttpHandler> routes;
    routes["/metrics"] = [metrics](const HttpRequest&) {
      return HttpReply{200, prometheus::kContentType, metrics->Render(), ""};
    };
    HttpServerOptions http;
    http.listen = options.http_listen;
    http.authenticator = server->authenticator_.get();
    // The dashboard's pages, behind the login form (docs/dashboard.md).
    dashboard::AddDashboardRoutes(server->core_.get(), dashboard::DashboardOptions(), &routes,
                                  &http.page_paths);
    http.login_page = [](absl::string_view error, absl::string_view next) {
      return dashboard::RenderLoginPage(error, next);
    };
    if (options.metrics_open) {
      http.open_paths.insert("/metrics");
      LOG(WARNING) << "--metrics-open: /metrics is served to anyone who reaches "
                   << options.http_listen << ", without a token";
    }
    auto started = HttpServer::Start(http, std::move(routes));
    if (!started.ok()) return started.status();
    server->http_ = std::move(*started);
  }
  return server;
}

int ControllerServer::http_port() const { return http_ ? http_->port() : 0; }

ControllerServer::~ControllerServer() { Shutdown(); }

absl::StatusOr<x509::CertInfo> ControllerServer::ReloadTls() {
  if (tls_ == nullptr) {
    return absl::FailedPreconditionError("--insecure: there is no certificate to reload");
  }
  // The CA first, before anything is made or written: a server
  // certificate from another CA would be refused by every agent.
  absl::StatusOr<std::string> ca = ReadSmallFile(tls_->ca_path);
  absl::StatusOr<std::string> ca_key = ReadSmallFile(tls_dir_ + "/ca.key");
  if (!ca.ok() || !ca_key.ok() || *ca != tls_->ca.cert_pem || *ca_key != tls_->ca.key_pem) {
    return absl::FailedPreconditionError(absl::StrCat(
        tls_->ca_path, " or ca.key is not the CA this controller started with; a new CA needs a "
        "restart and every node enrolled again (docs/security.md)"));
  }
  absl::StatusOr<ServerTls> tls = LoadOrMakeServerTls(tls_dir_, tls_names_);
  if (!tls.ok()) {
    return absl::Status(tls.status().code(),
                        absl::StrCat("TLS in ", tls_dir_, ": ", tls.status().message()));
  }
  absl::StatusOr<x509::CertInfo> served = x509::ParseCert(tls->server.cert_pem);
  if (!served.ok()) return served.status();
  tls_->server = tls->server;
  LOG(INFO) << "TLS reloaded: serving certificate serial " << served->serial_hex << " until "
            << absl::FormatTime("%Y-%m-%d", served->not_after, absl::UTCTimeZone())
            << (tls->made_server_cert ? " (made now, signed by the CA)" : "")
            << (tls->serving_changed ? "" : " (unchanged)");
  return served;
}

void ControllerServer::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  // HTTP first: its pages call into the core.
  if (http_) http_->Shutdown();
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  if (core_) core_->Stop();
}

}  // namespace fleetbench::controller
