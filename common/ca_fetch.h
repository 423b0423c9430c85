// common/ca_fetch.h — trust on first use, pinned: an agent that was given
// the CA's fingerprint (agent --ca-fingerprint sha256:HEX) instead of the
// CA file fetches the chain the controller presents in a plain TLS
// handshake (libssl), keeps the certificate whose SHA-256 matches and
// checks that it signed the controller's certificate. gRPC 1.51's TLS
// credentials cannot skip verification before a CA is known, hence the
// handshake of its own.
#ifndef FLEETBENCH_COMMON_CA_FETCH_H_
#define FLEETBENCH_COMMON_CA_FETCH_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace fleetbench {

// The certificates the controller at `address` (HOST:PORT) presents in a
// TLS handshake, unverified, its own first: what a check or a test reads
// (which server certificate is served now). UNAVAILABLE when it cannot be
// reached or the handshake fails.
absl::StatusOr<std::vector<std::string>> FetchPresentedChain(const std::string& address,
                                                             absl::Duration timeout);

// The CA PEM of the controller at `address` (HOST:PORT) whose fingerprint
// is `fingerprint` (x509::NormalizeFingerprint form). PERMISSION_DENIED
// when no certificate in the chain matches (a different controller, or one
// in the middle); UNAVAILABLE when it cannot be reached.
absl::StatusOr<std::string> FetchPinnedCa(const std::string& address,
                                          const std::string& fingerprint, absl::Duration timeout);

}  // namespace fleetbench

#endif  // FLEETBENCH_COMMON_CA_FETCH_H_
