#include "common/x509.h"

#include <arpa/inet.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace fleetbench::x509 {
namespace {

template <typename T, void (*F)(T*)>
struct Deleter {
  void operator()(T* p) const { F(p); }
};
using Bio = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using Key = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using Cert = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using Req = std::unique_ptr<X509_REQ, Deleter<X509_REQ, X509_REQ_free>>;
using Names = std::unique_ptr<GENERAL_NAMES, Deleter<GENERAL_NAMES, GENERAL_NAMES_free>>;

// The newest OpenSSL error as text, and the queue cleared.
std::string OpensslError() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "unknown error";
  char buf[256];
  ERR_error_string_n(code, buf, sizeof(buf));
  return buf;
}

absl::Status Fail(absl::string_view what) {
  return absl::InternalError(absl::StrCat(what, ": ", OpensslError()));
}

Bio ReadBio(const std::string& text) {
  return Bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

std::string BioText(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return std::string(data, n > 0 ? n : 0);
}

absl::StatusOr<Key> ParseKey(const std::string& pem) {
  Bio bio = ReadBio(pem);
  Key key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key) {
    ERR_clear_error();
    return absl::InvalidArgumentError("not a PEM private key");
  }
  return key;
}

absl::StatusOr<Cert> ParseX509(const std::string& pem) {
  Bio bio = ReadBio(pem);
  Cert cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) {
    ERR_clear_error();
    return absl::InvalidArgumentError("not a PEM certificate");
  }
  return cert;
}

std::string KeyPem(EVP_PKEY* key) {
  Bio bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
  return BioText(bio.get());
}

std::string CertPem(X509* cert) {
  Bio bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), cert);
  return BioText(bio.get());
}

absl::StatusOr<Key> NewKey() {
  Key key(EVP_EC_gen("P-256"));
  if (!key) return Fail("generating an EC P-256 key");
  return key;
}

// A random positive 127-bit serial (RFC 5280: at most 20 octets).
absl::Status SetRandomSerial(X509* cert) {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) return Fail("random serial");
  bytes[0] &= 0x7f;
  std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>> bn(BN_bin2bn(bytes, sizeof(bytes), nullptr));
  if (!bn || !BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert))) return Fail("serial");
  return absl::OkStatus();
}

absl::Status SetValidity(X509* cert, absl::Time not_before, absl::Duration validity) {
  const time_t from = absl::ToTimeT(not_before);
  const time_t to = absl::ToTimeT(not_before + validity);
  if (!ASN1_TIME_set(X509_getm_notBefore(cert), from) ||
      !ASN1_TIME_set(X509_getm_notAfter(cert), to)) {
    return Fail("validity");
  }
  return absl::OkStatus();
}

absl::Status SetCommonName(X509_NAME* name, const std::string& cn) {
  if (!X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                  reinterpret_cast<const unsigned char*>(cn.data()),
                                  static_cast<int>(cn.size()), -1, 0)) {
    return Fail("common name");
  }
  return absl::OkStatus();
}

absl::Status AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  std::unique_ptr<X509_EXTENSION, Deleter<X509_EXTENSION, X509_EXTENSION_free>> ext(
      X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  if (!ext || !X509_add_ext(cert, ext.get(), -1)) return Fail(absl::StrCat("extension ", value));
  return absl::OkStatus();
}

bool IsIpAddress(const std::string& name, unsigned char out[16], int* len) {
  if (inet_pton(AF_INET, name.c_str(), out) == 1) {
    *len = 4;
    return true;
  }
  if (inet_pton(AF_INET6, name.c_str(), out) == 1) {
    *len = 16;
    return true;
  }
  return false;
}

absl::Status AddSubjectAltNames(X509* cert, const std::vector<std::string>& names) {
  Names sans(sk_GENERAL_NAME_new_null());
  for (const std::string& name : names) {
    GENERAL_NAME* entry = GENERAL_NAME_new();
    unsigned char ip[16];
    int len = 0;
    if (IsIpAddress(name, ip, &len)) {
      ASN1_OCTET_STRING* octets = ASN1_OCTET_STRING_new();
      ASN1_OCTET_STRING_set(octets, ip, len);
      GENERAL_NAME_set0_value(entry, GEN_IPADD, octets);
    } else {
      ASN1_IA5STRING* dns = ASN1_IA5STRING_new();
      ASN1_STRING_set(dns, name.data(), static_cast<int>(name.size()));
      GENERAL_NAME_set0_value(entry, GEN_DNS, dns);
    }
    sk_GENERAL_NAME_push(sans.get(), entry);
  }
  if (!X509_add1_ext_i2d(cert, NID_subject_alt_name, sans.get(), 0, 0)) {
    return Fail("subjectAltName");
  }
  return absl::OkStatus();
}

std::string Hex(const unsigned char* data, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    out.push_back(kDigits[data[i] >> 4]);
    out.push_back(kDigits[data[i] & 15]);
  }
  return out;
}

absl::Time AsnTime(const ASN1_TIME* t) {
  struct tm tm = {};
  if (ASN1_TIME_to_tm(t, &tm) != 1) return absl::InfinitePast();
  return absl::FromTimeT(timegm(&tm));
}

// A certificate with a fresh serial, `subject_cn`, `key`'s public half,
// issued by `issuer` (nullptr: itself).
absl::StatusOr<Cert> NewCert(const std::string& subject_cn, EVP_PKEY* public_key, X509* issuer,
                             absl::Time not_before, absl::Duration validity) {
  Cert cert(X509_new());
  if (!cert || !X509_set_version(cert.get(), 2)) return Fail("new certificate");
  if (absl::Status s = SetRandomSerial(cert.get()); !s.ok()) return s;
  if (absl::Status s = SetValidity(cert.get(), not_before, validity); !s.ok()) return s;
  if (absl::Status s = SetCommonName(X509_get_subject_name(cert.get()), subject_cn); !s.ok()) {
    return s;
  }
  X509_set_issuer_name(cert.get(), X509_get_subject_name(issuer ? issuer : cert.get()));
  if (!X509_set_pubkey(cert.get(), public_key)) return Fail("public key");
  return cert;
}

absl::Status Sign(X509* cert, EVP_PKEY* key) {
  if (X509_sign(cert, key, EVP_sha256()) <= 0) return Fail("signing");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> NewPrivateKeyPem() {
  absl::StatusOr<Key> key = NewKey();
  if (!key.ok()) return key.status();
  return KeyPem(key->get());
}

absl::StatusOr<KeyAndCert> NewCa(const std::string& common_name, absl::Duration validity) {
  absl::StatusOr<Key> key = NewKey();
  if (!key.ok()) return key.status();
  absl::StatusOr<Cert> cert =
      NewCert(common_name, key->get(), nullptr, absl::Now() - absl::Hours(1), validity);
  if (!cert.ok()) return cert.status();
  X509* c = cert->get();
  for (auto [nid, value] : {std::pair{NID_basic_constraints, "critical,CA:TRUE,pathlen:0"},
                            std::pair{NID_key_usage, "critical,keyCertSign,cRLSign"},
                            std::pair{NID_subject_key_identifier, "hash"}}) {
    if (absl::Status s = AddExtension(c, c, nid, value); !s.ok()) return s;
  }
  if (absl::Status s = Sign(c, key->get()); !s.ok()) return s;
  return KeyAndCert{KeyPem(key->get()), CertPem(c)};
}

absl::StatusOr<KeyAndCert> NewServerCert(const KeyAndCert& ca, const std::vector<std::string>& names,
                                         absl::Duration validity) {
  if (names.empty()) return absl::InvalidArgumentError("a server certificate needs a name");
  absl::StatusOr<Key> ca_key = ParseKey(ca.key_pem);
  if (!ca_key.ok()) return ca_key.status();
  absl::StatusOr<Cert> ca_cert = ParseX509(ca.cert_pem);
  if (!ca_cert.ok()) return ca_cert.status();
  absl::StatusOr<Key> key = NewKey();
  if (!key.ok()) return key.status();
  absl::StatusOr<Cert> cert =
      NewCert(names[0], key->get(), ca_cert->get(), absl::Now() - absl::Hours(1), validity);
  if (!cert.ok()) return cert.status();
  X509* c = cert->get();
  for (auto [nid, value] : {std::pair{NID_basic_constraints, "critical,CA:FALSE"},
                            std::pair{NID_key_usage, "critical,digitalSignature"},
                            std::pair{NID_ext_key_usage, "serverAuth"},
                            std::pair{NID_authority_key_identifier, "keyid"}}) {
    if (absl::Status s = AddExtension(c, ca_cert->get(), nid, value); !s.ok()) return s;
  }
  if (absl::Status s = AddSubjectAltNames(c, names); !s.ok()) return s;
  if (absl::Status s = Sign(c, ca_key->get()); !s.ok()) return s;
  return KeyAndCert{KeyPem(key->get()), CertPem(c)};
}

absl::StatusOr<std::string> NewCsrPem(const std::string& key_pem, const std::string& common_name) {
  absl::StatusOr<Key> key = ParseKey(key_pem);
  if (!key.ok()) return key.status();
  Req req(X509_REQ_new());
  if (!req || !X509_REQ_set_version(req.get(), 0)) return Fail("new request");
  X509_NAME* name = X509_REQ_get_subject_name(req.get());
  if (absl::Status s = SetCommonName(name, common_name); !s.ok()) return s;
  if (!X509_REQ_set_pubkey(req.get(), key->get())) return Fail("request key");
  if (X509_REQ_sign(req.get(), key->get(), EVP_sha256()) <= 0) return Fail("signing request");
  Bio bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509_REQ(bio.get(), req.get());
  return BioText(bio.get());
}

absl::StatusOr<std::string> SignClientCsr(const KeyAndCert& ca, const std::string& csr_pem,
                                          const std::string& node_name, absl::Time not_before,
                                          absl::Duration validity) {
  Bio bio = ReadBio(csr_pem);
  Req req(PEM_read_bio_X509_REQ(bio.get(), nullptr, nullptr, nullptr));
  if (!req) {
    ERR_clear_error();
    return absl::InvalidArgumentError("the certificate request is not a PEM CSR");
  }
  Key public_key(X509_REQ_get_pubkey(req.get()));
  if (!public_key || X509_REQ_verify(req.get(), public_key.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError("the certificate request's signature does not verify");
  }
  if (EVP_PKEY_get_base_id(public_key.get()) != EVP_PKEY_EC ||
      EVP_PKEY_get_bits(public_key.get()) < 256) {
    return absl::InvalidArgumentError("the certificate request's key must be EC P-256 or larger");
  }
  absl::StatusOr<Key> ca_key = ParseKey(ca.key_pem);
  if (!ca_key.ok()) return ca_key.status();
  absl::StatusOr<Cert> ca_cert = ParseX509(ca.cert_pem);
  if (!ca_cert.ok()) return ca_cert.status();
  absl::StatusOr<Cert> cert =
      NewCert(node_name, public_key.get(), ca_cert->get(), not_before, validity);
  if (!cert.ok()) return cert.status();
  X509* c = cert->get();
  for (auto [nid, value] : {std::pair{NID_basic_constraints, "critical,CA:FALSE"},
                            std::pair{NID_key_usage, "critical,digitalSignature"},
                            std::pair{NID_ext_key_usage, "clientAuth"},
                            std::pair{NID_authority_key_identifier, "keyid"}}) {
    if (absl::Status s = AddExtension(c, ca_cert->get(), nid, value); !s.ok()) return s;
  }
  if (absl::Status s = AddSubjectAltNames(c, {node_name}); !s.ok()) return s;
  if (absl::Status s = Sign(c, ca_key->get()); !s.ok()) return s;
  return CertPem(c);
}

absl::StatusOr<CertInfo> ParseCert(const std::string& pem) {
  absl::StatusOr<Cert> cert = ParseX509(pem);
  if (!cert.ok()) return cert.status();
  X509* c = cert->get();
  CertInfo info;
  X509_NAME* subject = X509_get_subject_name(c);
  const int at = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
  if (at >= 0) {
    const ASN1_STRING* cn = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, at));
    info.common_name.assign(reinterpret_cast<const char*>(ASN1_STRING_get0_data(cn)),
                            ASN1_STRING_length(cn));
  }
  std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>> serial(
      ASN1_INTEGER_to_BN(X509_get0_serialNumber(c), nullptr));
  if (serial) {
    char* hex = BN_bn2hex(serial.get());
    info.serial_hex = absl::AsciiStrToLower(hex);
    OPENSSL_free(hex);
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (X509_digest(c, EVP_sha256(), digest, &n) != 1) return Fail("fingerprint");
  info.fingerprint = "sha256:" + Hex(digest, n);
  if (X509_pubkey_digest(c, EVP_sha256(), digest, &n) != 1) return Fail("public key digest");
  info.public_key_fingerprint = "sha256:" + Hex(digest, n);
  info.not_before = AsnTime(X509_get0_notBefore(c));
  info.not_after = AsnTime(X509_get0_notAfter(c));
  info.is_ca = X509_check_ca(c) > 0;
  Names sans(static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(c, NID_subject_alt_name, nullptr, nullptr)));
  for (int i = 0; sans && i < sk_GENERAL_NAME_num(sans.get()); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(sans.get(), i);
    if (name->type == GEN_DNS) {
      info.dns_names.emplace_back(
          reinterpret_cast<const char*>(ASN1_STRING_get0_data(name->d.dNSName)),
          ASN1_STRING_length(name->d.dNSName));
    } else if (name->type == GEN_IPADD) {
      const int len = ASN1_STRING_length(name->d.iPAddress);
      char text[INET6_ADDRSTRLEN] = {};
      if (len == 4 || len == 16) {
        inet_ntop(len == 4 ? AF_INET : AF_INET6, ASN1_STRING_get0_data(name->d.iPAddress), text,
                  sizeof(text));
        info.ip_addresses.emplace_back(text);
      }
    }
  }
  return info;
}

absl::Status CheckCertPem(const std::string& pem) {
  Bio bio = ReadBio(pem);
  unsigned char* der = nullptr;
  long size = 0;
  char* name = nullptr;
  if (PEM_bytes_read_bio(&der, &size, &name, PEM_STRING_X509, bio.get(), nullptr, nullptr) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError("not a PEM certificate");
  }
  OPENSSL_free(name);
  // DER: tag 0x30 (SEQUENCE), then the length in short or long form.
  bool whole = size >= 2 && der[0] == 0x30;
  if (whole) {
    size_t length = der[1], header = 2;
    if (der[1] & 0x80) {
      const size_t digits = der[1] & 0x7f;
      whole = digits >= 1 && digits <= 4 && size >= static_cast<long>(2 + digits);
      length = 0;
      for (size_t i = 0; whole && i < digits; ++i) length = (length << 8) | der[2 + i];
      header = 2 + digits;
    }
    whole = whole && header + length == static_cast<size_t>(size);
  }
  OPENSSL_free(der);
  return whole ? absl::OkStatus() : absl::InvalidArgumentError("a PEM certificate block that is not DER");
}

absl::StatusOr<std::vector<std::string>> SplitPemChain(const std::string& pem) {
  Bio bio = ReadBio(pem);
  std::vector<std::string> out;
  while (true) {
    Cert cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
    if (!cert) break;
    out.push_back(CertPem(cert.get()));
  }
  ERR_clear_error();
  if (out.empty()) return absl::InvalidArgumentError("no PEM certificate");
  return out;
}

absl::Status VerifyIssuedBy(const std::string& cert_pem, const std::string& ca_pem) {
  absl::StatusOr<Cert> cert = ParseX509(cert_pem);
  if (!cert.ok()) return cert.status();
  absl::StatusOr<Cert> ca = ParseX509(ca_pem);
  if (!ca.ok()) return ca.status();
  if (X509_NAME_cmp(X509_get_issuer_name(cert->get()), X509_get_subject_name(ca->get())) != 0) {
    return absl::InvalidArgumentError("the certificate was not issued by this CA");
  }
  EVP_PKEY* ca_key = X509_get0_pubkey(ca->get());
  if (ca_key == nullptr || X509_verify(cert->get(), ca_key) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError("the certificate's signature is not this CA's");
  }
  return absl::OkStatus();
}

bool KeyMatchesCert(const std::string& key_pem, const std::string& cert_pem) {
  absl::StatusOr<Key> key = ParseKey(key_pem);
  absl::StatusOr<Cert> cert = ParseX509(cert_pem);
  if (!key.ok() || !cert.ok()) return false;
  const bool ok = X509_check_private_key(cert->get(), key->get()) == 1;
  ERR_clear_error();
  return ok;
}

absl::StatusOr<std::string> NormalizeFingerprint(const std::string& text) {
  std::string hex = absl::AsciiStrToLower(text);
  if (hex.rfind("sha256:", 0) == 0) hex = hex.substr(7);
  hex = absl::StrReplaceAll(hex, {{":", ""}});
  bool ok = hex.size() == 64;
  for (char c : hex) ok = ok && absl::ascii_isxdigit(c);
  if (!ok) {
    return absl::InvalidArgumentError(
        "a fingerprint is sha256: and 64 hex digits (the controller prints it at start)");
  }
  return "sha256:" + hex;
}

}  // namespace fleetbench::x509
