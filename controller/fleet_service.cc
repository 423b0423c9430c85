#include "controller/fleet_service.h"

#include <chrono>

#include "absl/time/time.h"
#include "controller/auth.h"
#include "controller/grpc_status.h"
#include "controller/node_identity.h"

namespace fleetbench::controller {
namespace {

// The caller's deadline as the core takes it; none is InfiniteFuture.
absl::Time DeadlineOf(const grpc::ServerContext& context) {
  const auto deadline = context.deadline();
  if (deadline == std::chrono::system_clock::time_point::max()) return absl::InfiniteFuture();
  return absl::FromChrono(deadline);
}

// Authenticates and checks the role, then runs `fn(deadline)` and copies a StatusOr's value
// into the response.
template <typename Response, typename Fn>
grpc::Status Serve(const grpc::ServerContext& context, const Authenticator& authenticator,
                   Role need, Response* response, Fn fn) {
  if (grpc::Status auth = AuthorizeCall(context, authenticator, need); !auth.ok()) return auth;
  absl::StatusOr<Response> result = fn(DeadlineOf(context));
  if (!result.ok()) return ToGrpcStatus(result.status());
  *response = std::move(*result);
  return grpc::Status::OK;
}

}  // namespace

grpc::Status FleetService::ListNodes(grpc::ServerContext* context, const v1::ListNodesRequest*,
                                     v1::ListNodesResponse* response) {
  return Serve(*context, *authenticator_, Role::kViewer, response, [&](absl::Time deadline) { return core_->ListNodes(deadline); });
}

grpc::Status FleetService::StartRun(grpc::ServerContext* context,
                                    const v1::StartRunRequest* request,
                                    v1::StartRunResponse* response) {
  return Serve(*context, *authenticator_, Role::kOperator, response, [&](absl::Time deadline) { return core_->StartRun(*request, deadline); });
}

grpc::Status FleetService::GetRun(grpc::ServerContext* context, const v1::GetRunRequest* request,
                                  v1::Run* response) {
  return Serve(*context, *authenticator_, Role::kViewer, response, [&](absl::Time deadline) { return core_->GetRun(*request, deadline); });
}

grpc::Status FleetService::CancelRun(grpc::ServerContext* context,
                                     const v1::CancelRunRequest* request,
                                     v1::CancelRunResponse* response) {
  return Serve(*context, *authenticator_, Role::kOperator, response, [&](absl::Time deadline) -> absl::StatusOr<v1::CancelRunResponse> {
    if (absl::Status s = core_->CancelRun(request->run_id(), deadline); !s.ok()) return s;
    return v1::CancelRunResponse();
  });
}

grpc::Status FleetService::ListRuns(grpc::ServerContext* context,
                                    const v1::ListRunsRequest* request,
                                    v1::ListRunsResponse* response) {
  return Serve(*context, *authenticator_, Role::kViewer, response, [&](absl::Time deadline) { return core_->ListRuns(*request, deadline); });
}

grpc::Status FleetService::Rank(grpc::ServerContext* context, const v1::RankRequest* request,
                                v1::RankResponse* response) {
  return Serve(*context, *authenticator_, Role::kViewer, response, [&](absl::Time deadline) { return core_->Rank(*request, deadline); });
}

grpc::Status FleetService::History(grpc::ServerContext* context,
                                   const v1::HistoryRequest* request,
                                   v1::HistoryResponse* response) {
  return Serve(*context, *authenticator_, Role::kViewer, response, [&](absl::Time deadline) { return core_->History(*request, deadline); });
}

grpc::Status FleetService::RemoveNode(grpc::ServerContext* context,
                                      const v1::RemoveNodeRequest* request,
                                      v1::RemoveNodeResponse* response) {
  return Serve(*context, *authenticator_, Role::kAdmin, response,
               [&](absl::Time deadline) { return core_->RemoveNode(request->name(), deadline); });
}

grpc::Status FleetService::RevokeNode(grpc::ServerContext* context,
                                      const v1::RevokeNodeRequest* request,
                                      v1::RevokeNodeResponse* response) {
  return Serve(*context, *authenticator_, Role::kAdmin, response,
               [&](absl::Time) -> absl::StatusOr<v1::RevokeNodeResponse> {
                 if (identities_ == nullptr) {
                   return absl::FailedPreconditionError(
                       "this controller runs --insecure: nodes have no certificate identities");
                 }
                 return identities_->Revoke(request->name());
               });
}

grpc::Status FleetService::ImportPrices(grpc::ServerContext* context,
                                        const v1::ImportPricesRequest* request,
                                        v1::ImportPricesResponse* response) {
  return Serve(*context, *authenticator_, Role::kOperator, response, [&](absl::Time deadline) { return core_->ImportPrices(*request, deadline); });
}

grpc::Status FleetService::ListPrices(grpc::ServerContext* context, const v1::ListPricesRequest*,
                                      v1::ListPricesResponse* response) {
  return Serve(*context, *authenticator_, Role::kViewer, response, [&](absl::Time deadline) { return core_->ListPrices(deadline); });
}

grpc::Status FleetService::Cost(grpc::ServerContext* context, const v1::CostRequest* request,
                                v1::CostResponse* response) {
  return Serve(*context, *authenticator_, Role::kViewer, response, [&](absl::Time deadline) { return core_->Cost(*request, deadline); });
}

grpc::Status FleetService::ListFindings(grpc::ServerContext* context,
                                        const v1::ListFindingsRequest* request,
                                        v1::ListFindingsResponse* response) {
  return Serve(*context, *authenticator_, Role::kViewer, response,
               [&](absl::Time deadline) { return core_->ListFindings(*request, deadline); });
}

grpc::Status FleetService::Variance(grpc::ServerContext* context,
                                    const v1::VarianceRequest* request,
                                    v1::VarianceResponse* response) {
  return Serve(*context, *authenticator_, Role::kViewer, response,
               [&](absl::Time deadline) { return core_->Variance(*request, deadline); });
}

}  // namespace fleetbench::controller

namespace fleetbench::controller {

grpc::Status FleetService::AddSchedule(grpc::ServerContext* context,
                                       const v1::AddScheduleRequest* request,
                                       v1::AddScheduleResponse* response) {
  return Serve(*context, *authenticator_, Role::kOperator, response,
               [&](absl::Time deadline) { return core_->AddSchedule(*request, deadline); });
}

grpc::Status FleetService::ListSchedules(grpc::ServerContext* context,
                                         const v1::ListSchedulesRequest*,
                                         v1::ListSchedulesResponse* response) {
  return Serve(*context, *authenticator_, Role::kViewer, response,
               [&](absl::Time deadline) { return core_->ListSchedules(deadline); });
}

grpc::Status FleetService::RemoveSchedule(grpc::ServerContext* context,
                                          const v1::RemoveScheduleRequest* request,
                                          v1::RemoveScheduleResponse* response) {
  return Serve(*context, *authenticator_, Role::kOperator, response,
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
  return Serve(*context, *authenticator_, Role::kOperator, response,
               [&](absl::Time deadline) { return core_->RunSchedule(request->name(), deadline); });
}

grpc::Status FleetService::ListScheduleFirings(grpc::ServerContext* context,
                                               const v1::ListScheduleFiringsRequest* request,
                                               v1::ListScheduleFiringsResponse* response) {
  return Serve(*context, *authenticator_, Role::kViewer, response, [&](absl::Time deadline) {
    return core_->ListScheduleFirings(*request, deadline);
  });
}

}  // namespace fleetbench::controller
