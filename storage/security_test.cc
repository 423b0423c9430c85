// Tests of the SQLite store's security tables (schema version 9): tokens
// survive reopening without their secret, names are unique among live
// tokens and free again once a token is dead, revoking is once; settings;
// the audit comes back newest first, pages, and stays within its bound.
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/store.h"
#include "storage/store_test_util.h"

namespace fleetbench::storage {
namespace {

using ::testing::HasSubstr;

ApiTokenRecord MakeToken(const std::string& name, const std::string& id) {
  ApiTokenRecord t;
  t.name = name;
  t.token_id = id;
  t.secret_hash = std::string(32, 'h');
  t.secret_hash[0] = id.empty() ? 'x' : id[0];
  t.role = "viewer";
  t.created = kT0;
  return t;
}

AuditRecord MakeAudit(absl::Time when, const std::string& rpc, const std::string& target) {
  AuditRecord r;
  r.time = when;
  r.principal = "shared-token";
  r.role = "admin";
  r.rpc = rpc;
  r.target = target;
  return r;
}

class SecurityStoreTest : public StoreContractTest {};
FLEETBENCH_STORE_CONTRACT(SecurityStoreTest);

TEST_P(SecurityStoreTest, TokensSurviveReopeningWithTheirLifeAndHash) {
  ApiTokenRecord a = MakeToken("alice", "a1");
  a.role = "operator";
  a.expires = kT0 + absl::Hours(24);
  ASSERT_TRUE(store_->CreateApiToken(a, kT0).ok());
  ASSERT_TRUE(store_->CreateApiToken(MakeToken("bob", "b1"), kT0).ok());
  ASSERT_TRUE(store_->TouchApiToken("alice", kT0 + absl::Minutes(5)).ok());
  // Never backwards.
  ASSERT_TRUE(store_->TouchApiToken("alice", kT0 + absl::Minutes(1)).ok());
  Reopen();
  absl::StatusOr<std::vector<ApiTokenRecord>> tokens = store_->ListApiTokens();
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  ASSERT_EQ(tokens->size(), 2u);
  const ApiTokenRecord& got = (*tokens)[0];
  EXPECT_EQ(got.name, "alice");
  EXPECT_EQ(got.token_id, "a1");
  EXPECT_EQ(got.secret_hash, a.secret_hash);
  EXPECT_EQ(got.role, "operator");
  EXPECT_EQ(got.created, kT0);
  EXPECT_EQ(got.expires, kT0 + absl::Hours(24));
  EXPECT_EQ(got.revoked, absl::InfiniteFuture());
  EXPECT_EQ(got.last_used, kT0 + absl::Minutes(5));
  EXPECT_EQ((*tokens)[1].name, "bob");
  EXPECT_EQ((*tokens)[1].expires, absl::InfiniteFuture());
  EXPECT_EQ((*tokens)[1].last_used, absl::InfinitePast());
  EXPECT_EQ(store_->TouchApiToken("carol", kT0).code(), absl::StatusCode::kNotFound);
}

TEST_P(SecurityStoreTest, ALiveNameIsTakenADeadOneIsFreeAgain) {
  ASSERT_TRUE(store_->CreateApiToken(MakeToken("ci", "c1"), kT0).ok());
  absl::Status again = store_->CreateApiToken(MakeToken("ci", "c2"), kT0);
  EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(std::string(again.message()), HasSubstr("'ci'"));
  // The same id under another name is refused too.
  EXPECT_EQ(store_->CreateApiToken(MakeToken("other", "c1"), kT0).code(),
            absl::StatusCode::kAlreadyExists);

  absl::StatusOr<ApiTokenRecord> revoked = store_->RevokeApiToken("ci", kT0 + absl::Seconds(1));
  ASSERT_TRUE(revoked.ok()) << revoked.status();
  EXPECT_EQ(revoked->revoked, kT0 + absl::Seconds(1));
  EXPECT_EQ(store_->RevokeApiToken("ci", kT0).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->RevokeApiToken("nobody", kT0).status().code(), absl::StatusCode::kNotFound);
  // Revoked: the name can be taken by a new token, which is live.
  ASSERT_TRUE(store_->CreateApiToken(MakeToken("ci", "c3"), kT0 + absl::Seconds(2)).ok());
  auto tokens = store_->ListApiTokens();
  ASSERT_TRUE(tokens.ok());
  ASSERT_EQ(tokens->size(), 1u);
  EXPECT_EQ((*tokens)[0].token_id, "c3");
  EXPECT_EQ((*tokens)[0].revoked, absl::InfiniteFuture());

  // Expired at `now`: free too; not yet expired: taken.
  ApiTokenRecord short_lived = MakeToken("tmp", "t1");
  short_lived.expires = kT0 + absl::Hours(1);
  ASSERT_TRUE(store_->CreateApiToken(short_lived, kT0).ok());
  EXPECT_EQ(store_->CreateApiToken(MakeToken("tmp", "t2"), kT0 + absl::Minutes(59)).code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(store_->CreateApiToken(MakeToken("tmp", "t2"), kT0 + absl::Hours(1)).ok());
}

TEST_P(SecurityStoreTest, BadTokensAreRefusedWithNothingStored) {
  ApiTokenRecord no_name = MakeToken("", "x");
  EXPECT_EQ(store_->CreateApiToken(no_name, kT0).code(), absl::StatusCode::kInvalidArgument);
  ApiTokenRecord short_hash = MakeToken("a", "x");
  short_hash.secret_hash = "abc";
  EXPECT_EQ(store_->CreateApiToken(short_hash, kT0).code(), absl::StatusCode::kInvalidArgument);
  auto tokens = store_->ListApiTokens();
  ASSERT_TRUE(tokens.ok());
  EXPECT_TRUE(tokens->empty());
}

TEST_P(SecurityStoreTest, SettingsAreUnsetThenStoredAndReplaced) {
  auto unset = store_->GetSetting("shared_token");
  ASSERT_TRUE(unset.ok());
  EXPECT_FALSE(unset->has_value());
  ASSERT_TRUE(store_->PutSetting("shared_token", "off").ok());
  ASSERT_TRUE(store_->PutSetting("shared_token", "on").ok());
  Reopen();
  auto got = store_->GetSetting("shared_token");
  ASSERT_TRUE(got.ok());
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ(**got, "on");
}

TEST_P(SecurityStoreTest, AuditComesBackNewestFirstSinceATimeAndByPage) {
  for (int i = 0; i < 5; ++i) {
    AuditRecord r = MakeAudit(kT0 + absl::Minutes(i), "StartRun", "run-" + std::to_string(i));
    r.code = i == 4 ? 7 : 0;
    r.message = i == 4 ? "needs operator" : "";
    auto id = store_->AppendAudit(r, 1000);
    ASSERT_TRUE(id.ok()) << id.status();
    EXPECT_EQ(*id, i + 1);
  }
  Reopen();
  auto all = store_->ListAudit(absl::InfinitePast(), 100);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 5u);
  EXPECT_EQ((*all)[0].target, "run-4");
  EXPECT_EQ((*all)[0].code, 7);
  EXPECT_EQ((*all)[0].message, "needs operator");
  EXPECT_EQ((*all)[0].principal, "shared-token");
  EXPECT_EQ((*all)[0].role, "admin");
  EXPECT_EQ((*all)[0].rpc, "StartRun");
  EXPECT_EQ((*all)[0].time, kT0 + absl::Minutes(4));
  EXPECT_EQ((*all)[4].target, "run-0");

  auto recent = store_->ListAudit(kT0 + absl::Minutes(3), 100);
  ASSERT_TRUE(recent.ok());
  EXPECT_EQ(recent->size(), 2u);

  auto page1 = store_->ListAudit(absl::InfinitePast(), 2);
  ASSERT_TRUE(page1.ok());
  ASSERT_EQ(page1->size(), 2u);
  auto page2 = store_->ListAudit(absl::InfinitePast(), 2, page1->back().id);
  ASSERT_TRUE(page2.ok());
  ASSERT_EQ(page2->size(), 2u);
  EXPECT_EQ((*page2)[0].target, "run-2");
  EXPECT_EQ((*page2)[1].target, "run-1");
  EXPECT_EQ(store_->ListAudit(absl::InfinitePast(), 0).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_P(SecurityStoreTest, AuditKeepsOnlyTheNewestRowsPastItsBound) {
  for (int i = 0; i < 25; ++i) {
    ASSERT_TRUE(
        store_->AppendAudit(MakeAudit(kT0 + absl::Seconds(i), "CancelRun", std::to_string(i)), 10)
            .ok());
  }
  auto rows = store_->ListAudit(absl::InfinitePast(), 1000);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 10u);
  EXPECT_EQ(rows->front().target, "24");
  EXPECT_EQ(rows->back().target, "15");
}

}  // namespace
}  // namespace fleetbench::storage
