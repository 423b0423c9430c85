#include "common/x509.h"

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace fleetbench::x509 {
namespace {

TEST(X509, CaAndServerCertificateWithTheirNames) {
  absl::StatusOr<KeyAndCert> ca = NewCa("fleetbench test CA", absl::Hours(24));
  ASSERT_TRUE(ca.ok()) << ca.status();
  absl::StatusOr<CertInfo> ca_info = ParseCert(ca->cert_pem);
  ASSERT_TRUE(ca_info.ok()) << ca_info.status();
  EXPECT_TRUE(ca_info->is_ca);
  EXPECT_EQ(ca_info->common_name, "fleetbench test CA");
  EXPECT_EQ(ca_info->fingerprint.size(), 7u + 64u);

  absl::StatusOr<KeyAndCert> server =
      NewServerCert(*ca, {"localhost", "127.0.0.1", "::1", "ctl.example"}, absl::Hours(24));
  ASSERT_TRUE(server.ok()) << server.status();
  absl::StatusOr<CertInfo> info = ParseCert(server->cert_pem);
  ASSERT_TRUE(info.ok());
  EXPECT_FALSE(info->is_ca);
  EXPECT_EQ(info->dns_names, (std::vector<std::string>{"localhost", "ctl.example"}));
  EXPECT_EQ(info->ip_addresses, (std::vector<std::string>{"127.0.0.1", "::1"}));
  EXPECT_TRUE(VerifyIssuedBy(server->cert_pem, ca->cert_pem).ok());
  EXPECT_TRUE(KeyMatchesCert(server->key_pem, server->cert_pem));
  EXPECT_FALSE(KeyMatchesCert(ca->key_pem, server->cert_pem));

  absl::StatusOr<KeyAndCert> other = NewCa("fleetbench test CA", absl::Hours(24));
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(VerifyIssuedBy(server->cert_pem, other->cert_pem).ok());
}

TEST(X509, SignsANodesRequestForTheNameItIsGivenNotTheOneItAsksFor) {
  absl::StatusOr<KeyAndCert> ca = NewCa("ca", absl::Hours(24));
  ASSERT_TRUE(ca.ok());
  absl::StatusOr<std::string> key = NewPrivateKeyPem();
  ASSERT_TRUE(key.ok());
  absl::StatusOr<std::string> csr = NewCsrPem(*key, "someone-else");
  ASSERT_TRUE(csr.ok()) << csr.status();
  const absl::Time from = absl::Now();
  absl::StatusOr<std::string> cert = SignClientCsr(*ca, *csr, "gpu-07", from, absl::Hours(2));
  ASSERT_TRUE(cert.ok()) << cert.status();
  absl::StatusOr<CertInfo> info = ParseCert(*cert);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->common_name, "gpu-07");
  EXPECT_EQ(info->dns_names, std::vector<std::string>{"gpu-07"});
  EXPECT_EQ(absl::ToUnixSeconds(info->not_after), absl::ToUnixSeconds(from + absl::Hours(2)));
  EXPECT_TRUE(KeyMatchesCert(*key, *cert));
  EXPECT_TRUE(VerifyIssuedBy(*cert, ca->cert_pem).ok());
  EXPECT_FALSE(info->serial_hex.empty());
}

TEST(X509, TwoCertificatesOfOneKeyShareThePublicKeyFingerprintOnly) {
  absl::StatusOr<KeyAndCert> ca = NewCa("ca", absl::Hours(24));
  ASSERT_TRUE(ca.ok());
  const std::string key = *NewPrivateKeyPem();
  const std::string other_key = *NewPrivateKeyPem();
  auto issue = [&](const std::string& k) {
    return *ParseCert(*SignClientCsr(*ca, *NewCsrPem(k, "n"), "n", absl::Now(), absl::Hours(1)));
  };
  const CertInfo a = issue(key), b = issue(key), c = issue(other_key);
  EXPECT_NE(a.fingerprint, b.fingerprint);
  EXPECT_EQ(a.public_key_fingerprint, b.public_key_fingerprint);
  EXPECT_NE(a.public_key_fingerprint, c.public_key_fingerprint);
  EXPECT_EQ(a.public_key_fingerprint.size(), 7u + 64u);
}

TEST(X509, MalformedInputIsRefusedInOneLine) {
  absl::StatusOr<KeyAndCert> ca = NewCa("ca", absl::Hours(24));
  ASSERT_TRUE(ca.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(
      SignClientCsr(*ca, "-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n", "n", absl::Now(),
                    absl::Hours(1))
          .status()));
  // A request whose signature does not match its key: swap the signature
  // of one request into another.
  absl::StatusOr<std::string> key = NewPrivateKeyPem();
  absl::StatusOr<std::string> csr = NewCsrPem(*key, "n");
  ASSERT_TRUE(csr.ok());
  std::string bent = *csr;
  bent[bent.size() / 2] = bent[bent.size() / 2] == 'A' ? 'B' : 'A';
  EXPECT_FALSE(SignClientCsr(*ca, bent, "n", absl::Now(), absl::Hours(1)).ok());
  EXPECT_TRUE(absl::IsInvalidArgument(ParseCert("garbage").status()));
}

// A client's --ca is checked for its shape only: a certificate block of
// whole DER passes; another file, another PEM block, or a block cut short
// is refused before any dialling.
TEST(X509, CheckCertPemTakesACertificateAndRefusesOtherFiles) {
  absl::StatusOr<KeyAndCert> ca = NewCa("ca", absl::Hours(24));
  ASSERT_TRUE(ca.ok());
  EXPECT_TRUE(CheckCertPem(ca->cert_pem).ok());
  EXPECT_TRUE(CheckCertPem("# a comment first\n" + ca->cert_pem).ok());
  EXPECT_TRUE(absl::IsInvalidArgument(CheckCertPem("")));
  EXPECT_TRUE(absl::IsInvalidArgument(CheckCertPem("garbage\n")));
  EXPECT_TRUE(absl::IsInvalidArgument(CheckCertPem(ca->key_pem)));  // the CA's key, not its cert
  // A certificate block whose base64 holds something other than one DER
  // SEQUENCE: "hello world" encoded.
  EXPECT_TRUE(absl::IsInvalidArgument(
      CheckCertPem("-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQ=\n-----END CERTIFICATE-----\n")));
  // The same certificate with its last line of base64 gone: DER cut short.
  std::string cut = ca->cert_pem;
  const size_t end = cut.find("-----END");
  const size_t last_line = cut.rfind('\n', end - 2);
  cut.erase(last_line + 1, end - last_line - 1);
  EXPECT_TRUE(absl::IsInvalidArgument(CheckCertPem(cut))) << cut;
}

TEST(X509, FingerprintsAreNormalized) {
  const std::string hex(64, 'A');
  EXPECT_EQ(*NormalizeFingerprint("sha256:" + hex), "sha256:" + std::string(64, 'a'));
  EXPECT_EQ(*NormalizeFingerprint("AA:" + std::string(62, 'a')), "sha256:" + std::string(64, 'a'));
  EXPECT_FALSE(NormalizeFingerprint("sha256:abc").ok());
  EXPECT_FALSE(NormalizeFingerprint("sha256:" + std::string(64, 'g')).ok());
}

}  // namespace
}  // namespace fleetbench::x509
