// common/transport.h — how a client (the CLI, an agent) reaches the
// controller: TLS verified against the controller's CA by default, with
// the node's own certificate when it has one (mTLS), plaintext only when
// asked for with --insecure (docs/security.md, "Transport and node identity").
// A unix:PATH address (the controller's local socket) is dialled with
// gRPC's local credentials: no TLS, the kernel carries the bytes and the
// socket file's permissions and the token are the gate.
#ifndef FLEETBENCH_COMMON_TRANSPORT_H_
#define FLEETBENCH_COMMON_TRANSPORT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace fleetbench {

struct ClientTls {
  bool insecure = false;  // plaintext: only with an explicit --insecure
  std::string ca_pem;     // the controller's CA; required unless insecure
  std::string cert_pem;   // this node's certificate and key (mTLS), or empty
  std::string key_pem;
};

// "unix:PATH": a Unix socket on this host.
bool IsLocalAddress(const std::string& address);

// Before a token goes to a unix: address: the path, when it exists, must be
// a socket owned by this user or root (the controller's is 0600, so no
// other owner can be it); PERMISSION_DENIED saying whose it is otherwise. A
// missing path is left to the dial, which says the controller is not there.
absl::Status CheckLocalSocketOwner(const std::string& address);

// The credentials to dial `address` with: local ones for a unix: address
// (`tls` unused), else TLS or plaintext as `tls` says.
std::shared_ptr<grpc::ChannelCredentials> ChannelCredentialsFor(const std::string& address,
                                                                const ClientTls& tls);

// A channel to the controller at `address` of its own: it never shares a
// connection with another channel of this process (gRPC's global subchannel
// pool would hand it an older channel's connection, failing one included).
// Callers that redial after a failure make a new one for each attempt
// rather than retry on the old: a gRPC 1.51 channel that failed to connect
// (TRANSIENT_FAILURE) fails every call at once and goes on dialling in the
// background, where nothing polls its socket, so a controller that came
// back is never reached through it (docs/reliability.md, "Reconnecting").
// A new channel's first call waits for its connection and drives it.
std::shared_ptr<grpc::Channel> DialController(const std::string& address, const ClientTls& tls,
                                              grpc::ChannelArguments args);

// The CA file to trust: `flag` (--ca), else $FLEETBENCH_CA, else, beside a
// controller-made token ($FLEETBENCH_TOKEN_FILE = DB.token), DB.tls/ca.pem
// when it exists. NOT_FOUND with one line saying what to pass otherwise.
absl::StatusOr<std::string> FindCaFile(const std::string& flag);
// FindCaFile and read it, checked to be a PEM certificate.
absl::StatusOr<std::string> LoadCaPem(const std::string& flag);

// `message` of an UNAVAILABLE call, with a hint when it looks like the two
// sides disagree on TLS (one --insecure, the other not) or on the CA.
std::string ExplainUnavailable(const std::string& address, const ClientTls& tls,
                               const std::string& message);

}  // namespace fleetbench

#endif  // FLEETBENCH_COMMON_TRANSPORT_H_
