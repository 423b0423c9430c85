#include "controller/security/auth.h"

#include "absl/strings/str_cat.h"
#include "common/token.h"
#include "common/grpc_status.h"

namespace fleetbench::controller {

absl::string_view RoleName(Role role) {
  switch (role) {
    case Role::kEnroll:
      return "enroll";
    case Role::kViewer:
      return "viewer";
    case Role::kOperator:
      return "operator";
    case Role::kAdmin:
      return "admin";
  }
  return "unknown";
}

absl::StatusOr<Role> ParseRole(absl::string_view name) {
  for (Role role : {Role::kEnroll, Role::kViewer, Role::kOperator, Role::kAdmin}) {
    if (name == RoleName(role)) return role;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown role '", name.substr(0, 40), "': one of viewer, operator, admin, enroll"));
}

bool RoleAllows(Role have, Role need) {
  // Enrolling is not "less than viewing": it is a different thing, and an
  // enrollment token must not read fleet data.
  if (have == Role::kEnroll || need == Role::kEnroll) return have == need;
  return static_cast<int>(have) >= static_cast<int>(need);
}

absl::StatusOr<Principal> AuthenticateCall(const grpc::ServerContextBase& context,
                                           const Authenticator& authenticator) {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find(kAuthMetadataKey);
  if (it == metadata.end()) {
    return absl::UnauthenticatedError("missing token: set FLEETBENCH_TOKEN or pass --token-file");
  }
  const std::string header(it->second.data(), it->second.size());
  const std::string token = TokenFromAuthorizationHeader(header);
  if (token.empty()) return absl::UnauthenticatedError("malformed authorization: want Bearer <token>");
  return authenticator.Authenticate(token);
}

grpc::Status AuthorizeCall(const grpc::ServerContextBase& context,
                           const Authenticator& authenticator, Role need, Principal* principal) {
  absl::StatusOr<Principal> who = AuthenticateCall(context, authenticator);
  if (!who.ok()) return ToGrpcStatus(who.status());
  // Set when refused too: the audit names who was refused.
  if (principal != nullptr) *principal = *who;
  if (!RoleAllows(who->role, need)) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        absl::StrCat("'", who->name, "' is ", RoleName(who->role), "; this needs ",
                                     RoleName(need)));
  }
  return grpc::Status::OK;
}

}  // namespace fleetbench::controller
