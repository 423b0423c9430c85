#include "common/ca_fetch.h"

#include <netdb.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/x509.h"

namespace fleetbench {
namespace {

// "host:port", "[v6]:port" -> host, port.
bool SplitAddress(const std::string& address, std::string* host, std::string* port) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) return false;
  *host = address.substr(0, colon);
  *port = address.substr(colon + 1);
  if (host->size() >= 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);
  }
  return !host->empty() && !port->empty();
}

int Dial(const std::string& host, const std::string& port, absl::Duration timeout,
         std::string* error) {
  addrinfo hints = {};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    *error = gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    timeval tv = absl::ToTimeval(timeout);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      *error = std::strerror(errno);
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  return fd;
}

std::string PemOf(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  std::string out(data, n > 0 ? n : 0);
  BIO_free(bio);
  return out;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> FetchPresentedChain(const std::string& address,
                                                             absl::Duration timeout) {
  std::string host, port, error;
  if (!SplitAddress(address, &host, &port)) {
    return absl::InvalidArgumentError(absl::StrCat("bad address ", address));
  }
  const int fd = Dial(host, port, timeout, &error);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat("cannot reach the controller at ", address, ": ",
                                               error));
  }
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()),
                                                       SSL_CTX_free);
  // No verification here: there may be no CA yet. The caller checks.
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_NONE, nullptr);
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  static const unsigned char kAlpn[] = {2, 'h', '2'};
  SSL_CTX_set_alpn_protos(ctx.get(), kAlpn, sizeof(kAlpn));
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(ctx.get()), SSL_free);
  SSL_set_fd(ssl.get(), fd);
  SSL_set_tlsext_host_name(ssl.get(), host.c_str());
  const int rc = SSL_connect(ssl.get());
  absl::StatusOr<std::vector<std::string>> result;
  if (rc != 1) {
    char buf[256] = "handshake failed";
    if (unsigned long e = ERR_get_error(); e != 0) ERR_error_string_n(e, buf, sizeof(buf));
    result = absl::UnavailableError(absl::StrCat(
        "TLS handshake with ", address, " failed (", buf,
        "); a controller started with --insecure has no CA to pin"));
  } else {
    // The leaf first (the client side's chain may or may not hold it).
    std::vector<std::string> chain;
    if (X509* leaf = SSL_get0_peer_certificate(ssl.get()); leaf != nullptr) {
      chain.push_back(PemOf(leaf));
    }
    STACK_OF(X509)* peer_chain = SSL_get_peer_cert_chain(ssl.get());
    for (int i = 0; peer_chain != nullptr && i < sk_X509_num(peer_chain); ++i) {
      const std::string pem = PemOf(sk_X509_value(peer_chain, i));
      if (chain.empty() || pem != chain.front()) chain.push_back(pem);
    }
    result = std::move(chain);
  }
  ERR_clear_error();
  SSL_shutdown(ssl.get());
  close(fd);
  return result;
}

absl::StatusOr<std::string> FetchPinnedCa(const std::string& address,
                                          const std::string& fingerprint, absl::Duration timeout) {
  absl::StatusOr<std::vector<std::string>> chain = FetchPresentedChain(address, timeout);
  if (!chain.ok()) return chain.status();
  if (chain->empty()) return absl::UnavailableError("the controller presented no certificate");
  const std::string& leaf = chain->front();
  for (size_t i = 1; i < chain->size(); ++i) {
    const std::string& pem = (*chain)[i];
    absl::StatusOr<x509::CertInfo> info = x509::ParseCert(pem);
    if (!info.ok() || info->fingerprint != fingerprint) continue;
    if (!info->is_ca) {
      return absl::PermissionDeniedError(
          absl::StrCat("the certificate with fingerprint ", fingerprint, " is not a CA"));
    }
    if (absl::Status s = x509::VerifyIssuedBy(leaf, pem); !s.ok()) {
      return absl::PermissionDeniedError(absl::StrCat(
          "the controller's certificate is not signed by the pinned CA: ", s.message()));
    }
    return pem;
  }
  return absl::PermissionDeniedError(absl::StrCat(
      "the controller at ", address, " presents no CA with fingerprint ", fingerprint,
      " (check the fingerprint it printed at start)"));
}

}  // namespace fleetbench
