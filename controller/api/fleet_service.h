// controller/api/fleet_service.h — the user API (Fleet) the CLI talks to. Thin:
// authenticate, check the caller's role against the RPC's row in
// FleetRpcRules() (an RPC without a row is refused), call FleetCore (or the
// tokens and audit for the admin RPCs), map the status, and write each
// mutating call, allowed or refused, to the audit (docs/security.md).
// Served by gRPC's sync thread pool, where blocking on the core is allowed.
#ifndef FLEETBENCH_CONTROLLER_API_FLEET_SERVICE_H_
#define FLEETBENCH_CONTROLLER_API_FLEET_SERVICE_H_

#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "controller/security/audit_log.h"
#include "controller/security/auth.h"
#include "controller/core/fleet_core.h"
#include "controller/security/token_authenticator.h"
#include "fleetbench/v1/fleet_service.grpc.pb.h"

namespace fleetbench::controller {

// What an RPC of the Fleet service needs: the role, and whether it changes
// anything (then it is audited).
struct FleetRpcRule {
  absl::string_view method;  // as in the proto, e.g. "StartRun"
  Role need;
  bool mutates;
};
// One row per RPC of the service (the per-RPC test checks every method of
// the service descriptor has one).
absl::Span<const FleetRpcRule> FleetRpcRules();
// nullptr for an RPC without a row.
const FleetRpcRule* FindFleetRpcRule(absl::string_view method);
class NodeIdentities;

class FleetService final : public v1::Fleet::Service {
 public:
  // All must outlive the service. Without `tokens` the token RPCs answer
  // UNIMPLEMENTED; without `audit` nothing is audited and ListAudit is
  // UNIMPLEMENTED.
  FleetService(FleetCore* core, const Authenticator* authenticator,
               TokenAuthenticator* tokens = nullptr, AuditLog* audit = nullptr)
      : core_(core), authenticator_(authenticator), tokens_(tokens), audit_(audit) {}

  grpc::Status ListNodes(grpc::ServerContext* context, const v1::ListNodesRequest* request,
                         v1::ListNodesResponse* response) override;
  grpc::Status StartRun(grpc::ServerContext* context, const v1::StartRunRequest* request,
                        v1::StartRunResponse* response) override;
  grpc::Status GetRun(grpc::ServerContext* context, const v1::GetRunRequest* request,
                      v1::Run* response) override;
  grpc::Status CancelRun(grpc::ServerContext* context, const v1::CancelRunRequest* request,
                         v1::CancelRunResponse* response) override;
  grpc::Status ListRuns(grpc::ServerContext* context, const v1::ListRunsRequest* request,
                        v1::ListRunsResponse* response) override;
  grpc::Status Rank(grpc::ServerContext* context, const v1::RankRequest* request,
                    v1::RankResponse* response) override;
  grpc::Status History(grpc::ServerContext* context, const v1::HistoryRequest* request,
                       v1::HistoryResponse* response) override;
  grpc::Status RemoveNode(grpc::ServerContext* context, const v1::RemoveNodeRequest* request,
                          v1::RemoveNodeResponse* response) override;
  grpc::Status RevokeNode(grpc::ServerContext* context, const v1::RevokeNodeRequest* request,
                          v1::RevokeNodeResponse* response) override;
  // Node identities for RevokeNode; null (FAILED_PRECONDITION) --insecure.
  void set_identities(NodeIdentities* identities) { identities_ = identities; }
  grpc::Status ImportPrices(grpc::ServerContext* context, const v1::ImportPricesRequest* request,
                            v1::ImportPricesResponse* response) override;
  grpc::Status ListPrices(grpc::ServerContext* context, const v1::ListPricesRequest* request,
                          v1::ListPricesResponse* response) override;
  grpc::Status Cost(grpc::ServerContext* context, const v1::CostRequest* request,
                    v1::CostResponse* response) override;
  grpc::Status ListFindings(grpc::ServerContext* context, const v1::ListFindingsRequest* request,
                            v1::ListFindingsResponse* response) override;
  grpc::Status Variance(grpc::ServerContext* context, const v1::VarianceRequest* request,
                        v1::VarianceResponse* response) override;
  grpc::Status Reliability(grpc::ServerContext* context, const v1::ReliabilityRequest* request,
                           v1::ReliabilityResponse* response) override;
  grpc::Status AddSchedule(grpc::ServerContext* context, const v1::AddScheduleRequest* request,
                           v1::AddScheduleResponse* response) override;
  grpc::Status ListSchedules(grpc::ServerContext* context,
                             const v1::ListSchedulesRequest* request,
                             v1::ListSchedulesResponse* response) override;
  grpc::Status RemoveSchedule(grpc::ServerContext* context,
                              const v1::RemoveScheduleRequest* request,
                              v1::RemoveScheduleResponse* response) override;
  grpc::Status RunSchedule(grpc::ServerContext* context, const v1::RunScheduleRequest* request,
                           v1::RunScheduleResponse* response) override;
  grpc::Status ListScheduleFirings(grpc::ServerContext* context,
                                   const v1::ListScheduleFiringsRequest* request,
                                   v1::ListScheduleFiringsResponse* response) override;
  grpc::Status Backup(grpc::ServerContext* context, const v1::BackupRequest* request,
                      grpc::ServerWriter<v1::BackupChunk>* writer) override;

  grpc::Status CreateToken(grpc::ServerContext* context, const v1::CreateTokenRequest* request,
                           v1::CreateTokenResponse* response) override;
  grpc::Status ListTokens(grpc::ServerContext* context, const v1::ListTokensRequest* request,
                          v1::ListTokensResponse* response) override;
  grpc::Status RevokeToken(grpc::ServerContext* context, const v1::RevokeTokenRequest* request,
                           v1::RevokeTokenResponse* response) override;
  grpc::Status SetSharedToken(grpc::ServerContext* context,
                              const v1::SetSharedTokenRequest* request,
                              v1::SetSharedTokenResponse* response) override;
  grpc::Status ListAudit(grpc::ServerContext* context, const v1::ListAuditRequest* request,
                         v1::ListAuditResponse* response) override;

 private:
  FleetCore* const core_;
  const Authenticator* const authenticator_;
  TokenAuthenticator* const tokens_;
  AuditLog* const audit_;
  NodeIdentities* identities_ = nullptr;
};

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_API_FLEET_SERVICE_H_
