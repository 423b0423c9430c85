// agent/runtime/identity.h — how an agent proves who it is (issue 15):
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
#ifndef FLEETBENCH_AGENT_RUNTIME_IDENTITY_H_
#define FLEETBENCH_AGENT_RUNTIME_IDENTITY_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/transport.h"

namespace fleetbench::agent {

struct AgentTlsOptions {
  std::string controller;      // HOST:PORT
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

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_RUNTIME_IDENTITY_H_
