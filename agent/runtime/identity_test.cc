// The agent's identity folder across a renewal a crash interrupted: every
// point a stop can come leaves a key and a certificate that belong
// together (agent/runtime/identity.h). The folder states are the ones
// RenewIdentity passes through, made here with real keys and certificates.
#include "agent/runtime/identity.h"

#include <filesystem>
#include <string>

#include "absl/time/clock.h"
#include "common/pem_files.h"
#include "common/ulid.h"
#include "common/x509.h"
#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

class IdentityRenewalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    state_ = std::filesystem::temp_directory_path() / ("identity_test_" + NewUlid());
    std::filesystem::create_directories(IdentityDir(state_));
    ca_ = *x509::NewCa("ca", absl::Hours(24));
    old_ = Issue();
    new_ = Issue();
    Put("key.pem", old_.key_pem);
    Put("cert.pem", old_.cert_pem);
  }
  void TearDown() override { std::filesystem::remove_all(state_); }
  x509::KeyAndCert Issue() {
    x509::KeyAndCert out;
    out.key_pem = *x509::NewPrivateKeyPem();
    out.cert_pem = *x509::SignClientCsr(ca_, *x509::NewCsrPem(out.key_pem, "n"), "n",
                                        absl::Now(), absl::Hours(1));
    return out;
  }
  std::string Path(const std::string& name) { return IdentityDir(state_) + "/" + name; }
  void Put(const std::string& name, const std::string& content) {
    ASSERT_TRUE(WriteFileAtomically(Path(name), content, 0600).ok());
  }
  // The pair on disk after FinishInterruptedRenewal; nothing staged left.
  x509::KeyAndCert Settled(bool expect_finished) {
    absl::StatusOr<bool> finished = FinishInterruptedRenewal(state_);
    EXPECT_TRUE(finished.ok()) << finished.status();
    EXPECT_EQ(finished.value_or(!expect_finished), expect_finished);
    EXPECT_FALSE(FileExists(Path("renew.key.pem")));
    EXPECT_FALSE(FileExists(Path("renew.cert.pem")));
    x509::KeyAndCert on_disk{*ReadSmallFile(Path("key.pem")), *ReadSmallFile(Path("cert.pem"))};
    EXPECT_TRUE(x509::KeyMatchesCert(on_disk.key_pem, on_disk.cert_pem));
    return on_disk;
  }

  std::string state_;
  x509::KeyAndCert ca_, old_, new_;
};

TEST_F(IdentityRenewalTest, NothingStagedLeavesTheIdentityAsItIs) {
  EXPECT_EQ(Settled(false).cert_pem, old_.cert_pem);
}

TEST_F(IdentityRenewalTest, AStopBeforeTheCertificateCameKeepsTheOldPair) {
  Put("renew.key.pem", new_.key_pem);
  EXPECT_EQ(Settled(false).cert_pem, old_.cert_pem);
}

TEST_F(IdentityRenewalTest, AStopAfterTheCertificateWasKeptFinishesTheRenewal) {
  Put("renew.key.pem", new_.key_pem);
  Put("renew.cert.pem", new_.cert_pem);
  EXPECT_EQ(Settled(true).cert_pem, new_.cert_pem);
}

TEST_F(IdentityRenewalTest, AStopBetweenTheTwoRenamesFinishesTheRenewal) {
  Put("key.pem", new_.key_pem);  // the key was renamed already
  Put("renew.cert.pem", new_.cert_pem);
  EXPECT_EQ(Settled(true).cert_pem, new_.cert_pem);
}

TEST_F(IdentityRenewalTest, AStagedCertificateOfNoKeyHereIsDropped) {
  Put("renew.cert.pem", Issue().cert_pem);
  EXPECT_EQ(Settled(false).cert_pem, old_.cert_pem);
}

TEST_F(IdentityRenewalTest, RenewalTimeIsTheFractionOfTheLife) {
  x509::CertInfo info;
  info.not_before = absl::FromUnixSeconds(1000);
  info.not_after = absl::FromUnixSeconds(1900);
  EXPECT_NEAR(absl::ToDoubleSeconds(RenewalTime(info, 2.0 / 3) - absl::FromUnixSeconds(1600)),
              0, 1e-3);
}

}  // namespace
}  // namespace fleetbench::agent
