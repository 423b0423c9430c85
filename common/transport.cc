#include "common/transport.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/pem_files.h"
#include "common/x509.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"

namespace fleetbench {

bool IsLocalAddress(const std::string& address) { return absl::StartsWith(address, "unix:"); }

absl::Status CheckLocalSocketOwner(const std::string& address) {
  // gRPC's spellings: unix:relative/or/absolute and unix:///absolute.
  std::string path = address.substr(5);
  if (absl::StartsWith(path, "//")) path = path.substr(2);
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return absl::OkStatus();
  if (!S_ISSOCK(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(path, " is not a socket"));
  }
  if (st.st_uid != geteuid() && st.st_uid != 0) {
    return absl::PermissionDeniedError(absl::StrCat(
        path, " belongs to uid ", st.st_uid, ", not to you or root: the token is not sent there"));
  }
  return absl::OkStatus();
}

std::shared_ptr<grpc::ChannelCredentials> ChannelCredentialsFor(const std::string& address,
                                                                const ClientTls& tls) {
  if (IsLocalAddress(address)) return grpc::experimental::LocalCredentials(UDS);
  if (tls.insecure) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = tls.ca_pem;
  ssl.pem_private_key = tls.key_pem;
  ssl.pem_cert_chain = tls.cert_pem;
  return grpc::SslCredentials(ssl);
}

std::shared_ptr<grpc::Channel> DialController(const std::string& address, const ClientTls& tls,
                                              grpc::ChannelArguments args) {
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel(address, ChannelCredentialsFor(address, tls), args);
}

absl::StatusOr<std::string> FindCaFile(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("FLEETBENCH_CA"); env != nullptr && *env != '\0') return env;
  if (const char* token = std::getenv("FLEETBENCH_TOKEN_FILE"); token != nullptr) {
    const std::string path = token;
    if (absl::EndsWith(path, ".token")) {
      const std::string ca = path.substr(0, path.size() - 6) + ".tls/ca.pem";
      if (FileExists(ca)) return ca;
    }
  }
  return absl::NotFoundError(
      "no CA to check the controller with: pass --ca FILE or set FLEETBENCH_CA (the controller "
      "prints the path at start: DB.tls/ca.pem), or --insecure for a plaintext controller");
}

absl::StatusOr<std::string> LoadCaPem(const std::string& flag) {
  absl::StatusOr<std::string> path = FindCaFile(flag);
  if (!path.ok()) return path.status();
  absl::StatusOr<std::string> pem = ReadSmallFile(*path);
  if (!pem.ok()) return absl::NotFoundError(absl::StrCat("CA file ", pem.status().message()));
  // Shape only: the handshake parses it, and a full parse here was 7% of a
  // `history` call (docs/results-log.md, "The client binary").
  if (absl::Status shape = x509::CheckCertPem(*pem); !shape.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("CA file ", *path, ": ", shape.message()));
  }
  return *pem;
}

std::string ExplainUnavailable(const std::string& address, const ClientTls& tls,
                               const std::string& message) {
  if (IsLocalAddress(address)) {
    return absl::StrCat(message,
                        " (is the controller running, as you? Its local socket, DB.sock by "
                        "default, is made at start and only its own user may connect)");
  }
  if (tls.insecure) {
    return absl::StrCat(message,
                        " (this client speaks plaintext (--insecure); a controller started "
                        "without --insecure serves TLS only: drop --insecure and pass --ca)");
  }
  if (absl::StrContains(message, "Ssl") || absl::StrContains(message, "SSL") ||
      absl::StrContains(message, "handshake") || absl::StrContains(message, "ertificate") ||
      absl::StrContains(message, "Socket closed") || absl::StrContains(message, "connect to all")) {
    return absl::StrCat(message,
                        " (TLS with the controller failed: is it started with --insecure "
                        "(then pass --insecure here too), or is --ca / FLEETBENCH_CA not the CA "
                        "it printed at start, or is the address not one its certificate names "
                        "(controller --tls-san)?)");
  }
  return message;
}

}  // namespace fleetbench
