#include "controller/fleet_service.h"

#include "controller/auth.h"
#include "controller/grpc_status.h"

namespace fleetbench::controller {
namespace {

// Authenticates, then copies a StatusOr's value into the response.
template <typename Response, typename Fn>
grpc::Status Serve(const grpc::ServerContext& context, const std::string& token,
                   Response* response, Fn fn) {
  if (grpc::Status auth = CheckBearerToken(context, token); !auth.ok()) return auth;
  absl::StatusOr<Response> result = fn();
  if (!result.ok()) return ToGrpcStatus(result.status());
  *response = std::move(*result);
  return grpc::Status::OK;
}

}  // namespace

grpc::Status FleetService::ListNodes(grpc::ServerContext* context, const v1::ListNodesRequest*,
                                     v1::ListNodesResponse* response) {
  return Serve(*context, token_, response, [&] { return core_->ListNodes(); });
}

grpc::Status FleetService::StartRun(grpc::ServerContext* context,
                                    const v1::StartRunRequest* request,
                                    v1::StartRunResponse* response) {
  return Serve(*context, token_, response, [&] { return core_->StartRun(*request); });
}

grpc::Status FleetService::GetRun(grpc::ServerContext* context, const v1::GetRunRequest* request,
                                  v1::Run* response) {
  return Serve(*context, token_, response, [&] { return core_->GetRun(*request); });
}

grpc::Status FleetService::CancelRun(grpc::ServerContext* context,
                                     const v1::CancelRunRequest* request,
                                     v1::CancelRunResponse* response) {
  return Serve(*context, token_, response, [&]() -> absl::StatusOr<v1::CancelRunResponse> {
    if (absl::Status s = core_->CancelRun(request->run_id()); !s.ok()) return s;
    return v1::CancelRunResponse();
  });
}

grpc::Status FleetService::ListRuns(grpc::ServerContext* context,
                                    const v1::ListRunsRequest* request,
                                    v1::ListRunsResponse* response) {
  return Serve(*context, token_, response, [&] { return core_->ListRuns(request->limit()); });
}

grpc::Status FleetService::Rank(grpc::ServerContext* context, const v1::RankRequest* request,
                                v1::RankResponse* response) {
  return Serve(*context, token_, response, [&] { return core_->Rank(*request); });
}

grpc::Status FleetService::History(grpc::ServerContext* context,
                                   const v1::HistoryRequest* request,
                                   v1::HistoryResponse* response) {
  return Serve(*context, token_, response, [&] { return core_->History(*request); });
}

}  // namespace fleetbench::controller
