// Tests of the SQLite store's node identities: one live identity per name,
// even when two enrollments race; a revoked one may be replaced; all of it
// survives a reopen.
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "storage/store.h"
#include "storage/store_test_util.h"

namespace fleetbench::storage {
namespace {

NodeIdentityRecord Identity(const std::string& node, const std::string& fingerprint) {
  NodeIdentityRecord r;
  r.node = node;
  r.serial = "0a1b";
  r.fingerprint = fingerprint;
  r.not_after = kT0 + absl::Hours(24 * 90);
  r.enrolled = kT0;
  r.enrolled_by = "enroll-1";
  return r;
}

class IdentitiesTest : public StoreContractTest {};
FLEETBENCH_STORE_CONTRACT(IdentitiesTest);

TEST_P(IdentitiesTest, OneLiveIdentityPerNameAndARevokedOneIsReplaced) {
  EXPECT_FALSE(store_->GetNodeIdentity("gpu-07")->has_value());
  ASSERT_TRUE(store_->EnrollNodeIdentity(Identity("gpu-07", "sha256:aa")).ok());
  absl::Status again = store_->EnrollNodeIdentity(Identity("gpu-07", "sha256:bb"));
  EXPECT_TRUE(absl::IsAlreadyExists(again)) << again;
  EXPECT_EQ((*store_->GetNodeIdentity("gpu-07"))->fingerprint, "sha256:aa");

  EXPECT_TRUE(*store_->RevokeNodeIdentity("gpu-07", kT0 + absl::Hours(1)));
  EXPECT_FALSE(*store_->RevokeNodeIdentity("gpu-07", kT0 + absl::Hours(2)));
  EXPECT_FALSE(*store_->RevokeNodeIdentity("nobody", kT0));
  Reopen();
  std::optional<NodeIdentityRecord> revoked = *store_->GetNodeIdentity("gpu-07");
  ASSERT_TRUE(revoked.has_value());
  EXPECT_EQ(revoked->revoked, kT0 + absl::Hours(1));
  EXPECT_EQ(revoked->enrolled_by, "enroll-1");
  EXPECT_EQ(revoked->not_after, kT0 + absl::Hours(24 * 90));

  ASSERT_TRUE(store_->EnrollNodeIdentity(Identity("gpu-07", "sha256:cc")).ok());
  std::optional<NodeIdentityRecord> now = *store_->GetNodeIdentity("gpu-07");
  EXPECT_EQ(now->fingerprint, "sha256:cc");
  EXPECT_FALSE(now->revoked.has_value());
}

TEST_P(IdentitiesTest, OfTwoEnrollmentsRacingForANameOneWins) {
  std::vector<std::thread> threads;
  std::vector<absl::Status> results(8);
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      results[i] = store_->EnrollNodeIdentity(Identity("n", "sha256:" + std::to_string(i)));
    });
  }
  for (auto& t : threads) t.join();
  int won = 0;
  for (const absl::Status& s : results) {
    won += s.ok();
    if (!s.ok()) {
      EXPECT_TRUE(absl::IsAlreadyExists(s)) << s;
    }
  }
  EXPECT_EQ(won, 1);
}

TEST_P(IdentitiesTest, ARenewalReplacesTheCurrentCertificateOnlyAndKeepsTheEnrollment) {
  ASSERT_TRUE(store_->EnrollNodeIdentity(Identity("gpu-07", "sha256:aa")).ok());
  NodeIdentityRecord renewed = Identity("gpu-07", "sha256:bb");
  renewed.serial = "0c2d";
  renewed.not_after = kT0 + absl::Hours(24 * 150);
  renewed.enrolled = kT0 + absl::Hours(24 * 60);  // not stored: enrollment stays
  // From a certificate that is not the current one: nothing changes.
  absl::Status stale = store_->RenewNodeIdentity(renewed, "sha256:zz");
  EXPECT_TRUE(absl::IsAborted(stale)) << stale;
  ASSERT_TRUE(store_->RenewNodeIdentity(renewed, "sha256:aa").ok());
  Reopen();
  std::optional<NodeIdentityRecord> now = *store_->GetNodeIdentity("gpu-07");
  ASSERT_TRUE(now.has_value());
  EXPECT_EQ(now->fingerprint, "sha256:bb");
  EXPECT_EQ(now->serial, "0c2d");
  EXPECT_EQ(now->not_after, kT0 + absl::Hours(24 * 150));
  EXPECT_EQ(now->enrolled, kT0);
  EXPECT_EQ(now->enrolled_by, "enroll-1");
  // The old fingerprint renews no more, and a revoked identity not at all.
  EXPECT_TRUE(absl::IsAborted(store_->RenewNodeIdentity(renewed, "sha256:aa")));
  EXPECT_TRUE(*store_->RevokeNodeIdentity("gpu-07", kT0 + absl::Hours(1)));
  EXPECT_TRUE(absl::IsAborted(
      store_->RenewNodeIdentity(Identity("gpu-07", "sha256:cc"), "sha256:bb")));
  EXPECT_TRUE(absl::IsAborted(
      store_->RenewNodeIdentity(Identity("nobody", "sha256:dd"), "sha256:aa")));
}

}  // namespace
}  // namespace fleetbench::storage
