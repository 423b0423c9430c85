// The libpq layer against a real PostgreSQL server started for the test:
// parameters of every kind round-trip unchanged and are never SQL, the
// server's errors map onto the store contract's codes, a password comes
// only from a file, and a lost connection is UNAVAILABLE and then
// reconnected.
#include "storage/postgres_connection.h"

#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/postgres_test_server.h"

namespace fleetbench::storage {
namespace {

using ::testing::HasSubstr;

class PostgresConnectionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto server = PostgresTestServer::Start();
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server).release();
    ASSERT_TRUE(server_->CreateDatabase("conn").ok());
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  std::unique_ptr<PgConnection> Connect() {
    auto conn = PgConnection::Open(server_->Url("conn"), server_->password_file());
    EXPECT_TRUE(conn.ok()) << conn.status();
    return conn.ok() ? std::move(*conn) : nullptr;
  }
  static PostgresTestServer* server_;
};
PostgresTestServer* PostgresConnectionTest::server_ = nullptr;

TEST_F(PostgresConnectionTest, ParametersOfEveryKindRoundTripAndAreNeverSql) {
  auto conn = Connect();
  ASSERT_NE(conn, nullptr);
  ASSERT_TRUE(conn->ExecScript("CREATE TABLE kinds (t TEXT, b BYTEA, i BIGINT, d DOUBLE PRECISION)",
                               "creating").ok());
  const std::string hostile = "x'); DROP TABLE kinds; --";
  const std::string bytes("\0\xff\x01 \\x00'", 8);
  auto inserted = conn->Exec("INSERT INTO kinds VALUES ($1, $2, $3, $4)",
                             {PgText(hostile), PgBytes{bytes},
                              PgInt(std::numeric_limits<int64_t>::min()), PgDouble(0.1)},
                             "inserting");
  ASSERT_TRUE(inserted.ok()) << inserted.status();
  EXPECT_EQ(inserted->affected(), 1);
  ASSERT_TRUE(conn->Exec("INSERT INTO kinds VALUES ($1, $2, $3, $4)",
                         {std::nullopt, std::nullopt, std::nullopt,
                          PgDouble(std::numeric_limits<double>::quiet_NaN())},
                         "inserting nulls").ok());
  auto rows = conn->Exec("SELECT t, b, i, d FROM kinds ORDER BY t NULLS LAST", {}, "reading");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 2);
  EXPECT_EQ(rows->Text(0, 0), hostile);
  EXPECT_EQ(rows->Bytes(0, 1), bytes);
  EXPECT_EQ(rows->Int(0, 2), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(rows->Double(0, 3), 0.1) << "17 digits read back as the same double";
  EXPECT_TRUE(rows->IsNull(1, 0));
  EXPECT_TRUE(rows->IsNull(1, 1));
  EXPECT_TRUE(std::isnan(rows->Double(1, 3)));
  // Text holds no NUL byte: one is stored as U+FFFD, not cut there.
  auto nul = conn->Exec("SELECT $1::TEXT", {PgText(std::string("a\0b", 3))}, "a NUL");
  ASSERT_TRUE(nul.ok()) << nul.status();
  EXPECT_EQ(nul->Text(0, 0), "a\xEF\xBF\xBD" "b");
}

TEST_F(PostgresConnectionTest, TheServersErrorsMapOntoTheStoreContract) {
  auto conn = Connect();
  ASSERT_NE(conn, nullptr);
  ASSERT_TRUE(conn->ExecScript("CREATE TABLE once (k TEXT PRIMARY KEY)", "creating").ok());
  ASSERT_TRUE(conn->Exec("INSERT INTO once VALUES ($1)", {PgText("a")}, "first").ok());
  auto again = conn->Exec("INSERT INTO once VALUES ($1)", {PgText("a")}, "storing a again");
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAlreadyExists) << again.status();
  EXPECT_THAT(again.status().message(), HasSubstr("storing a again"));
  EXPECT_THAT(again.status().message(), HasSubstr("23505"));
  auto bad = conn->Exec("SELECT $1::BIGINT", {PgText("twelve")}, "reading");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
  auto missing = conn->Exec("SELECT * FROM no_such_table", {}, "reading");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInternal) << missing.status();

  EXPECT_EQ(PgStatusCodeOf("53100"), absl::StatusCode::kResourceExhausted);  // disk full
  EXPECT_EQ(PgStatusCodeOf("08006"), absl::StatusCode::kUnavailable);  // connection failure
  EXPECT_EQ(PgStatusCodeOf("57P01"), absl::StatusCode::kUnavailable);  // admin shutdown
  EXPECT_EQ(PgStatusCodeOf("40001"), absl::StatusCode::kUnavailable);  // serialization
  EXPECT_EQ(PgStatusCodeOf("55P03"), absl::StatusCode::kUnavailable);  // lock not available
  EXPECT_EQ(PgStatusCodeOf("53300"), absl::StatusCode::kUnavailable);  // too many connections
  EXPECT_EQ(PgStatusCodeOf("XX001"), absl::StatusCode::kDataLoss);     // data corrupted
  EXPECT_EQ(PgStatusCodeOf("XX000"), absl::StatusCode::kInternal);
}

TEST_F(PostgresConnectionTest, APasswordComesFromAFileNeverTheUrl) {
  auto in_url = PgConnection::Open(
      "postgresql://fleetbench:secret@localhost/conn", "");
  EXPECT_EQ(in_url.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(in_url.status().message(), HasSubstr("password"));
  EXPECT_THAT(in_url.status().message(), ::testing::Not(HasSubstr("secret")));

  auto unreadable = PgConnection::Open(server_->Url("conn"), server_->dir() + "/no-such-file");
  EXPECT_EQ(unreadable.status().code(), absl::StatusCode::kInvalidArgument);

  const std::string wrong = server_->dir() + "/wrong-password";
  std::ofstream(wrong) << "not-the-password\n";
  auto refused = PgConnection::Open(server_->Url("conn"), wrong);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable) << refused.status();
  EXPECT_THAT(refused.status().message(), HasSubstr("password authentication failed"));

  auto garbage = PgConnection::Open("postgresql://[::1", "");
  EXPECT_EQ(garbage.status().code(), absl::StatusCode::kInvalidArgument) << garbage.status();
}

TEST_F(PostgresConnectionTest, ALostConnectionIsUnavailableAndTheNextCallReconnects) {
  auto conn = Connect();
  ASSERT_NE(conn, nullptr);
  ASSERT_TRUE(conn->Exec("SELECT 1", {}, "before").ok());
  // The server goes away with every connection; calls fail UNAVAILABLE
  // (retry), not INTERNAL.
  ASSERT_TRUE(server_->Stop().ok());
  auto down = conn->Exec("SELECT 1", {}, "while down");
  EXPECT_EQ(down.status().code(), absl::StatusCode::kUnavailable) << down.status();
  auto still_down = conn->Exec("SELECT 1", {}, "while down");
  EXPECT_EQ(still_down.status().code(), absl::StatusCode::kUnavailable) << still_down.status();
  ASSERT_TRUE(server_->Restart().ok());
  auto back = conn->Exec("SELECT 1", {}, "after the restart");
  EXPECT_TRUE(back.ok()) << back.status();

  // One connection ended by the server (an admin, a failover): the call
  // in flight fails UNAVAILABLE, the next one reconnects.
  const int pid = conn->BackendPid();
  auto admin = Connect();
  ASSERT_NE(admin, nullptr);
  ASSERT_TRUE(admin->Exec("SELECT pg_terminate_backend($1)", {PgInt(pid)}, "ending").ok());
  auto cut = conn->Exec("SELECT 1", {}, "after the cut");
  EXPECT_EQ(cut.status().code(), absl::StatusCode::kUnavailable) << cut.status();
  auto again = conn->Exec("SELECT 1", {}, "after the cut, again");
  EXPECT_TRUE(again.ok()) << again.status();
  EXPECT_NE(conn->BackendPid(), pid);
}

}  // namespace
}  // namespace fleetbench::storage
