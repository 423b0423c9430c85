#include "controller/security/server_tls.h"

#include <ifaddrs.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/pem_files.h"

namespace fleetbench::controller {
namespace {

constexpr absl::Duration kCaValidity = absl::Hours(24 * 3650);
constexpr absl::Duration kServerValidity = absl::Hours(24 * 397);
constexpr absl::Duration kRenewWithin = absl::Hours(24 * 30);

// Whether `cert` (already parsed) names every one of `names`.
bool NamesAll(const x509::CertInfo& cert, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    const bool dns = std::find(cert.dns_names.begin(), cert.dns_names.end(), name) !=
                     cert.dns_names.end();
    const bool ip = std::find(cert.ip_addresses.begin(), cert.ip_addresses.end(), name) !=
                    cert.ip_addresses.end();
    if (!dns && !ip) return false;
  }
  return true;
}

void AddUnique(std::vector<std::string>* names, const std::string& name) {
  if (!name.empty() && std::find(names->begin(), names->end(), name) == names->end()) {
    names->push_back(name);
  }
}

// Writes `content` to `path` by rename, the new file's modification time
// (in whole seconds, what the watcher compares) later than the old one's.
absl::Status PublishServing(const std::string& path, const std::string& content) {
  struct stat old = {};
  const bool had = stat(path.c_str(), &old) == 0;
  const std::string next = path + ".next";
  if (absl::Status s = WriteFileAtomically(next, content, 0600); !s.ok()) return s;
  timespec times[2] = {};
  times[0].tv_nsec = UTIME_NOW;
  times[1].tv_sec = std::max<time_t>(time(nullptr), had ? old.st_mtime + 1 : 0);
  if (utimensat(AT_FDCWD, next.c_str(), times, 0) != 0 ||
      rename(next.c_str(), path.c_str()) != 0) {
    return absl::InternalError(absl::StrCat(path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status Publish(ServerTls* tls, const std::string& dir) {
  tls->serving_path = dir + "/serving.pem";
  const std::string content = tls->server.key_pem + tls->server.cert_pem + tls->ca.cert_pem;
  absl::StatusOr<std::string> now = ReadSmallFile(tls->serving_path);
  if (now.ok() && *now == content) return absl::OkStatus();
  if (absl::Status s = PublishServing(tls->serving_path, content); !s.ok()) return s;
  tls->serving_changed = true;
  return absl::OkStatus();
}

}  // namespace

std::vector<std::string> ServerNames(const std::string& listen,
                                     const std::vector<std::string>& extra) {
  std::vector<std::string> names;
  std::string host = listen.substr(0, listen.rfind(':'));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host == "0.0.0.0" || host == "::" || host.empty()) {
    ifaddrs* all = nullptr;
    if (getifaddrs(&all) == 0) {
      for (ifaddrs* a = all; a != nullptr; a = a->ifa_next) {
        if (a->ifa_addr == nullptr) continue;
        char text[INET6_ADDRSTRLEN] = {};
        if (a->ifa_addr->sa_family == AF_INET) {
          inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr, text,
                    sizeof(text));
        } else if (a->ifa_addr->sa_family == AF_INET6) {
          const auto* v6 = reinterpret_cast<sockaddr_in6*>(a->ifa_addr);
          if (IN6_IS_ADDR_LINKLOCAL(&v6->sin6_addr)) continue;  // needs a zone to dial
          inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof(text));
        }
        AddUnique(&names, text);
      }
      freeifaddrs(all);
    }
  } else {
    AddUnique(&names, host);
  }
  for (const char* local : {"127.0.0.1", "::1", "localhost"}) AddUnique(&names, local);
  char hostname[256] = {};
  if (gethostname(hostname, sizeof(hostname) - 1) == 0) AddUnique(&names, hostname);
  for (const std::string& name : extra) AddUnique(&names, name);
  return names;
}

absl::StatusOr<ServerTls> LoadOrMakeServerTls(const std::string& dir,
                                              const std::vector<std::string>& names) {
  if (absl::Status s = EnsureDir(dir, 0700); !s.ok()) return s;
  ServerTls tls;
  tls.ca_path = dir + "/ca.pem";
  const std::string ca_key = dir + "/ca.key";
  const std::string server_pem = dir + "/server.pem";
  const std::string server_key = dir + "/server.key";
  absl::StatusOr<std::string> cert = ReadSmallFile(tls.ca_path);
  absl::StatusOr<std::string> key = ReadSmallFile(ca_key);
  if (absl::IsNotFound(cert.status()) && absl::IsNotFound(key.status())) {
    absl::StatusOr<x509::KeyAndCert> ca = x509::NewCa("fleetbench controller CA", kCaValidity);
    if (!ca.ok()) return ca.status();
    // The key first: a crash between the two leaves no CA without its key.
    if (absl::Status s = WriteFileAtomically(ca_key, ca->key_pem, 0600); !s.ok()) return s;
    if (absl::Status s = WriteFileAtomically(tls.ca_path, ca->cert_pem, 0644); !s.ok()) return s;
    tls.ca = *ca;
    tls.made_ca = true;
  } else {
    if (!cert.ok()) return cert.status();
    if (!key.ok()) return key.status();
    if (!x509::KeyMatchesCert(*key, *cert)) {
      return absl::FailedPreconditionError(
          absl::StrCat(ca_key, " is not the key of ", tls.ca_path, "; restore the pair"));
    }
    tls.ca = {*key, *cert};
  }
  absl::StatusOr<x509::CertInfo> ca_info = x509::ParseCert(tls.ca.cert_pem);
  if (!ca_info.ok()) return ca_info.status();
  tls.ca_fingerprint = ca_info->fingerprint;

  absl::StatusOr<std::string> server_cert = ReadSmallFile(server_pem);
  absl::StatusOr<std::string> server_k = ReadSmallFile(server_key);
  bool fresh = server_cert.ok() && server_k.ok() && x509::KeyMatchesCert(*server_k, *server_cert) &&
               x509::VerifyIssuedBy(*server_cert, tls.ca.cert_pem).ok();
  if (fresh) {
    absl::StatusOr<x509::CertInfo> info = x509::ParseCert(*server_cert);
    fresh = info.ok() && NamesAll(*info, names) && info->not_after - absl::Now() > kRenewWithin;
  }
  if (fresh) {
    tls.server = {*server_k, *server_cert};
    if (absl::Status s = Publish(&tls, dir); !s.ok()) return s;
    return tls;
  }
  absl::StatusOr<x509::KeyAndCert> server = x509::NewServerCert(tls.ca, names, kServerValidity);
  if (!server.ok()) return server.status();
  if (absl::Status s = WriteFileAtomically(server_key, server->key_pem, 0600); !s.ok()) return s;
  if (absl::Status s = WriteFileAtomically(server_pem, server->cert_pem, 0644); !s.ok()) return s;
  tls.server = *server;
  tls.made_server_cert = true;
  if (absl::Status s = Publish(&tls, dir); !s.ok()) return s;
  return tls;
}

}  // namespace fleetbench::controller
