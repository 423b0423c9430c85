// NodeIdentities on a real SQLite file with a fake clock (docs/security.md,
// rotation): a renewal keeps the node's name, rotates its key and makes
// the new certificate the current one; the one it replaced is accepted
// until the new one is presented; revoked, expired, foreign and
// uncertified callers cannot renew; a restart ends the overlap.
#include "controller/security/node_identity.h"

#include <filesystem>
#include <memory>
#include <string>

#include "absl/time/time.h"
#include "common/clock.h"
#include "common/ulid.h"
#include "common/x509.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/sqlite_store.h"
#include "storage/store.h"

namespace fleetbench::controller {
namespace {

using ::testing::HasSubstr;

constexpr absl::Duration kValidity = absl::Hours(24 * 90);

class NodeIdentityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("node_identity_test_" + NewUlid());
    std::filesystem::create_directories(dir_);
    ca_ = *x509::NewCa("test CA", absl::Hours(24 * 3650));
    Restart();
  }
  void TearDown() override {
    identities_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  // A new store connection and NodeIdentities on the same file and CA.
  void Restart() {
    identities_.reset();
    store_.reset();
    storage::SqliteOptions options;
    options.path = dir_ + "/h.db";
    auto store = storage::OpenSqliteStore(options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    identities_ = std::make_unique<NodeIdentities>(store_.get(), ca_, &clock_, kValidity);
  }
  // Enrolls `node` with a new key; answers its key and certificate.
  x509::KeyAndCert Enroll(const std::string& node) {
    x509::KeyAndCert out;
    out.key_pem = *x509::NewPrivateKeyPem();
    v1::EnrollRequest request;
    request.set_node_name(node);
    request.set_csr_pem(*x509::NewCsrPem(out.key_pem, node));
    absl::StatusOr<v1::EnrollResponse> enrolled =
        identities_->Enroll(request, Principal{"enroll-1", Role::kEnroll});
    EXPECT_TRUE(enrolled.ok()) << enrolled.status();
    if (enrolled.ok()) out.cert_pem = enrolled->certificate_pem();
    return out;
  }
  // Renews with a new key as the holder of `presented`.
  absl::StatusOr<x509::KeyAndCert> Renew(const x509::KeyAndCert& presented,
                                         const std::string& csr_name = "whoever") {
    x509::KeyAndCert out;
    out.key_pem = *x509::NewPrivateKeyPem();
    v1::RenewRequest request;
    request.set_csr_pem(*x509::NewCsrPem(out.key_pem, csr_name));
    absl::StatusOr<v1::RenewResponse> renewed = identities_->Renew(presented.cert_pem, request);
    if (!renewed.ok()) return renewed.status();
    out.cert_pem = renewed->certificate_pem();
    return out;
  }
  std::string StoredSerial(const std::string& node) {
    return (*store_->GetNodeIdentity(node))->serial;
  }

  std::string dir_;
  x509::KeyAndCert ca_;
  FakeClock clock_{absl::Now()};
  std::unique_ptr<storage::Store> store_;
  std::unique_ptr<NodeIdentities> identities_;
};

TEST_F(NodeIdentityTest, ARenewalKeepsTheNameRotatesTheKeyAndBecomesCurrent) {
  const x509::KeyAndCert first = Enroll("gpu-07");
  const x509::CertInfo first_info = *x509::ParseCert(first.cert_pem);
  // Valid for the validity from now, a little before now too.
  EXPECT_EQ(absl::ToUnixSeconds(first_info.not_after),
            absl::ToUnixSeconds(clock_.Now() + kValidity));
  EXPECT_LT(first_info.not_before, clock_.Now());
  clock_.Advance(kValidity * 2 / 3);
  absl::StatusOr<x509::KeyAndCert> second = Renew(first, "someone-else");
  ASSERT_TRUE(second.ok()) << second.status();
  const x509::CertInfo info = *x509::ParseCert(second->cert_pem);
  EXPECT_EQ(info.common_name, "gpu-07");  // the presented certificate's, not the CSR's
  EXPECT_TRUE(x509::KeyMatchesCert(second->key_pem, second->cert_pem));
  EXPECT_TRUE(x509::VerifyIssuedBy(second->cert_pem, ca_.cert_pem).ok());
  EXPECT_NE(info.public_key_fingerprint, first_info.public_key_fingerprint);
  EXPECT_EQ(absl::ToUnixSeconds(info.not_after), absl::ToUnixSeconds(clock_.Now() + kValidity));
  EXPECT_EQ(StoredSerial("gpu-07"), info.serial_hex);
  const storage::NodeIdentityRecord stored = **store_->GetNodeIdentity("gpu-07");
  EXPECT_EQ(stored.fingerprint, info.fingerprint);
  EXPECT_EQ(stored.enrolled_by, "enroll-1");  // the enrollment stays what it was

  // The overlap: the old certificate still authenticates (the answer may
  // have been lost) until the node presents its new one.
  EXPECT_EQ(*identities_->NodeOfCertificate(first.cert_pem), "gpu-07");
  EXPECT_EQ(*identities_->NodeOfCertificate(second->cert_pem), "gpu-07");
  absl::StatusOr<std::string> old = identities_->NodeOfCertificate(first.cert_pem);
  ASSERT_FALSE(old.ok());
  EXPECT_TRUE(absl::IsUnauthenticated(old.status()));
  EXPECT_THAT(old.status().message(), HasSubstr("not its current one"));
  EXPECT_THAT(old.status().message(), HasSubstr(info.serial_hex));
  // Nor can it renew any more.
  EXPECT_TRUE(absl::IsUnauthenticated(Renew(first).status()));
}

TEST_F(NodeIdentityTest, ALostAnswerIsRenewedAgainFromTheOldCertificate) {
  const x509::KeyAndCert first = Enroll("gpu-07");
  clock_.Advance(kValidity * 2 / 3);
  ASSERT_TRUE(Renew(first).ok());  // its answer never reached the node
  absl::StatusOr<x509::KeyAndCert> again = Renew(first);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(StoredSerial("gpu-07"), x509::ParseCert(again->cert_pem)->serial_hex);
  EXPECT_EQ(*identities_->NodeOfCertificate(again->cert_pem), "gpu-07");
  EXPECT_FALSE(identities_->NodeOfCertificate(first.cert_pem).ok());
}

TEST_F(NodeIdentityTest, ANewCertificateAndTheSameKeyAreRefused) {
  const x509::KeyAndCert first = Enroll("gpu-07");
  clock_.Advance(kValidity / 5);
  absl::Status early = Renew(first).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(early)) << early;
  EXPECT_THAT(early.message(), HasSubstr("renew it after"));
  clock_.Advance(kValidity / 10);
  v1::RenewRequest same_key;
  same_key.set_csr_pem(*x509::NewCsrPem(first.key_pem, "gpu-07"));
  absl::Status reused = identities_->Renew(first.cert_pem, same_key).status();
  EXPECT_TRUE(absl::IsInvalidArgument(reused)) << reused;
  EXPECT_THAT(reused.message(), HasSubstr("new key"));
  v1::RenewRequest empty;
  EXPECT_TRUE(absl::IsInvalidArgument(identities_->Renew(first.cert_pem, empty).status()));
  v1::RenewRequest garbage;
  garbage.set_csr_pem("-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n");
  EXPECT_TRUE(absl::IsInvalidArgument(identities_->Renew(first.cert_pem, garbage).status()));
  v1::RenewRequest huge;
  huge.set_csr_pem(std::string(20000, 'x'));
  EXPECT_TRUE(absl::IsInvalidArgument(identities_->Renew(first.cert_pem, huge).status()));
  EXPECT_EQ(StoredSerial("gpu-07"), x509::ParseCert(first.cert_pem)->serial_hex);
}

TEST_F(NodeIdentityTest, RevokedExpiredForeignAndUncertifiedCallersCannotRenew) {
  const x509::KeyAndCert revoked = Enroll("rev-1");
  const x509::KeyAndCert expiring = Enroll("old-1");
  clock_.Advance(kValidity * 2 / 3);
  // Revoked, in the middle of an overlap too: neither certificate renews.
  absl::StatusOr<x509::KeyAndCert> renewed = Renew(revoked);
  ASSERT_TRUE(renewed.ok());
  ASSERT_TRUE(identities_->Revoke("rev-1").ok());
  for (const x509::KeyAndCert* c : {&revoked, static_cast<const x509::KeyAndCert*>(&*renewed)}) {
    absl::Status s = Renew(*c).status();
    EXPECT_TRUE(absl::IsUnauthenticated(s)) << s;
  }
  EXPECT_THAT(std::string(Renew(*renewed).status().message()), HasSubstr("was revoked"));

  // Expired.
  clock_.Advance(kValidity / 2);
  absl::Status expired = Renew(expiring).status();
  EXPECT_TRUE(absl::IsUnauthenticated(expired)) << expired;
  EXPECT_THAT(expired.message(), HasSubstr("expired at"));

  // Another CA's certificate for an enrolled name.
  const x509::KeyAndCert fresh = Enroll("gpu-08");
  clock_.Advance(kValidity * 2 / 3);
  x509::KeyAndCert other_ca = *x509::NewCa("other", absl::Hours(24 * 3650));
  x509::KeyAndCert foreign;
  foreign.key_pem = *x509::NewPrivateKeyPem();
  foreign.cert_pem = *x509::SignClientCsr(other_ca, *x509::NewCsrPem(foreign.key_pem, "gpu-08"),
                                          "gpu-08", clock_.Now(), kValidity);
  absl::Status other = Renew(foreign).status();
  EXPECT_TRUE(absl::IsUnauthenticated(other)) << other;
  EXPECT_THAT(other.message(), HasSubstr("not from this controller's CA"));
  // No certificate at all (what the gateway passes for a cert-less call
  // never gets here: it refuses first; the core refuses too).
  absl::Status none = Renew(x509::KeyAndCert{}).status();
  EXPECT_TRUE(absl::IsUnauthenticated(none)) << none;
  // A certificate from this CA for a name never enrolled.
  x509::KeyAndCert ghost;
  ghost.key_pem = *x509::NewPrivateKeyPem();
  ghost.cert_pem = *x509::SignClientCsr(ca_, *x509::NewCsrPem(ghost.key_pem, "ghost"), "ghost",
                                        clock_.Now() - absl::Hours(24 * 70), kValidity);
  EXPECT_TRUE(absl::IsUnauthenticated(Renew(ghost).status()));
  EXPECT_EQ(StoredSerial("gpu-08"), x509::ParseCert(fresh.cert_pem)->serial_hex);
}

TEST_F(NodeIdentityTest, ARestartEndsTheOverlapAndReEnrollingForgetsIt) {
  const x509::KeyAndCert first = Enroll("gpu-07");
  clock_.Advance(kValidity * 2 / 3);
  absl::StatusOr<x509::KeyAndCert> second = Renew(first);
  ASSERT_TRUE(second.ok());
  Restart();
  EXPECT_FALSE(identities_->NodeOfCertificate(first.cert_pem).ok());
  EXPECT_EQ(*identities_->NodeOfCertificate(second->cert_pem), "gpu-07");

  // An overlap open at a revoke does not carry over to the next enrollment.
  clock_.Advance(kValidity * 2 / 3);
  absl::StatusOr<x509::KeyAndCert> third = Renew(*second);
  ASSERT_TRUE(third.ok());
  ASSERT_TRUE(identities_->Revoke("gpu-07").ok());
  const x509::KeyAndCert again = Enroll("gpu-07");
  EXPECT_FALSE(identities_->NodeOfCertificate(second->cert_pem).ok());
  EXPECT_FALSE(identities_->NodeOfCertificate(third->cert_pem).ok());
  EXPECT_EQ(*identities_->NodeOfCertificate(again.cert_pem), "gpu-07");
}

}  // namespace
}  // namespace fleetbench::controller
