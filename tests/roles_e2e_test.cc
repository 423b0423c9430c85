// Roles end to end (docs/security.md, "Roles"), through the real CLI and controller: an
// admin (the shared token) makes a viewer token; with it the CLI reads
// nodes and the ranking but `run` is refused, saying the role it needs;
// revoked, the token is refused; the audit shows the create, the refused
// run and the revoke with who did them; no listing shows the secret.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "fleetbench/v1/node.pb.h"
#include "fleetbench/v1/security.pb.h"
#include "gtest/gtest.h"
#include "tests/fleet_fixture.h"

namespace fleetbench::testing {
namespace {

class RolesTest : public FleetTest {};

TEST_F(RolesTest, AViewerTokenReadsIsRefusedARunAndIsRefusedOnceRevoked) {
  StartController();
  StartAgent("n1", {"pool=a"});
  ASSERT_TRUE(WaitForOnlineNodes(1, absl::Seconds(30)));

  v1::CreateTokenResponse created;
  int code = -1;
  ASSERT_TRUE(CliJson({"token", "create", "viewer1", "--role", "viewer"}, &created, &code));
  ASSERT_EQ(code, 0);
  ASSERT_EQ(created.secret().rfind("fbt1.", 0), 0u);
  EXPECT_EQ(created.token().role(), "viewer");
  const std::string token_file = dir_ + "/viewer1.token";
  std::ofstream(token_file) << created.secret() << "\n";
  std::filesystem::permissions(token_file, std::filesystem::perms::owner_read |
                                               std::filesystem::perms::owner_write);

  CommandResult nodes = Cli({"nodes", "--token-file", token_file});
  ASSERT_EQ(nodes.exit_code, 0) << nodes.err;
  EXPECT_NE(nodes.out.find("n1"), std::string::npos) << nodes.out;
  CommandResult rank =
      Cli({"rank", "--metric", "gemm.cpu.fp32.tflops", "--token-file", token_file});
  EXPECT_EQ(rank.err.find("needs"), std::string::npos) << rank.err;
  EXPECT_NE(rank.exit_code, 1) << rank.err;

  CommandResult run = Cli({"run", "--bench", "gemm", "--token-file", token_file});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("'viewer1' is viewer; this needs operator"), std::string::npos)
      << run.err;

  CommandResult list = Cli({"token", "list"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("viewer1"), std::string::npos) << list.out;
  EXPECT_EQ(list.out.find(created.secret().substr(22)), std::string::npos);
  EXPECT_NE(list.out.find("shared token: on"), std::string::npos) << list.out;

  CommandResult revoke = Cli({"token", "revoke", "viewer1"});
  ASSERT_EQ(revoke.exit_code, 0) << revoke.err;
  CommandResult after = Cli({"nodes", "--token-file", token_file});
  EXPECT_EQ(after.exit_code, 1);
  EXPECT_NE(after.err.find("token 'viewer1' was revoked"), std::string::npos) << after.err;
  EXPECT_EQ(after.err.find(created.secret().substr(22)), std::string::npos);

  v1::ListAuditResponse audit;
  ASSERT_TRUE(CliJson({"audit"}, &audit, &code));
  ASSERT_EQ(code, 0);
  ASSERT_EQ(audit.entries_size(), 3);
  EXPECT_EQ(audit.entries(0).rpc(), "RevokeToken");
  EXPECT_EQ(audit.entries(0).principal(), "shared-token");
  EXPECT_EQ(audit.entries(0).target(), "viewer1");
  EXPECT_EQ(audit.entries(0).code(), "OK");
  EXPECT_EQ(audit.entries(1).rpc(), "StartRun");
  EXPECT_EQ(audit.entries(1).principal(), "viewer1");
  EXPECT_EQ(audit.entries(1).code(), "PERMISSION_DENIED");
  EXPECT_EQ(audit.entries(2).rpc(), "CreateToken");
  EXPECT_EQ(audit.entries(2).principal(), "shared-token");
  EXPECT_EQ(audit.entries(2).role(), "admin");
  EXPECT_EQ(audit.entries(2).target(), "viewer1");
  CommandResult table = Cli({"audit", "--since", "1h", "--limit", "10"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("CreateToken"), std::string::npos) << table.out;
  EXPECT_EQ(table.out.find(created.secret().substr(22)), std::string::npos);
}

TEST_F(RolesTest, TheSharedTokenTurnsOffOnlyWithAnAdminTokenAndStaysOffAcrossARestart) {
  StartController();
  CommandResult refused = Cli({"token", "shared", "off"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("no live admin token"), std::string::npos) << refused.err;

  v1::CreateTokenResponse admin;
  ASSERT_TRUE(CliJson({"token", "create", "ops", "--role", "admin", "--ttl", "1d"}, &admin));
  const std::string admin_file = dir_ + "/ops.token";
  std::ofstream(admin_file) << admin.secret() << "\n";
  CommandResult off = Cli({"token", "shared", "off"});
  ASSERT_EQ(off.exit_code, 0) << off.err;
  CommandResult shared = Cli({"nodes"});
  EXPECT_EQ(shared.exit_code, 1);
  EXPECT_NE(shared.err.find("shared token is turned off"), std::string::npos) << shared.err;

  KillController(SIGTERM);
  StartController();
  EXPECT_NE(Cli({"nodes"}).exit_code, 0);
  CommandResult on = Cli({"token", "shared", "on", "--token-file", admin_file});
  ASSERT_EQ(on.exit_code, 0) << on.err;
  EXPECT_EQ(Cli({"nodes"}).exit_code, 0);

  // Usage errors are caught before any call.
  EXPECT_EQ(Cli({"token", "create", "x", "--enroll"}).exit_code, 2);
  EXPECT_EQ(Cli({"token", "create", "x", "--role", "root"}).exit_code, 2);
  EXPECT_EQ(Cli({"token", "create", "bad name", "--role", "viewer"}).exit_code, 2);
  EXPECT_EQ(Cli({"token", "create", "e", "--enroll", "--ttl", "8d"}).exit_code, 2);
  v1::CreateTokenResponse enroll;
  ASSERT_TRUE(CliJson({"token", "create", "e", "--enroll", "--ttl", "1h"}, &enroll));
  EXPECT_EQ(enroll.token().role(), "enroll");
  EXPECT_GT(enroll.token().expires_unix_ms(), 0);
}

}  // namespace
}  // namespace fleetbench::testing
