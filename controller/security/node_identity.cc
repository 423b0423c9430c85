#include "controller/security/node_identity.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/reason.h"
#include "controller/core/report_limits.h"

namespace fleetbench::controller {
namespace {

std::string When(absl::Time t) { return absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", t, absl::UTCTimeZone()); }

}  // namespace

absl::StatusOr<v1::EnrollResponse> NodeIdentities::Enroll(const v1::EnrollRequest& request,
                                                          const Principal& by) {
  if (absl::Status s = CheckNodeName(request.node_name()); !s.ok()) return s;
  if (request.csr_pem().size() > 16384) {
    return absl::InvalidArgumentError("the certificate request is over 16 KiB");
  }
  // Refused before signing, so a refused name costs no certificate; the
  // store's insert decides races.
  absl::StatusOr<std::optional<storage::NodeIdentityRecord>> existing =
      store_->GetNodeIdentity(request.node_name());
  if (!existing.ok()) return existing.status();
  if (existing->has_value() && !(*existing)->revoked.has_value()) {
    return absl::AlreadyExistsError(absl::StrCat(
        "node ", request.node_name(), " is already enrolled; an admin must revoke it first "
        "(fleetbench nodes revoke ", request.node_name(), ")"));
  }
  const absl::Time now = clock_->Now();
  absl::StatusOr<std::string> cert = Sign(request.csr_pem(), request.node_name(), now);
  if (!cert.ok()) return cert.status();
  absl::StatusOr<x509::CertInfo> info = x509::ParseCert(*cert);
  if (!info.ok()) return info.status();
  storage::NodeIdentityRecord record;
  record.node = request.node_name();
  record.serial = info->serial_hex;
  record.fingerprint = info->fingerprint;
  record.not_after = info->not_after;
  record.enrolled = now;
  record.enrolled_by = by.name;
  if (absl::Status s = store_->EnrollNodeIdentity(record); !s.ok()) return s;
  ForgetReplaced(record.node);
  LOG(INFO) << "node " << record.node << " enrolled by '" << by.name << "', certificate "
            << record.fingerprint << " until " << When(record.not_after);
  v1::EnrollResponse response;
  response.set_certificate_pem(*cert);
  response.set_ca_pem(ca_.cert_pem);
  response.set_not_after_unix_ms(absl::ToUnixMillis(record.not_after));
  return response;
}

absl::StatusOr<std::string> NodeIdentities::NodeOfCertificate(const std::string& cert_pem) {
  absl::StatusOr<x509::CertInfo> info = x509::ParseCert(cert_pem);
  if (!info.ok()) {
    return absl::UnauthenticatedError("the client certificate is malformed");
  }
  if (absl::Status s = x509::VerifyIssuedBy(cert_pem, ca_.cert_pem); !s.ok()) {
    return absl::UnauthenticatedError(absl::StrCat(
        "the client certificate is not from this controller's CA (", s.message(),
        "); enroll with this controller"));
  }
  const std::string& node = info->common_name;
  const absl::Time now = clock_->Now();
  if (now >= info->not_after) {
    return absl::UnauthenticatedError(absl::StrCat(
        "the certificate of node ", ClipInput(node), " expired at ", When(info->not_after),
        "; re-enroll the node"));
  }
  if (now < info->not_before) {
    return absl::UnauthenticatedError(absl::StrCat("the certificate of node ", ClipInput(node),
                                                   " is not valid before ",
                                                   When(info->not_before)));
  }
  absl::StatusOr<std::optional<storage::NodeIdentityRecord>> stored =
      store_->GetNodeIdentity(node);
  if (!stored.ok()) return absl::UnavailableError(stored.status().message());
  if (!stored->has_value()) {
    return absl::UnauthenticatedError(
        absl::StrCat("node ", ClipInput(node), " has no identity here; re-enroll it"));
  }
  const storage::NodeIdentityRecord& identity = **stored;
  if (identity.revoked.has_value() && identity.fingerprint == info->fingerprint) {
    return absl::UnauthenticatedError(absl::StrCat(
        "the certificate of node ", node, " was revoked at ", When(*identity.revoked),
        "; re-enroll it (delete STATE_DIR/identity, start the agent with --enroll-token-file)"));
  }
  absl::MutexLock lock(&mu_);
  auto replaced = replaced_.find(node);
  if (identity.fingerprint == info->fingerprint) {
    // The node has its renewed certificate: the one before is done.
    if (replaced != replaced_.end()) replaced_.erase(replaced);
    return node;
  }
  if (!identity.revoked.has_value() && replaced != replaced_.end() &&
      replaced->second.fingerprint == info->fingerprint &&
      replaced->second.successor == identity.fingerprint) {
    return node;  // the overlap: the node may not have its new one yet
  }
  return absl::UnauthenticatedError(absl::StrCat(
      "this certificate of node ", node,
      " is not its current one: it was renewed or re-enrolled since (enrolled at ",
      When(identity.enrolled), "; the current certificate is serial ", identity.serial, ")"));
}

absl::StatusOr<std::string> NodeIdentities::Sign(const std::string& csr_pem,
                                                 const std::string& node, absl::Time now) {
  // Back a little, at most a minute: a node whose clock is behind ours
  // still accepts it, and a short test validity is not all backdating.
  const absl::Duration back = std::min(absl::Minutes(1), cert_validity_ / 10);
  return x509::SignClientCsr(ca_, csr_pem, node, now - back, cert_validity_ + back);
}

void NodeIdentities::ForgetReplaced(const std::string& node) {
  absl::MutexLock lock(&mu_);
  replaced_.erase(node);
}

absl::StatusOr<v1::RenewResponse> NodeIdentities::Renew(const std::string& cert_pem,
                                                        const v1::RenewRequest& request) {
  absl::StatusOr<std::string> node = NodeOfCertificate(cert_pem);
  if (!node.ok()) return node.status();
  if (request.csr_pem().empty() || request.csr_pem().size() > 16384) {
    return absl::InvalidArgumentError("the certificate request must be 1 byte to 16 KiB");
  }
  absl::StatusOr<x509::CertInfo> presented = x509::ParseCert(cert_pem);
  if (!presented.ok()) return presented.status();
  absl::StatusOr<std::optional<storage::NodeIdentityRecord>> stored =
      store_->GetNodeIdentity(*node);
  if (!stored.ok()) return absl::UnavailableError(stored.status().message());
  if (!stored->has_value() || (*stored)->revoked.has_value()) {
    return absl::UnauthenticatedError(absl::StrCat("node ", *node, " has no live identity"));
  }
  const std::string current = (*stored)->fingerprint;
  const absl::Time now = clock_->Now();
  if (presented->fingerprint == current) {
    const absl::Duration life = presented->not_after - presented->not_before;
    if (now - presented->not_before < life / 4) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the certificate of node ", *node, " is new; renew it after ",
          When(presented->not_before + life / 4)));
    }
  }
  absl::StatusOr<std::string> cert = Sign(request.csr_pem(), *node, now);
  if (!cert.ok()) return cert.status();
  absl::StatusOr<x509::CertInfo> info = x509::ParseCert(*cert);
  if (!info.ok()) return info.status();
  // Renewing is rotating the key: a copied key ends with its certificate.
  if (info->public_key_fingerprint == presented->public_key_fingerprint) {
    return absl::InvalidArgumentError(
        "a renewal needs a new key: the request is signed by the key of the certificate "
        "presented");
  }
  storage::NodeIdentityRecord record = **stored;
  record.serial = info->serial_hex;
  record.fingerprint = info->fingerprint;
  record.not_after = info->not_after;
  if (absl::Status s = store_->RenewNodeIdentity(record, current); !s.ok()) return s;
  {
    absl::MutexLock lock(&mu_);
    // Whichever certificate asked (the current one, or the one before it
    // when the answer to an earlier renewal was lost) is what the node has.
    replaced_[*node] = {presented->fingerprint, record.fingerprint};
  }
  LOG(INFO) << "node " << *node << " renewed its certificate: serial " << record.serial
            << " until " << When(record.not_after) << " (was " << presented->serial_hex << ")";
  v1::RenewResponse response;
  response.set_certificate_pem(*cert);
  response.set_not_after_unix_ms(absl::ToUnixMillis(record.not_after));
  return response;
}

absl::Status NodeIdentities::CheckUncertified(const std::string& name) {
  absl::StatusOr<std::optional<storage::NodeIdentityRecord>> stored =
      store_->GetNodeIdentity(name);
  if (!stored.ok()) return absl::UnavailableError(stored.status().message());
  if (!stored->has_value()) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat(
      "node ", name, " has a certificate identity",
      (*stored)->revoked.has_value() ? " (revoked: re-enroll it)" : "",
      "; it connects with its certificate only, not with a token"));
}

absl::StatusOr<v1::RevokeNodeResponse> NodeIdentities::Revoke(const std::string& name) {
  if (name.empty()) return absl::InvalidArgumentError("which node? (fleetbench nodes revoke NAME)");
  absl::StatusOr<bool> revoked = store_->RevokeNodeIdentity(name, clock_->Now());
  if (!revoked.ok()) return revoked.status();
  ForgetReplaced(name);
  if (!*revoked) {
    return absl::NotFoundError(absl::StrCat("node ", ClipInput(name), " has no live identity"));
  }
  std::vector<Closer> closers;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, stream] : streams_) {
      if (stream.first == name) closers.push_back(stream.second);
    }
  }
  const std::string why = absl::StrCat("the identity of node ", name,
                                       " was revoked; re-enroll it to connect again");
  for (const Closer& close : closers) close(why);
  LOG(WARNING) << "node " << name << ": identity revoked, " << closers.size()
               << " stream(s) closed";
  v1::RevokeNodeResponse response;
  response.set_stream_closed(!closers.empty());
  return response;
}

int64_t NodeIdentities::AddStream(const std::string& node, Closer close) {
  absl::MutexLock lock(&mu_);
  const int64_t id = next_stream_++;
  streams_[id] = {node, std::move(close)};
  return id;
}

void NodeIdentities::RemoveStream(int64_t id) {
  absl::MutexLock lock(&mu_);
  streams_.erase(id);
}

}  // namespace fleetbench::controller
