#include "controller/node_identity.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/reason.h"
#include "controller/agent_gateway_service.h"

namespace fleetbench::controller {
namespace {

std::string When(absl::Time t) { return absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", t, absl::UTCTimeZone()); }

}  // namespace

absl::StatusOr<v1::EnrollResponse> NodeIdentities::Enroll(const v1::EnrollRequest& request,
                                                          const Principal& by) {
  v1::Hello name_only;
  name_only.set_name(request.node_name());
  if (absl::Status s = CheckHello(name_only); !s.ok()) return s;
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
  // A minute back: a node's clock a little behind ours still accepts it.
  absl::StatusOr<std::string> cert = x509::SignClientCsr(
      ca_, request.csr_pem(), request.node_name(), now - absl::Minutes(1), cert_validity_);
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
  if (identity.fingerprint != info->fingerprint) {
    return absl::UnauthenticatedError(absl::StrCat(
        "this certificate of node ", node, " is not its current one (it was re-enrolled at ",
        When(identity.enrolled), ")"));
  }
  return node;
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
