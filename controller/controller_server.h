// controller/controller_server.h — wires a Store, a FleetCore and both gRPC
// services onto one listening port and a local Unix socket, and, when
// asked, the HTTP server with /metrics and the dashboard
// (controller/http/http_server.h, controller/http/dashboard/). Used by `fleetbench
// controller`.
#ifndef FLEETBENCH_CONTROLLER_CONTROLLER_SERVER_H_
#define FLEETBENCH_CONTROLLER_CONTROLLER_SERVER_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/core/fleet_core.h"
#include "controller/history_lock.h"
#include "controller/security/server_tls.h"
#include "storage/sqlite_store.h"
#include "storage/store.h"

namespace grpc {
class Server;
namespace experimental {
class CertificateProviderInterface;
}  // namespace experimental
}  // namespace grpc

namespace fleetbench::controller {

class AgentGatewayService;
class AuditLog;
class Authenticator;
class FleetService;
class HttpServer;
class MetricsPage;
class TokenAuthenticator;
class NodeIdentities;

// sizeof(sockaddr_un::sun_path) less its terminating NUL.
inline constexpr size_t kMaxLocalSocketPath = 107;

struct ControllerOptions {
  std::string listen = "127.0.0.1:7070";
  // The SQLite history file; with `store_url`, the prefix of the
  // controller's own files (DB.token, DB.tls, DB.sock) and nothing else.
  std::string db_path;
  // A PostgreSQL history instead (storage/postgres_store.h), with its
  // password's file. The controller leads it (holds its lease) or, with
  // `standby`, waits to; one that loses the lead calls `lost_lead` and
  // stops writing.
  std::string store_url;
  std::string store_password_file;
  bool standby = false;
  std::function<void()> lost_lead;
  // The shared token (admin while switched on), for gRPC and HTTP alike;
  // required. API tokens come from the store (docs/security.md).
  std::string token;
  // Where to serve HTTP (/metrics and the dashboard), host:port; "" for
  // no HTTP.
  std::string http_listen;
  // Serve /metrics without a token (logged as a warning); pages still
  // need one.
  bool metrics_open = false;
  bool synchronous_full = false;
  FleetOptions fleet;
  // Transport (docs/security.md): TLS with the CA and server certificate in
  // tls_dir (default DB.tls; made on first start), unless `insecure`.
  bool insecure = false;
  std::string tls_dir;
  std::vector<std::string> tls_sans;  // names clients dial, beyond the defaults
  // A Unix socket serving the same services to clients on this host
  // (`fleetbench --controller unix:PATH`), "" for none. gRPC's local
  // credentials: no TLS handshake (most of a short CLI call's cost), the
  // same tokens; the file is made mode 0600 (the umask at the bind), so
  // only the controller's own user (who can read DB.token and DB.tls/
  // anyway) connects. A socket another process answers on is refused;
  // a stale one (a killed controller's) is replaced; gRPC removes it at
  // shutdown. Its path fits sockaddr_un: at most kMaxLocalSocketPath bytes.
  std::string local_socket;
  // How long an enrolled node's certificate is valid.
  absl::Duration node_cert_validity = absl::Hours(24 * 90);
  // A history file up to this size is checked (quick_check) before serving;
  // a larger one beside serving, and a damage found then stops its writes
  // (storage::SqliteOptions::verify_inline_max_bytes; docs/storage.md).
  int64_t verify_inline_max_bytes = int64_t{1} << 30;
};

class ControllerServer {
 public:
  // Takes the history (one controller per SQLite file:
  // controller/history_lock.h; the lease of a PostgreSQL one, waiting for
  // it as a standby), opens the store, recovers unfinished runs and starts
  // serving.
  static absl::StatusOr<std::unique_ptr<ControllerServer>> Start(const ControllerOptions& options);
  ~ControllerServer();

  // The port actually bound (useful with port 0).
  int port() const { return port_; }
  // The HTTP port bound, 0 without http_listen.
  int http_port() const;
  FleetCore* core() { return core_.get(); }
  // The API tokens and the shared-token switch (what authenticator_ is).
  TokenAuthenticator* tokens() { return tokens_; }
  // The TLS material served; null with `insecure`. Read it before any
  // ReloadTls (the start's report).
  const ServerTls* tls() const { return tls_.get(); }
  // Serves a new server certificate without a restart (SIGHUP,
  // docs/security.md): DB.tls/ is read again with the rules of a start (a
  // missing, stale or misnamed certificate is made again by the CA) and
  // published in serving.pem, which gRPC rereads within a second; streams
  // stay up, new connections get the new certificate. FAILED_PRECONDITION
  // when the CA changed (agents trust the one they have; a new CA needs a
  // restart and every node enrolled again). Answers what is served now.
  absl::StatusOr<x509::CertInfo> ReloadTls();
  // Stops accepting, ends streams, stops the core. Idempotent.
  void Shutdown();

 private:
  ControllerServer() = default;
  // The store `options` name: SQLite's file under its lock, or PostgreSQL
  // under its lease.
  absl::StatusOr<std::unique_ptr<storage::Store>> OpenHistory(const ControllerOptions& options);

  // Held from before the store opens until after everything is gone.
  std::optional<HistoryLock> history_lock_;
  std::unique_ptr<storage::Store> store_;
  // Before the services, which hold a pointer to it.
  std::unique_ptr<Authenticator> authenticator_;
  TokenAuthenticator* tokens_ = nullptr;  // authenticator_, as its own type
  std::unique_ptr<AuditLog> audit_;
  std::unique_ptr<ServerTls> tls_;
  std::string tls_dir_;
  std::vector<std::string> tls_names_;
  // Watches tls_->serving_path; before server_, which serves from it.
  std::shared_ptr<grpc::experimental::CertificateProviderInterface> cert_provider_;
  std::unique_ptr<FleetCore> core_;
  std::unique_ptr<NodeIdentities> identities_;
  std::unique_ptr<AgentGatewayService> gateway_;
  std::unique_ptr<FleetService> fleet_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<MetricsPage> metrics_page_;
  std::unique_ptr<HttpServer> http_;
  int port_ = 0;
  bool shut_down_ = false;
};

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_CONTROLLER_SERVER_H_
