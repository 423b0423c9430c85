#include "agent/runtime/identity.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "agent/runtime/controller_list.h"
#include "common/ca_fetch.h"
#include "common/logging.h"
#include "common/pem_files.h"
#include "common/token.h"
#include "common/x509.h"
#include "fleetbench/v1/agent_service.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace fleetbench::agent {
namespace {

std::string When(absl::Time t) {
  return absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", t, absl::UTCTimeZone());
}

// The CA to trust, saved under `dir` when it came by fingerprint.
absl::StatusOr<std::string> ResolveCa(const AgentTlsOptions& options, const std::string& dir) {
  const std::string saved_path = dir + "/ca.pem";
  std::string ca = options.ca_pem;
  if (ca.empty()) {
    absl::StatusOr<std::string> saved = ReadSmallFile(saved_path);
    if (saved.ok()) {
      ca = *saved;
    } else if (!absl::IsNotFound(saved.status())) {
      return saved.status();
    }
  }
  if (ca.empty() && !options.ca_fingerprint.empty()) {
    // From the first controller that answers; a standby does not. Each
    // one's error is kept: a wrong fingerprint at one must not read as
    // another's refused connection.
    absl::StatusOr<std::string> fetched = absl::NotFoundError("no controller to fetch the CA from");
    std::string errors;
    for (const std::string& controller : options.controllers) {
      fetched = FetchPinnedCa(controller, options.ca_fingerprint, absl::Seconds(10));
      if (fetched.ok()) break;
      absl::StrAppend(&errors, errors.empty() ? "" : "; ", controller, ": ",
                      fetched.status().message());
    }
    if (!fetched.ok()) {
      return options.controllers.size() > 1 ? absl::Status(fetched.status().code(), errors)
                                            : fetched.status();
    }
    // Made only when something is kept: a node on the shared token may run
    // with a state folder it cannot write identity/ into.
    if (absl::Status s = EnsureDir(dir, 0700); !s.ok()) return s;
    if (absl::Status s = WriteFileAtomically(saved_path, *fetched, 0644); !s.ok()) return s;
    LOG(INFO) << "controller CA " << options.ca_fingerprint << " fetched and kept in "
              << saved_path;
    return *fetched;
  }
  if (ca.empty()) {
    return absl::InvalidArgumentError(
        "no CA to check the controller with: pass --ca FILE (or set FLEETBENCH_CA) or "
        "--ca-fingerprint sha256:HEX, both printed by the controller at start; or --insecure "
        "for a plaintext controller");
  }
  absl::StatusOr<x509::CertInfo> info = x509::ParseCert(ca);
  if (!info.ok()) return absl::InvalidArgumentError(absl::StrCat("CA: ", info.status().message()));
  if (!options.ca_fingerprint.empty() && info->fingerprint != options.ca_fingerprint) {
    return absl::PermissionDeniedError(absl::StrCat(
        "the CA given (", info->fingerprint, ") is not the one pinned (", options.ca_fingerprint,
        ")"));
  }
  return ca;
}

absl::StatusOr<std::string> EnrollOnce(const AgentTlsOptions& options, const ClientTls& server_only,
                                       const std::string& csr, v1::EnrollResponse* response) {
  v1::EnrollRequest request;
  request.set_node_name(options.name);
  request.set_csr_pem(csr);
  const absl::Time give_up = absl::Now() + options.enroll_patience;
  if (options.controllers.empty()) return absl::InvalidArgumentError("no controller to enroll with");
  // Each controller in turn, as the dial loop does: a standby does not
  // answer until it leads.
  ControllerList controllers(options.controllers);
  while (true) {
    const std::string controller = controllers.current();
    // A channel per attempt: one whose first dial failed (the controller
    // not up yet) would fail every later call too (DialController).
    auto stub = v1::AgentGateway::NewStub(
        DialController(controller, server_only, grpc::ChannelArguments()));
    grpc::ClientContext context;
    context.AddMetadata(kAuthMetadataKey, "Bearer " + options.enroll_token);
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(20)));
    grpc::Status s = stub->Enroll(&context, request, response);
    if (s.ok()) return std::string();
    const bool retry = (s.error_code() == grpc::StatusCode::UNAVAILABLE ||
                        s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) &&
                       absl::Now() < give_up;
    if (!retry) {
      return absl::Status(
          static_cast<absl::StatusCode>(s.error_code()),
          absl::StrCat("enrolling as ", options.name, ": ",
                       s.error_code() == grpc::StatusCode::UNAVAILABLE
                           ? ExplainUnavailable(controller, server_only, s.error_message())
                           : s.error_message()));
    }
    LOG(WARNING) << "enrolling: controller " << controller << ": "
                 << ExplainUnavailable(controller, server_only, s.error_message())
                 << "; trying again";
    // A wait between rounds, not a synchronisation.
    if (controllers.SessionEnded(/*welcomed=*/false)) absl::SleepFor(absl::Seconds(1));
  }
}

}  // namespace

std::string IdentityDir(const std::string& state_dir) { return state_dir + "/identity"; }

absl::Time RenewalTime(const x509::CertInfo& cert, double fraction) {
  return cert.not_before + (cert.not_after - cert.not_before) * fraction;
}

absl::StatusOr<bool> FinishInterruptedRenewal(const std::string& state_dir) {
  const std::string dir = IdentityDir(state_dir);
  const std::string staged_key = dir + "/renew.key.pem";
  const std::string staged_cert = dir + "/renew.cert.pem";
  bool finished = false;
  absl::StatusOr<std::string> cert = ReadSmallFile(staged_cert);
  if (cert.ok()) {
    // The staged key, or key.pem when the crash came between the renames.
    absl::StatusOr<std::string> key = ReadSmallFile(staged_key);
    const bool key_staged = key.ok();
    if (!key_staged) key = ReadSmallFile(dir + "/key.pem");
    if (key.ok() && x509::KeyMatchesCert(*key, *cert)) {
      // The key first: until cert.pem is renamed too, the staged
      // certificate is still there to finish with.
      if (key_staged && std::rename(staged_key.c_str(), (dir + "/key.pem").c_str()) != 0) {
        return absl::InternalError(absl::StrCat(staged_key, ": ", std::strerror(errno)));
      }
      if (std::rename(staged_cert.c_str(), (dir + "/cert.pem").c_str()) != 0) {
        return absl::InternalError(absl::StrCat(staged_cert, ": ", std::strerror(errno)));
      }
      finished = true;
    } else {
      std::remove(staged_cert.c_str());
    }
  } else if (!absl::IsNotFound(cert.status())) {
    return cert.status();
  }
  // A key whose certificate never came: the old pair is the identity.
  std::remove(staged_key.c_str());
  return finished;
}

absl::StatusOr<ClientTls> RenewIdentity(v1::AgentGateway::Stub& stub,
                                        grpc::ClientContext* context,
                                        const std::string& state_dir, const std::string& name,
                                        const ClientTls& current) {
  const std::string dir = IdentityDir(state_dir);
  absl::StatusOr<std::string> key = x509::NewPrivateKeyPem();
  if (!key.ok()) return key.status();
  // Kept before it is used, like the enrollment's key: what a crash leaves
  // staged is sorted out by FinishInterruptedRenewal.
  if (absl::Status s = WriteFileAtomically(dir + "/renew.key.pem", *key, 0600); !s.ok()) {
    return s;
  }
  absl::StatusOr<std::string> csr = x509::NewCsrPem(*key, name);
  if (!csr.ok()) return csr.status();
  v1::RenewRequest request;
  request.set_csr_pem(*csr);
  v1::RenewResponse response;
  grpc::Status s = stub.Renew(context, request, &response);
  if (!s.ok()) {
    std::remove((dir + "/renew.key.pem").c_str());
    return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                        absl::StrCat("renewing the certificate of ", name, ": ",
                                     s.error_message()));
  }
  absl::StatusOr<x509::CertInfo> info = x509::ParseCert(response.certificate_pem());
  if (!info.ok() || info->common_name != name ||
      !x509::KeyMatchesCert(*key, response.certificate_pem()) ||
      !x509::VerifyIssuedBy(response.certificate_pem(), current.ca_pem).ok()) {
    std::remove((dir + "/renew.key.pem").c_str());
    return absl::PermissionDeniedError(
        "the controller answered the renewal with a certificate that is not this node's, not "
        "for its new key or not from its CA");
  }
  if (absl::Status w =
          WriteFileAtomically(dir + "/renew.cert.pem", response.certificate_pem(), 0600);
      !w.ok()) {
    return w;
  }
  absl::StatusOr<bool> finished = FinishInterruptedRenewal(state_dir);
  if (!finished.ok()) return finished.status();
  if (!*finished) return absl::InternalError("the renewed identity could not be kept");
  ClientTls renewed = current;
  renewed.key_pem = *key;
  renewed.cert_pem = response.certificate_pem();
  LOG(INFO) << "renewed the certificate of " << name << ": serial " << info->serial_hex
            << " until " << When(info->not_after);
  return renewed;
}

absl::StatusOr<ClientTls> PrepareAgentTls(const AgentTlsOptions& options) {
  ClientTls tls;
  if (options.insecure) {
    if (!options.enroll_token.empty() || !options.ca_fingerprint.empty() ||
        !options.ca_pem.empty()) {
      return absl::InvalidArgumentError(
          "--insecure is plaintext: it takes no --ca, --ca-fingerprint or enrollment token "
          "(enrolling needs TLS)");
    }
    tls.insecure = true;
    return tls;
  }
  const std::string dir = IdentityDir(options.state_dir);
  absl::StatusOr<std::string> ca = ResolveCa(options, dir);
  if (!ca.ok()) return ca.status();
  tls.ca_pem = *ca;

  const std::string key_path = dir + "/key.pem";
  const std::string cert_path = dir + "/cert.pem";
  absl::StatusOr<bool> finished = FinishInterruptedRenewal(options.state_dir);
  if (!finished.ok()) return finished.status();
  if (*finished) LOG(INFO) << "finished a certificate renewal a stop interrupted";
  absl::StatusOr<std::string> cert = ReadSmallFile(cert_path);
  absl::StatusOr<std::string> key = ReadSmallFile(key_path);
  if (cert.ok() && key.ok()) {
    absl::StatusOr<x509::CertInfo> info = x509::ParseCert(*cert);
    if (!info.ok() || !x509::KeyMatchesCert(*key, *cert)) {
      return absl::FailedPreconditionError(absl::StrCat(
          cert_path, " is not a certificate of ", key_path, "; delete ", dir,
          " and enroll again (--enroll-token-file)"));
    }
    if (info->common_name != options.name) {
      return absl::FailedPreconditionError(absl::StrCat(
          "this state folder's identity is node ", info->common_name, "'s, not ", options.name,
          " (--name); use that name, or another --state-dir to enroll a new node"));
    }
    if (absl::Now() >= info->not_after) {
      return absl::FailedPreconditionError(absl::StrCat(
          "this node's certificate expired at ", When(info->not_after), "; delete ", dir,
          " and enroll again (--enroll-token-file)"));
    }
    if (!options.enroll_token.empty()) {
      LOG(INFO) << "already enrolled as " << options.name << "; the enrollment token is not used";
    }
    tls.cert_pem = *cert;
    tls.key_pem = *key;
    return tls;
  }
  if (!cert.ok() && !absl::IsNotFound(cert.status())) return cert.status();
  if (options.enroll_token.empty()) {
    // Migration: no identity yet, the shared token over TLS.
    return tls;
  }
  // The key first, kept: a crash before the certificate came reuses it.
  std::string key_pem;
  if (key.ok()) {
    key_pem = *key;
  } else {
    absl::StatusOr<std::string> made = x509::NewPrivateKeyPem();
    if (!made.ok()) return made.status();
    if (absl::Status s = EnsureDir(dir, 0700); !s.ok()) return s;
    if (absl::Status s = WriteFileAtomically(key_path, *made, 0600); !s.ok()) return s;
    key_pem = *made;
  }
  absl::StatusOr<std::string> csr = x509::NewCsrPem(key_pem, options.name);
  if (!csr.ok()) return csr.status();
  v1::EnrollResponse response;
  absl::StatusOr<std::string> enrolled = EnrollOnce(options, tls, *csr, &response);
  if (!enrolled.ok()) return enrolled.status();
  if (!x509::KeyMatchesCert(key_pem, response.certificate_pem()) ||
      !x509::VerifyIssuedBy(response.certificate_pem(), tls.ca_pem).ok()) {
    return absl::PermissionDeniedError(
        "the controller answered with a certificate that is not for this node's key or not "
        "from its CA");
  }
  if (absl::Status s = WriteFileAtomically(cert_path, response.certificate_pem(), 0644); !s.ok()) {
    return s;
  }
  LOG(INFO) << "enrolled as " << options.name << "; certificate in " << cert_path << " until "
            << When(absl::FromUnixMillis(response.not_after_unix_ms()));
  tls.cert_pem = response.certificate_pem();
  tls.key_pem = key_pem;
  return tls;
}

}  // namespace fleetbench::agent
