// agent/runtime/identity.h — how an agent proves who it is (docs/security.md):
// the controller's CA it checks the controller against, and its own
// certificate, enrolled once with an enrollment token.
//
// Layout: STATE_DIR/identity/ (0700) holds key.pem (0600, made here, never
// sent), cert.pem (issued by the controller for this node's name) and
// ca.pem (the CA, when it came by fingerprint or with the certificate).
// Contract: after PrepareAgentTls the agent speaks TLS verified against
// the CA; with a certificate it is that certificate's node (mTLS, no token
// sent); without one it uses the shared token (migration), still over TLS.
// Plaintext only with `insecure`.
//
// Renewal (docs/security.md, Rotation): once a fraction of its
// certificate's life has passed (2/3 by default), a connected agent makes
// a new key and asks the controller for a certificate for it (Renew, over
// its mTLS channel). The new pair is staged as renew.key.pem and
// renew.cert.pem and then renamed over key.pem and cert.pem, each write
// atomic (temp file + rename, 0600), and PrepareAgentTls finishes or drops
// a renewal a crash interrupted, so every crash leaves a key and a
// certificate that belong together.
#ifndef FLEETBENCH_AGENT_RUNTIME_IDENTITY_H_
#define FLEETBENCH_AGENT_RUNTIME_IDENTITY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/transport.h"
#include "common/x509.h"
#include "fleetbench/v1/agent_service.grpc.pb.h"

namespace fleetbench::agent {

struct AgentTlsOptions {
  // HOST:PORT each, tried in turn (a leader and its standbys).
  std::vector<std::string> controllers;
  std::string name;            // this node
  std::string state_dir;
  bool insecure = false;       // --insecure
  std::string ca_pem;          // from --ca or $FLEETBENCH_CA; may be empty
  std::string ca_fingerprint;  // --ca-fingerprint, normalized; may be empty
  std::string enroll_token;    // --enroll-token-file / $FLEETBENCH_ENROLL_TOKEN; may be empty
  // How long to keep trying an unreachable controller while enrolling.
  absl::Duration enroll_patience = absl::Minutes(2);
};

// The agent's transport: the CA (given, kept from before, or fetched and
// checked by fingerprint) and the identity (kept, or enrolled now).
// FAILED_PRECONDITION with one line for an identity that cannot be used
// (another node's, expired), INVALID_ARGUMENT for contradicting flags.
absl::StatusOr<ClientTls> PrepareAgentTls(const AgentTlsOptions& options);

// STATE_DIR/identity.
std::string IdentityDir(const std::string& state_dir);

// When `cert` should be renewed: once `fraction` (in (0, 1)) of its life
// has passed.
absl::Time RenewalTime(const x509::CertInfo& cert, double fraction);

// Renews this node's certificate over `stub`, whose channel presents
// `current`'s certificate, with `context` (the caller sets its deadline
// and may cancel it). Answers the new transport, already kept in
// STATE_DIR/identity; on an error the identity on disk is `current`'s.
absl::StatusOr<ClientTls> RenewIdentity(v1::AgentGateway::Stub& stub,
                                        grpc::ClientContext* context,
                                        const std::string& state_dir, const std::string& name,
                                        const ClientTls& current);

// Completes a renewal that a crash interrupted after its certificate was
// kept (renew.cert.pem whose key is renew.key.pem or already key.pem), and
// removes the staged files of one that got no certificate. Answers whether
// it completed one.
absl::StatusOr<bool> FinishInterruptedRenewal(const std::string& state_dir);

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_RUNTIME_IDENTITY_H_
