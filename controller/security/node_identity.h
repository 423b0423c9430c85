// controller/security/node_identity.h — one identity per node (docs/security.md): the
// controller's CA issues each enrolled node a client certificate bound to
// its name, and from then on the name a stream speaks as is the one in its
// certificate, never the one in its hello.
//
// Contract: Enroll signs a node's CSR for the name asked unless that name
// has a live identity (ALREADY_EXISTS, whatever token asks); the key stays
// with the node. NodeOfCertificate checks a peer's certificate (issued by
// this CA, in its validity window, the node's current one, not revoked)
// and answers its node name, or UNAUTHENTICATED with one line saying which
// check failed. A stream without a certificate (the shared token,
// migration) may not speak as an enrolled node. Revoke ends the identity
// and closes the node's streams at once. Renew (docs/security.md,
// Rotation) gives a node that presents its certificate a new one for a new
// key and the same name; the certificate it replaced stays accepted (the
// overlap) until the node presents the new one, the old one expires or
// the controller restarts, so an answer lost on the way costs the node
// nothing but a second renewal. Thread-safe.
#ifndef FLEETBENCH_CONTROLLER_SECURITY_NODE_IDENTITY_H_
#define FLEETBENCH_CONTROLLER_SECURITY_NODE_IDENTITY_H_

#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/x509.h"
#include "controller/security/auth.h"
#include "fleetbench/v1/agent_service.pb.h"
#include "fleetbench/v1/node.pb.h"
#include "storage/store.h"

namespace fleetbench::controller {

class NodeIdentities {
 public:
  // `store` and `clock` must outlive this.
  NodeIdentities(storage::Store* store, x509::KeyAndCert ca, Clock* clock,
                 absl::Duration cert_validity = absl::Hours(24 * 90))
      : store_(store), ca_(std::move(ca)), clock_(clock), cert_validity_(cert_validity) {}

  absl::StatusOr<v1::EnrollResponse> Enroll(const v1::EnrollRequest& request,
                                            const Principal& by);
  // The node `cert_pem` (the peer's, as TLS received it) stands for.
  absl::StatusOr<std::string> NodeOfCertificate(const std::string& cert_pem);
  // `cert_pem`: the certificate the caller presented (mTLS); it must pass
  // NodeOfCertificate. FAILED_PRECONDITION while the current certificate
  // has lived under a quarter of its life (no minting in a loop),
  // INVALID_ARGUMENT for a CSR of the presented certificate's own key,
  // ABORTED when a revoke or another renewal won a race.
  absl::StatusOr<v1::RenewResponse> Renew(const std::string& cert_pem,
                                          const v1::RenewRequest& request);
  // OK when a stream without a certificate may say hello as `name`.
  absl::Status CheckUncertified(const std::string& name);
  // NOT_FOUND when `name` has no live identity.
  absl::StatusOr<v1::RevokeNodeResponse> Revoke(const std::string& name);

  // A certified stream, so that Revoke can close it. `close` may be called
  // from any thread, after the stream ended too (it must then do nothing).
  using Closer = std::function<void(const std::string& why)>;
  int64_t AddStream(const std::string& node, Closer close);
  void RemoveStream(int64_t id);

  const std::string& ca_pem() const { return ca_.cert_pem; }

 private:
  storage::Store* const store_;
  const x509::KeyAndCert ca_;
  Clock* const clock_;
  const absl::Duration cert_validity_;

  absl::Mutex mu_;
  // A node's certificate before its last renewal, accepted while the
  // node's current one is still `successor` and has not been presented.
  struct Replaced {
    std::string fingerprint;
    std::string successor;
  };
  // A certificate for `node` with the CSR's key, valid from a little before
  // now (a node's clock a little behind ours) until now + cert_validity_.
  absl::StatusOr<std::string> Sign(const std::string& csr_pem, const std::string& node,
                                   absl::Time now);
  void ForgetReplaced(const std::string& node);

  int64_t next_stream_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<std::string, Replaced> replaced_ ABSL_GUARDED_BY(mu_);
  std::map<int64_t, std::pair<std::string, Closer>> streams_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_SECURITY_NODE_IDENTITY_H_
