// Each role allowed and refused per RPC (docs/security.md, "Roles"), on a real controller
// (ControllerServer: SQLite file, gRPC on loopback). The expected role of
// every RPC is written out here, from docs/security.md ("Roles"), apart from the service's
// own table; every method of the Fleet service descriptor must have a row
// in both, so an RPC added without a role fails this test. Each RPC is
// called through gRPC's generic stub with an empty request and every
// role's token: a role below the RPC's is PERMISSION_DENIED naming the
// role it needs; one at or above it gets past authorization (whatever the
// empty request then comes to). Mutating calls, allowed or refused, are
// audited with their principal.
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/token.h"
#include "common/ulid.h"
#include "controller/security/auth.h"
#include "controller/controller_server.h"
#include "controller/api/fleet_service.h"
#include "controller/security/token_authenticator.h"
#include "fleetbench/v1/fleet_service.grpc.pb.h"
#include "fleetbench/v1/fleet_service.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/generated_message_reflection.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"

namespace fleetbench::controller {
namespace {

using ::testing::HasSubstr;

// The table of docs/security.md, "Roles": viewer (nodes, results, rank, history, findings),
// operator (+ run, cancel, schedules, prices), admin (+ tokens, revoke,
// nodes rm). Reads of prices and schedules are viewer's: ranks are made of
// them.
const std::map<std::string, std::pair<Role, bool>>& Expected() {
  static const auto* const kExpected = new std::map<std::string, std::pair<Role, bool>>{
      {"ListNodes", {Role::kViewer, false}},
      {"StartRun", {Role::kOperator, true}},
      {"GetRun", {Role::kViewer, false}},
      {"CancelRun", {Role::kOperator, true}},
      {"ListRuns", {Role::kViewer, false}},
      {"Rank", {Role::kViewer, false}},
      {"History", {Role::kViewer, false}},
      {"RemoveNode", {Role::kAdmin, true}},
      {"ImportPrices", {Role::kOperator, true}},
      {"ListPrices", {Role::kViewer, false}},
      {"Cost", {Role::kViewer, false}},
      {"ListFindings", {Role::kViewer, false}},
      {"Variance", {Role::kViewer, false}},
      {"Reliability", {Role::kViewer, false}},
      {"AddSchedule", {Role::kOperator, true}},
      {"ListSchedules", {Role::kViewer, false}},
      {"RemoveSchedule", {Role::kOperator, true}},
      {"RunSchedule", {Role::kOperator, true}},
      {"ListScheduleFirings", {Role::kViewer, false}},
      {"CreateToken", {Role::kAdmin, true}},
      {"ListTokens", {Role::kAdmin, false}},
      {"RevokeToken", {Role::kAdmin, true}},
      {"SetSharedToken", {Role::kAdmin, true}},
      {"ListAudit", {Role::kAdmin, false}},
      {"Backup", {Role::kAdmin, false}},
      {"RevokeNode", {Role::kAdmin, true}},
  };
  return *kExpected;
}

constexpr char kShared[] = "roles-test-shared-token";

// The Fleet service as its .proto declares it. fleet_service.proto holds
// no message, so nothing else links the file that registers it: naming its
// descriptor table does (and builds the descriptors).
const google::protobuf::ServiceDescriptor* FleetDescriptor() {
  google::protobuf::internal::AssignDescriptors(
      &descriptor_table_fleetbench_2fv1_2ffleet_5fservice_2eproto);
  return google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
      "fleetbench.v1.Fleet");
}

class FleetRolesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("fleet_roles_test_" + NewUlid());
    std::filesystem::create_directories(dir_);
    ControllerOptions options;
    options.listen = "127.0.0.1:0";
    options.db_path = dir_ + "/h.db";
    options.token = kShared;
    auto server = ControllerServer::Start(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    // Over TLS, as every client talks to a controller by default.
    ASSERT_NE(server_->tls(), nullptr);
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = server_->tls()->ca.cert_pem;
    channel_ = grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()),
                                   grpc::SslCredentials(ssl));
    for (Role role : {Role::kEnroll, Role::kViewer, Role::kOperator, Role::kAdmin}) {
      const std::string name = absl::StrCat("t-", RoleName(role));
      auto created = server_->tokens()->Create(
          name, role, role == Role::kEnroll ? absl::Hours(1) : absl::ZeroDuration());
      ASSERT_TRUE(created.ok()) << created.status();
      tokens_[role] = created->secret;
    }
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  // Calls /fleetbench.v1.Fleet/METHOD with an empty request and `token`.
  grpc::Status CallEmpty(const std::string& method, const std::string& token) {
    grpc::GenericStub stub(channel_);
    grpc::ClientContext context;
    context.AddMetadata(kAuthMetadataKey, "Bearer " + token);
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    grpc::Slice empty("");
    grpc::ByteBuffer request(&empty, 1);
    grpc::ByteBuffer response;
    grpc::CompletionQueue cq;
    std::unique_ptr<grpc::GenericClientAsyncResponseReader> call = stub.PrepareUnaryCall(
        &context, absl::StrCat("/", v1::Fleet::service_full_name(), "/", method), request, &cq);
    call->StartCall();
    grpc::Status status;
    call->Finish(&response, &status, reinterpret_cast<void*>(1));
    void* tag = nullptr;
    bool ok = false;
    EXPECT_TRUE(cq.Next(&tag, &ok));
    cq.Shutdown();
    while (cq.Next(&tag, &ok)) {
    }
    return status;
  }

  std::string dir_;
  std::unique_ptr<ControllerServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::map<Role, std::string> tokens_;
};

TEST_F(FleetRolesTest, EveryRpcHasARoleInTheTableAndTheServices) {
  const google::protobuf::ServiceDescriptor* service = FleetDescriptor();
  ASSERT_NE(service, nullptr);
  ASSERT_GT(service->method_count(), 0);
  for (int i = 0; i < service->method_count(); ++i) {
    const std::string name = service->method(i)->name();
    auto expected = Expected().find(name);
    ASSERT_NE(expected, Expected().end())
        << name << " has no row in this test's table: give it a role (docs/security.md, Roles)";
    const FleetRpcRule* rule = FindFleetRpcRule(name);
    ASSERT_NE(rule, nullptr) << name << " has no row in fleet_service.cc's table";
    EXPECT_EQ(rule->need, expected->second.first)
        << name << ": needs " << RoleName(rule->need) << ", the table says "
        << RoleName(expected->second.first);
    EXPECT_EQ(rule->mutates, expected->second.second) << name;
  }
  EXPECT_EQ(static_cast<int>(FleetRpcRules().size()), service->method_count())
      << "fleet_service.cc has a row for an RPC the service does not have";
  EXPECT_EQ(static_cast<int>(Expected().size()), service->method_count());
}

TEST_F(FleetRolesTest, EachRoleIsAllowedOrRefusedPerRpcOnTheWire) {
  const google::protobuf::ServiceDescriptor* service = FleetDescriptor();
  ASSERT_NE(service, nullptr);
  int refused = 0;
  int allowed = 0;
  for (int i = 0; i < service->method_count(); ++i) {
    const std::string method = service->method(i)->name();
    auto expected = Expected().find(method);
    ASSERT_NE(expected, Expected().end()) << method;
    const Role need = expected->second.first;
    // Enroll first and admin last: SetSharedToken(false) by the admin must
    // not matter to the others (none uses the shared token).
    for (Role role : {Role::kEnroll, Role::kViewer, Role::kOperator, Role::kAdmin}) {
      const grpc::Status status = CallEmpty(method, tokens_[role]);
      const std::string where = absl::StrCat(method, " as ", RoleName(role));
      EXPECT_NE(status.error_code(), grpc::StatusCode::UNAUTHENTICATED)
          << where << ": " << status.error_message();
      if (RoleAllows(role, need)) {
        ++allowed;
        EXPECT_NE(status.error_code(), grpc::StatusCode::PERMISSION_DENIED)
            << where << ": " << status.error_message();
      } else {
        ++refused;
        EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << where;
        EXPECT_THAT(status.error_message(),
                    HasSubstr(absl::StrCat("'t-", RoleName(role), "' is ", RoleName(role),
                                           "; this needs ", RoleName(need))))
            << where;
      }
    }
  }
  // 23 RPCs x 4 roles, at the time of writing: most refusals are enroll's.
  EXPECT_EQ(allowed + refused, service->method_count() * 4);
  EXPECT_GT(refused, service->method_count());
}

TEST_F(FleetRolesTest, MutatingCallsAreAuditedAllowedOrRefusedReadsAreNot) {
  EXPECT_EQ(CallEmpty("StartRun", tokens_[Role::kViewer]).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(CallEmpty("CancelRun", tokens_[Role::kOperator]).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(CallEmpty("ListNodes", tokens_[Role::kViewer]).ok());
  // Not audited: nobody known called.
  EXPECT_EQ(CallEmpty("StartRun", "wrong").error_code(), grpc::StatusCode::UNAUTHENTICATED);

  auto stub = v1::Fleet::NewStub(channel_);
  grpc::ClientContext context;
  context.AddMetadata(kAuthMetadataKey, std::string("Bearer ") + kShared);
  v1::ListAuditResponse audit;
  ASSERT_TRUE(stub->ListAudit(&context, v1::ListAuditRequest(), &audit).ok());
  ASSERT_EQ(audit.entries_size(), 2);
  const v1::AuditEntry& cancel = audit.entries(0);
  EXPECT_EQ(cancel.rpc(), "CancelRun");
  EXPECT_EQ(cancel.principal(), "t-operator");
  EXPECT_EQ(cancel.role(), "operator");
  EXPECT_NE(cancel.code(), "OK");  // an empty run id
  const v1::AuditEntry& start = audit.entries(1);
  EXPECT_EQ(start.rpc(), "StartRun");
  EXPECT_EQ(start.principal(), "t-viewer");
  EXPECT_EQ(start.code(), "PERMISSION_DENIED");
  EXPECT_THAT(start.message(), HasSubstr("this needs operator"));
}

}  // namespace
}  // namespace fleetbench::controller
