// controller/security/auth.h — who is calling: a bearer token becomes a Principal
// with a Role, and a call is allowed or refused by the role it needs.
//
// Contract: every gRPC call and every HTTP request is authenticated before
// any fleet data is read or written. An Authenticator maps the presented
// token to a Principal, or answers UNAUTHENTICATED with one line that says
// what is wrong (missing, wrong, expired, revoked) and never echoes the
// token. Authorization is by role: viewer < operator < admin, each allowed
// what the one below it is; an enroll principal may only enroll a node and
// is refused everything else. Authenticators are thread-safe (both gRPC
// services and the HTTP workers call them at once).
#ifndef FLEETBENCH_CONTROLLER_SECURITY_AUTH_H_
#define FLEETBENCH_CONTROLLER_SECURITY_AUTH_H_

#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "grpcpp/server_context.h"

namespace fleetbench::controller {

enum class Role {
  kEnroll,    // may only enroll one node (a short-lived enrollment token)
  kViewer,    // reads: nodes, results, rank, history, findings, dashboard
  kOperator,  // + run, cancel, schedules, prices
  kAdmin,     // + tokens, revoke, nodes rm
};

// "enroll", "viewer", "operator", "admin".
absl::string_view RoleName(Role role);
// The inverse of RoleName; INVALID_ARGUMENT naming the four for anything else.
absl::StatusOr<Role> ParseRole(absl::string_view name);
// Whether a caller with `have` may do what needs `need`.
bool RoleAllows(Role have, Role need);

struct Principal {
  std::string name;  // the token's name; kSharedTokenPrincipal for the shared token
  Role role = Role::kViewer;
};

// The name the shared (legacy) token authenticates as.
inline constexpr char kSharedTokenPrincipal[] = "shared-token";

class Authenticator {
 public:
  virtual ~Authenticator() = default;
  // The principal `token` stands for (the bare token, no "Bearer ").
  virtual absl::StatusOr<Principal> Authenticate(absl::string_view token) const = 0;
};

// Reads "authorization: Bearer <token>" from the call's metadata and asks
// `authenticator`; UNAUTHENTICATED with a message that says what to set.
absl::StatusOr<Principal> AuthenticateCall(const grpc::ServerContextBase& context,
                                           const Authenticator& authenticator);
// AuthenticateCall, then RoleAllows(principal.role, need), else
// PERMISSION_DENIED naming the role needed. As a grpc::Status for services.
// `principal`, when given, is set once the token authenticated, also when
// the role then refuses the call.
grpc::Status AuthorizeCall(const grpc::ServerContextBase& context,
                           const Authenticator& authenticator, Role need,
                           Principal* principal = nullptr);

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_SECURITY_AUTH_H_
