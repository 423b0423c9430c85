// common/x509.h — the certificates fleetbench makes and checks, with
// OpenSSL's libcrypto: a private CA, the controller's server certificate,
// a node's key and certificate signing request, and the client certificate
// the CA issues for one node name (docs/security.md).
//
// Contract: keys are EC P-256 in PEM (PKCS#8); nothing here writes files or
// touches the network. Every parse of outside input (a CSR, a peer's
// certificate) answers INVALID_ARGUMENT with one line on malformed input.
// Fingerprints are "sha256:" + 64 lowercase hex digits of the DER.
#ifndef FLEETBENCH_COMMON_X509_H_
#define FLEETBENCH_COMMON_X509_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace fleetbench::x509 {

struct KeyAndCert {
  std::string key_pem;
  std::string cert_pem;
};

// What a certificate says, as far as fleetbench reads it.
struct CertInfo {
  std::string common_name;
  std::string serial_hex;
  std::string fingerprint;  // sha256:HEX of the DER
  // sha256:HEX of the public key's bits (X509_pubkey_digest): the same for
  // two certificates of one key, so a renewal can insist on a new key.
  std::string public_key_fingerprint;
  absl::Time not_before;
  absl::Time not_after;
  bool is_ca = false;
  std::vector<std::string> dns_names;
  std::vector<std::string> ip_addresses;  // "127.0.0.1", "::1"
};

// A new EC P-256 private key.
absl::StatusOr<std::string> NewPrivateKeyPem();
// A self-signed CA valid from now - 1h for `validity`.
absl::StatusOr<KeyAndCert> NewCa(const std::string& common_name, absl::Duration validity);
// A server certificate signed by `ca` for `names`: each an IP address
// (v4 or v6) or a DNS name. The first is the common name.
absl::StatusOr<KeyAndCert> NewServerCert(const KeyAndCert& ca, const std::vector<std::string>& names,
                                         absl::Duration validity);
// A PKCS#10 request for `common_name`, signed by `key_pem`.
absl::StatusOr<std::string> NewCsrPem(const std::string& key_pem, const std::string& common_name);
// Checks the CSR's self-signature and issues a client certificate for
// `node_name` (CN and a DNS SAN; extendedKeyUsage clientAuth) with the
// CSR's public key, valid from `not_before` for `validity`. The CSR's own
// subject is ignored: the name is the caller's decision.
absl::StatusOr<std::string> SignClientCsr(const KeyAndCert& ca, const std::string& csr_pem,
                                          const std::string& node_name, absl::Time not_before,
                                          absl::Duration validity);
// The first certificate in `pem`.
absl::StatusOr<CertInfo> ParseCert(const std::string& pem);
// OK when `pem` opens with a PEM CERTIFICATE block whose DER is one whole
// ASN.1 SEQUENCE; its contents are not parsed. For a client's --ca, which
// the TLS handshake reads in full anyway: this catches the wrong file
// (a key, a log, an empty file) before dialling, for a fraction of a parse.
absl::Status CheckCertPem(const std::string& pem);
// Every certificate in `pem`, in order (a chain).
absl::StatusOr<std::vector<std::string>> SplitPemChain(const std::string& pem);
// OK when `cert_pem` is signed by the key of `ca_pem` and issued by its subject.
absl::Status VerifyIssuedBy(const std::string& cert_pem, const std::string& ca_pem);
// Whether `key_pem` is the private key of `cert_pem`'s public key.
bool KeyMatchesCert(const std::string& key_pem, const std::string& cert_pem);
// "sha256:HEX" or "HEX" (colons allowed) -> "sha256:hex"; INVALID_ARGUMENT else.
absl::StatusOr<std::string> NormalizeFingerprint(const std::string& text);

}  // namespace fleetbench::x509

#endif  // FLEETBENCH_COMMON_X509_H_
