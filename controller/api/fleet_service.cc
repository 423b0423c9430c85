#include "controller/api/fleet_service.h"

#include <chrono>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "controller/security/auth.h"
#include "common/grpc_status.h"
#include "controller/security/node_identity.h"

namespace fleetbench::controller {
namespace {

// Viewers read; operators also run, cancel and change schedules and
// prices; admins also manage tokens, the shared token, the audit and
// remove nodes (docs/security.md, "Roles"). Reads of prices and schedules are viewer: the
// ranking a viewer may read is made of them.
constexpr FleetRpcRule kRules[] = {
    {"ListNodes", Role::kViewer, false},
    {"StartRun", Role::kOperator, true},
    {"GetRun", Role::kViewer, false},
    {"CancelRun", Role::kOperator, true},
    {"ListRuns", Role::kViewer, false},
    {"Rank", Role::kViewer, false},
    {"History", Role::kViewer, false},
    {"RemoveNode", Role::kAdmin, true},
    // Ends a node's certificate identity (docs/security.md).
    {"RevokeNode", Role::kAdmin, true},
    {"ImportPrices", Role::kOperator, true},
    {"ListPrices", Role::kViewer, false},
    {"Cost", Role::kViewer, false},
    {"ListFindings", Role::kViewer, false},
    {"Variance", Role::kViewer, false},
    {"Reliability", Role::kViewer, false},
    {"AddSchedule", Role::kOperator, true},
    {"ListSchedules", Role::kViewer, false},
    {"RemoveSchedule", Role::kOperator, true},
    {"RunSchedule", Role::kOperator, true},
    {"ListScheduleFirings", Role::kViewer, false},
    {"CreateToken", Role::kAdmin, true},
    {"ListTokens", Role::kAdmin, false},
    {"RevokeToken", Role::kAdmin, true},
    {"SetSharedToken", Role::kAdmin, true},
    {"ListAudit", Role::kAdmin, false},
    // A copy of the whole history (fleet_service_backup.cc).
    {"Backup", Role::kAdmin, false},
};

// The caller's deadline as the core takes it; none is InfiniteFuture.
absl::Time DeadlineOf(const grpc::ServerContext& context) {
  const auto deadline = context.deadline();
  if (deadline == std::chrono::system_clock::time_point::max()) return absl::InfiniteFuture();
  return absl::FromChrono(deadline);
}

// Authenticates and checks the role `rpc`'s rule needs, then runs
// `fn(deadline)` and copies a StatusOr's value into the response. A
// mutating call by a known principal is audited, allowed or refused, with
// target_of(result) as its target (result is null when it failed).
// Unauthenticated calls are not: anyone could fill the audit with them.
template <typename Response, typename Fn, typename TargetOf>
grpc::Status ServeWithTarget(const grpc::ServerContext& context,
                             const Authenticator& authenticator, AuditLog* audit,
                             absl::string_view rpc, Response* response, Fn fn,
                             TargetOf target_of) {
  const FleetRpcRule* rule = FindFleetRpcRule(rpc);
  if (rule == nullptr) {
    // Fails closed: an RPC nobody gave a role is served to nobody.
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        absl::StrCat(rpc, " has no role on this controller"));
  }
  Principal who;
  grpc::Status status = AuthorizeCall(context, authenticator, rule->need, &who);
  const bool authenticated = status.ok() || status.error_code() == grpc::PERMISSION_DENIED;
  const Response* result = nullptr;
  if (status.ok()) {
    absl::StatusOr<Response> answer = fn(DeadlineOf(context));
    if (answer.ok()) {
      *response = std::move(*answer);
      result = response;
    } else {
      status = ToGrpcStatus(answer.status());
    }
  }
  if (rule->mutates && authenticated && audit != nullptr) {
    audit->Record(who, rpc, target_of(result),
                  absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                               status.error_message()));
  }
  return status;
}

template <typename Response, typename Fn>
grpc::Status Serve(const grpc::ServerContext& context, const Authenticator& authenticator,
                   AuditLog* audit, absl::string_view rpc, const std::string& target,
                   Response* response, Fn fn) {
  return ServeWithTarget(context, authenticator, audit, rpc, response, std::move(fn),
                         [&](const Response*) { return target; });
}

const std::string kNoTarget;

int64_t MillisOrZero(absl::Time t) {
  if (t == absl::InfiniteFuture() || t == absl::InfinitePast()) return 0;
  return absl::ToUnixMillis(t);
}

v1::ApiToken TokenProto(const storage::ApiTokenRecord& r) {
  v1::ApiToken t;
  t.set_name(r.name);
  t.set_role(r.role);
  t.set_created_unix_ms(MillisOrZero(r.created));
  t.set_expires_unix_ms(MillisOrZero(r.expires));
  t.set_revoked_unix_ms(MillisOrZero(r.revoked));
  t.set_last_used_unix_ms(MillisOrZero(r.last_used));
  return t;
}

absl::Status NoTokens() {
  return absl::UnimplementedError("this controller keeps no API tokens");
}

}  // namespace

absl::Span<const FleetRpcRule> FleetRpcRules() { return kRules; }

const FleetRpcRule* FindFleetRpcRule(absl::string_view method) {
  for (const FleetRpcRule& rule : kRules) {
    if (rule.method == method) return &rule;
  }
  return nullptr;
}

grpc::Status FleetService::ListNodes(grpc::ServerContext* context, const v1::ListNodesRequest*,
                                     v1::ListNodesResponse* response) {
  return Serve(*context, *authenticator_, audit_, "ListNodes", kNoTarget, response, [&](absl::Time deadline) { return core_->ListNodes(deadline); });
}

grpc::Status FleetService::StartRun(grpc::ServerContext* context,
                                    const v1::StartRunRequest* request,
                                    v1::StartRunResponse* response) {
  return ServeWithTarget(*context, *authenticator_, audit_, "StartRun", response,
      [&](absl::Time deadline) { return core_->StartRun(*request, deadline); },
      [](const v1::StartRunResponse* started) {
        return started == nullptr ? std::string() : started->run_id();
      });
}

grpc::Status FleetService::GetRun(grpc::ServerContext* context, const v1::GetRunRequest* request,
                                  v1::Run* response) {
  return Serve(*context, *authenticator_, audit_, "GetRun", kNoTarget, response, [&](absl::Time deadline) { return core_->GetRun(*request, deadline); });
}

grpc::Status FleetService::CancelRun(grpc::ServerContext* context,
                                     const v1::CancelRunRequest* request,
                                     v1::CancelRunResponse* response) {
  return Serve(*context, *authenticator_, audit_, "CancelRun", request->run_id(), response, [&](absl::Time deadline) -> absl::StatusOr<v1::CancelRunResponse> {
    if (absl::Status s = core_->CancelRun(request->run_id(), deadline); !s.ok()) return s;
    return v1::CancelRunResponse();
  });
}

grpc::Status FleetService::ListRuns(grpc::ServerContext* context,
                                    const v1::ListRunsRequest* request,
                                    v1::ListRunsResponse* response) {
  return Serve(*context, *authenticator_, audit_, "ListRuns", kNoTarget, response, [&](absl::Time deadline) { return core_->ListRuns(*request, deadline); });
}

grpc::Status FleetService::Rank(grpc::ServerContext* context, const v1::RankRequest* request,
                                v1::RankResponse* response) {
  return Serve(*context, *authenticator_, audit_, "Rank", kNoTarget, response, [&](absl::Time deadline) { return core_->Rank(*request, deadline); });
}

grpc::Status FleetService::History(grpc::ServerContext* context,
                                   const v1::HistoryRequest* request,
                                   v1::HistoryResponse* response) {
  return Serve(*context, *authenticator_, audit_, "History", kNoTarget, response, [&](absl::Time deadline) { return core_->History(*request, deadline); });
}

grpc::Status FleetService::RemoveNode(grpc::ServerContext* context,
                                      const v1::RemoveNodeRequest* request,
                                      v1::RemoveNodeResponse* response) {
  return Serve(*context, *authenticator_, audit_, "RemoveNode", request->name(), response,
               [&](absl::Time deadline) { return core_->RemoveNode(request->name(), deadline); });
}

grpc::Status FleetService::RevokeNode(grpc::ServerContext* context,
                                      const v1::RevokeNodeRequest* request,
                                      v1::RevokeNodeResponse* response) {
  return Serve(*context, *authenticator_, audit_, "RevokeNode", request->name(), response,
               [&](absl::Time) -> absl::StatusOr<v1::RevokeNodeResponse> {
                 if (identities_ == nullptr) {
                   return absl::FailedPreconditionError(
                       "this controller runs --insecure: nodes have no certificate identities");
                 }
                 absl::StatusOr<v1::RevokeNodeResponse> revoked =
                     identities_->Revoke(request->name());
                 if (revoked.ok()) core_->OnNodeRevoked(request->name());
                 return revoked;
               });
}

grpc::Status FleetService::ImportPrices(grpc::ServerContext* context,
                                        const v1::ImportPricesRequest* request,
                                        v1::ImportPricesResponse* response) {
  return Serve(*context, *authenticator_, audit_, "ImportPrices", kNoTarget, response, [&](absl::Time deadline) { return core_->ImportPrices(*request, deadline); });
}

grpc::Status FleetService::ListPrices(grpc::ServerContext* context, const v1::ListPricesRequest*,
                                      v1::ListPricesResponse* response) {
  return Serve(*context, *authenticator_, audit_, "ListPrices", kNoTarget, response, [&](absl::Time deadline) { return core_->ListPrices(deadline); });
}

grpc::Status FleetService::Cost(grpc::ServerContext* context, const v1::CostRequest* request,
                                v1::CostResponse* response) {
  return Serve(*context, *authenticator_, audit_, "Cost", kNoTarget, response, [&](absl::Time deadline) { return core_->Cost(*request, deadline); });
}

grpc::Status FleetService::ListFindings(grpc::ServerContext* context,
                                        const v1::ListFindingsRequest* request,
                                        v1::ListFindingsResponse* response) {
  return Serve(*context, *authenticator_, audit_, "ListFindings", kNoTarget, response,
               [&](absl::Time deadline) { return core_->ListFindings(*request, deadline); });
}

grpc::Status FleetService::Variance(grpc::ServerContext* context,
                                    const v1::VarianceRequest* request,
                                    v1::VarianceResponse* response) {
  return Serve(*context, *authenticator_, audit_, "Variance", kNoTarget, response,
               [&](absl::Time deadline) { return core_->Variance(*request, deadline); });
}

grpc::Status FleetService::Reliability(grpc::ServerContext* context,
                                       const v1::ReliabilityRequest* request,
                                       v1::ReliabilityResponse* response) {
  return Serve(*context, *authenticator_, audit_, "Reliability", kNoTarget, response,
               [&](absl::Time deadline) { return core_->Reliability(*request, deadline); });
}

}  // namespace fleetbench::controller

namespace fleetbench::controller {

grpc::Status FleetService::AddSchedule(grpc::ServerContext* context,
                                       const v1::AddScheduleRequest* request,
                                       v1::AddScheduleResponse* response) {
  return Serve(*context, *authenticator_, audit_, "AddSchedule", request->schedule().name(), response,
               [&](absl::Time deadline) { return core_->AddSchedule(*request, deadline); });
}

grpc::Status FleetService::ListSchedules(grpc::ServerContext* context,
                                         const v1::ListSchedulesRequest*,
                                         v1::ListSchedulesResponse* response) {
  return Serve(*context, *authenticator_, audit_, "ListSchedules", kNoTarget, response,
               [&](absl::Time deadline) { return core_->ListSchedules(deadline); });
}

grpc::Status FleetService::RemoveSchedule(grpc::ServerContext* context,
                                          const v1::RemoveScheduleRequest* request,
                                          v1::RemoveScheduleResponse* response) {
  return Serve(*context, *authenticator_, audit_, "RemoveSchedule", request->name(), response,
               [&](absl::Time deadline) -> absl::StatusOr<v1::RemoveScheduleResponse> {
                 if (absl::Status s = core_->RemoveSchedule(request->name(), deadline); !s.ok()) {
                   return s;
                 }
                 return v1::RemoveScheduleResponse();
               });
}

grpc::Status FleetService::RunSchedule(grpc::ServerContext* context,
                                       const v1::RunScheduleRequest* request,
                                       v1::RunScheduleResponse* response) {
  return Serve(*context, *authenticator_, audit_, "RunSchedule", request->name(), response,
               [&](absl::Time deadline) { return core_->RunSchedule(request->name(), deadline); });
}

grpc::Status FleetService::ListScheduleFirings(grpc::ServerContext* context,
                                               const v1::ListScheduleFiringsRequest* request,
                                               v1::ListScheduleFiringsResponse* response) {
  return Serve(*context, *authenticator_, audit_, "ListScheduleFirings", kNoTarget, response, [&](absl::Time deadline) {
    return core_->ListScheduleFirings(*request, deadline);
  });
}

}  // namespace fleetbench::controller

namespace fleetbench::controller {

grpc::Status FleetService::CreateToken(grpc::ServerContext* context,
                                       const v1::CreateTokenRequest* request,
                                       v1::CreateTokenResponse* response) {
  return Serve(*context, *authenticator_, audit_, "CreateToken", request->name(), response,
               [&](absl::Time) -> absl::StatusOr<v1::CreateTokenResponse> {
                 if (tokens_ == nullptr) return NoTokens();
                 absl::StatusOr<Role> role = ParseRole(request->role());
                 if (!role.ok()) return role.status();
                 if (request->ttl_ms() < 0) {
                   return absl::InvalidArgumentError("ttl_ms is not negative");
                 }
                 absl::StatusOr<TokenAuthenticator::Created> created =
                     tokens_->Create(request->name(), *role, absl::Milliseconds(request->ttl_ms()));
                 if (!created.ok()) return created.status();
                 v1::CreateTokenResponse answer;
                 *answer.mutable_token() = TokenProto(created->record);
                 answer.set_secret(std::move(created->secret));
                 return answer;
               });
}

grpc::Status FleetService::ListTokens(grpc::ServerContext* context,
                                      const v1::ListTokensRequest*,
                                      v1::ListTokensResponse* response) {
  return Serve(*context, *authenticator_, audit_, "ListTokens", kNoTarget, response,
               [&](absl::Time) -> absl::StatusOr<v1::ListTokensResponse> {
                 if (tokens_ == nullptr) return NoTokens();
                 v1::ListTokensResponse answer;
                 for (const storage::ApiTokenRecord& r : tokens_->List()) {
                   *answer.add_tokens() = TokenProto(r);
                 }
                 answer.set_shared_token_enabled(tokens_->shared_token_enabled());
                 return answer;
               });
}

grpc::Status FleetService::RevokeToken(grpc::ServerContext* context,
                                       const v1::RevokeTokenRequest* request,
                                       v1::RevokeTokenResponse* response) {
  return Serve(*context, *authenticator_, audit_, "RevokeToken", request->name(), response,
               [&](absl::Time) -> absl::StatusOr<v1::RevokeTokenResponse> {
                 if (tokens_ == nullptr) return NoTokens();
                 absl::StatusOr<storage::ApiTokenRecord> revoked =
                     tokens_->Revoke(request->name());
                 if (!revoked.ok()) return revoked.status();
                 v1::RevokeTokenResponse answer;
                 *answer.mutable_token() = TokenProto(*revoked);
                 return answer;
               });
}

grpc::Status FleetService::SetSharedToken(grpc::ServerContext* context,
                                          const v1::SetSharedTokenRequest* request,
                                          v1::SetSharedTokenResponse* response) {
  const std::string target = request->enabled() ? "on" : "off";
  return Serve(*context, *authenticator_, audit_, "SetSharedToken", target, response,
               [&](absl::Time) -> absl::StatusOr<v1::SetSharedTokenResponse> {
                 if (tokens_ == nullptr) return NoTokens();
                 if (absl::Status s = tokens_->SetSharedTokenEnabled(request->enabled());
                     !s.ok()) {
                   return s;
                 }
                 v1::SetSharedTokenResponse answer;
                 answer.set_enabled(tokens_->shared_token_enabled());
                 return answer;
               });
}

grpc::Status FleetService::ListAudit(grpc::ServerContext* context,
                                     const v1::ListAuditRequest* request,
                                     v1::ListAuditResponse* response) {
  return Serve(*context, *authenticator_, audit_, "ListAudit", kNoTarget, response,
               [&](absl::Time) -> absl::StatusOr<v1::ListAuditResponse> {
                 if (audit_ == nullptr) {
                   return absl::UnimplementedError("this controller keeps no audit");
                 }
                 return audit_->List(*request);
               });
}

}  // namespace fleetbench::controller
