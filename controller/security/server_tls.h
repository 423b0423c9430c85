// controller/security/server_tls.h — the controller's own TLS material (docs/security.md):
// a private CA made on first start and a server certificate it signs for
// the names clients dial, kept in one folder beside the database
// (DB.tls/: ca.pem, ca.key, server.pem, server.key; keys 0600).
//
// Contract: the CA is made once and kept (agents and clients trust it);
// the server certificate is made again, by the same CA, whenever it is
// missing, does not name every name asked for, or has under 30 days left,
// so a new address or an expiring certificate needs no agent to change
// (rotation: docs/security.md). Nothing here touches the network.
//
// What TLS serves is DIR/serving.pem (0600): the server key, certificate
// and the CA in one file, written by LoadOrMakeServerTls whenever it
// differs, by rename and with a modification time later than the one it
// replaces. gRPC's FileWatcherCertificateProvider watches it: one file, so
// a key and a certificate of different versions are never served
// together (the provider rereads when the time changed while it read).
#ifndef FLEETBENCH_CONTROLLER_SECURITY_SERVER_TLS_H_
#define FLEETBENCH_CONTROLLER_SECURITY_SERVER_TLS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/x509.h"

namespace fleetbench::controller {

struct ServerTls {
  x509::KeyAndCert ca;
  x509::KeyAndCert server;
  std::string ca_path;  // DIR/ca.pem, what clients pass as --ca
  std::string ca_fingerprint;
  std::string serving_path;  // DIR/serving.pem
  bool serving_changed = false;   // serving.pem was (re)written on this call
  bool made_ca = false;           // on this start
  bool made_server_cert = false;  // on this start
};

// Loads DIR's CA and server certificate, making what is missing or stale,
// and publishes them in DIR/serving.pem. Called at start and on each
// reload (SIGHUP): the same rules both times.
absl::StatusOr<ServerTls> LoadOrMakeServerTls(const std::string& dir,
                                              const std::vector<std::string>& names);

// The names the server certificate carries for `listen` (HOST:PORT): the
// listen host (every interface's address when it is 0.0.0.0 or ::),
// 127.0.0.1, ::1, localhost, this host's name, then `extra` (--tls-san).
std::vector<std::string> ServerNames(const std::string& listen,
                                     const std::vector<std::string>& extra);

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_SECURITY_SERVER_TLS_H_
