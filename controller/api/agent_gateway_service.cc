#include "controller/api/agent_gateway_service.h"

#include <deque>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "controller/security/auth.h"
#include "common/grpc_status.h"
#include "controller/security/node_identity.h"
#include "grpc/grpc_security_constants.h"
#include "grpcpp/security/auth_context.h"
#include "common/reason.h"
#include "common/wire_limits.h"
#include "controller/core/report_limits.h"

namespace fleetbench::controller {
namespace {

using Reactor = grpc::ServerBidiReactor<v1::AgentMessage, v1::ControllerMessage>;

// The write side of one stream, shared with FleetCore. Outlives the reactor:
// once the stream is done, Send and Close do nothing.
class StreamLink final : public AgentLink {
 public:
  explicit StreamLink(Reactor* reactor) : reactor_(reactor) {}

  void Send(const v1::ControllerMessage& message) override {
    absl::MutexLock lock(&mu_);
    if (reactor_ == nullptr || finishing_) return;
    outbox_.push_back(message);
    // The callback API allows one write in flight; the rest wait here.
    if (!write_in_flight_) StartNextWriteLocked();
  }

  void Close() override { FinishLocked(grpc::Status(grpc::StatusCode::ABORTED,
                                                    "replaced by a newer stream")); }

  // Reactor side.
  void OnWriteDone(bool ok) {
    absl::MutexLock lock(&mu_);
    write_in_flight_ = false;
    if (!outbox_.empty()) outbox_.pop_front();
    if (!ok) outbox_.clear();
    if (finishing_) {
      MaybeFinishLocked();
    } else if (!outbox_.empty()) {
      StartNextWriteLocked();
    }
  }
  void Finish(const grpc::Status& status) { FinishLocked(status); }
  void Detach() {
    absl::MutexLock lock(&mu_);
    reactor_ = nullptr;
  }

 private:
  void StartNextWriteLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    write_in_flight_ = true;
    reactor_->StartWrite(&outbox_.front());
  }
  void FinishLocked(const grpc::Status& status) {
    absl::MutexLock lock(&mu_);
    if (reactor_ == nullptr || finishing_) return;
    finishing_ = true;
    final_status_ = status;
    outbox_.clear();
    MaybeFinishLocked();
  }
  void MaybeFinishLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    // Finish only once no write is in flight.
    if (write_in_flight_ || finished_ || reactor_ == nullptr) return;
    finished_ = true;
    reactor_->Finish(final_status_);
  }

  absl::Mutex mu_;
  Reactor* reactor_ ABSL_GUARDED_BY(mu_);
  std::deque<v1::ControllerMessage> outbox_ ABSL_GUARDED_BY(mu_);
  bool write_in_flight_ ABSL_GUARDED_BY(mu_) = false;
  bool finishing_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status final_status_ ABSL_GUARDED_BY(mu_);
};

class AgentStream final : public Reactor {
 public:
  // `cert_node`: the node the stream's verified certificate names, or ""
  // for a stream without one (authenticated by token).
  AgentStream(FleetCore* core, grpc::Status auth, std::string peer_host,
              NodeIdentities* identities, std::string cert_node, std::string cert_pem)
      : core_(core), peer_host_(std::move(peer_host)), identities_(identities),
        cert_node_(std::move(cert_node)) {
    link_ = std::make_shared<StreamLink>(this);
    if (!auth.ok()) {
      link_->Finish(auth);
      return;
    }
    if (!cert_node_.empty()) {
      std::weak_ptr<StreamLink> weak = link_;
      stream_id_ = identities_->AddStream(cert_node_, [weak](const std::string& why) {
        if (auto link = weak.lock()) {
          link->Finish(grpc::Status(grpc::StatusCode::UNAUTHENTICATED, why));
        }
      });
      // Checked again once registered: a revocation between the first
      // check and the registration would otherwise miss this stream.
      if (absl::StatusOr<std::string> again = identities_->NodeOfCertificate(cert_pem);
          !again.ok()) {
        link_->Finish(ToGrpcStatus(again.status()));
        return;
      }
    }
    StartRead(&in_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      // The agent went away or half-closed.
      if (said_hello_) core_->OnDisconnect(link_);
      link_->Finish(grpc::Status::OK);
      return;
    }
    if (!said_hello_) {
      if (!in_.has_hello()) {
        link_->Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                   "the first message must be hello"));
        return;
      }
      if (absl::Status s = CheckHello(in_.hello()); !s.ok()) {
        link_->Finish(ToGrpcStatus(s));
        return;
      }
      // The name is the certificate's, never the hello's (docs/security.md).
      if (!cert_node_.empty() && in_.hello().name() != cert_node_) {
        link_->Finish(grpc::Status(
            grpc::StatusCode::PERMISSION_DENIED,
            absl::StrCat("this stream's certificate is node ", cert_node_,
                         "'s; it may not say hello as ", in_.hello().name())));
        return;
      }
      if (cert_node_.empty() && identities_ != nullptr) {
        if (absl::Status s = identities_->CheckUncertified(in_.hello().name()); !s.ok()) {
          link_->Finish(ToGrpcStatus(s));
          return;
        }
      }
      said_hello_ = true;
      core_->OnHello(link_, std::move(*in_.mutable_hello()), peer_host_);
    } else if (in_.has_hello()) {
      link_->Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "hello sent twice"));
      return;
    } else {
      core_->OnAgentMessage(link_, std::move(in_));
    }
    in_.Clear();
    StartRead(&in_);
  }

  void OnWriteDone(bool ok) override { link_->OnWriteDone(ok); }

  void OnDone() override {
    if (stream_id_ != 0) identities_->RemoveStream(stream_id_);
    link_->Detach();
    delete this;
  }

 private:
  FleetCore* const core_;
  const std::string peer_host_;
  NodeIdentities* const identities_;
  const std::string cert_node_;
  int64_t stream_id_ = 0;
  std::shared_ptr<StreamLink> link_;
  v1::AgentMessage in_;
  bool said_hello_ = false;
};

}  // namespace

std::string HostOfGrpcPeer(const std::string& peer) {
  // "ipv4:10.0.0.7:51234" -> "10.0.0.7"; "ipv6:[::1]:51234" -> "[::1]".
  const size_t colon = peer.find(':');
  const size_t last = peer.rfind(':');
  if (colon == std::string::npos || last == colon) return "";
  return peer.substr(colon + 1, last - colon - 1);
}

grpc::ServerBidiReactor<v1::AgentMessage, v1::ControllerMessage>* AgentGatewayService::Connect(
    grpc::CallbackServerContext* context) {
  // A node with a certificate is that certificate's node (docs/security.md); one
  // without (migration) takes the shared token, while it is on: no API
  // token of a person, admin's included, speaks as a node.
  std::string cert_node;
  std::string cert_pem;
  grpc::Status auth;
  if (identities_ != nullptr) {
    std::vector<grpc::string_ref> certs =
        context->auth_context()->FindPropertyValues(GRPC_X509_PEM_CERT_PROPERTY_NAME);
    if (!certs.empty()) {
      cert_pem.assign(certs[0].data(), certs[0].size());
      absl::StatusOr<std::string> node = identities_->NodeOfCertificate(cert_pem);
      if (node.ok()) {
        cert_node = *node;
      } else {
        auth = ToGrpcStatus(node.status());
      }
    }
  }
  if (auth.ok() && cert_node.empty()) {
    Principal who;
    auth = AuthorizeCall(*context, *authenticator_, Role::kAdmin, &who);
    if (auth.ok() && who.name != kSharedTokenPrincipal) {
      auth = grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                          absl::StrCat("'", who.name,
                                       "' is a person's token: a node connects with its "
                                       "certificate (enroll it: docs/security.md) or the shared "
                                       "token"));
    }
  }
  return new AgentStream(core_, auth, HostOfGrpcPeer(context->peer()), identities_,
                         std::move(cert_node), std::move(cert_pem));
}

grpc::ServerUnaryReactor* AgentGatewayService::Enroll(grpc::CallbackServerContext* context,
                                                      const v1::EnrollRequest* request,
                                                      v1::EnrollResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish([&]() -> grpc::Status {
    if (identities_ == nullptr) {
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                          "this controller runs --insecure: it has no CA to enroll nodes with");
    }
    absl::StatusOr<Principal> who = AuthenticateCall(*context, *authenticator_);
    if (!who.ok()) return ToGrpcStatus(who.status());
    // An enrollment token, or an admin (who may do all an enrollment
    // token may); never a viewer or an operator.
    if (who->role != Role::kEnroll && who->role != Role::kAdmin) {
      return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                          absl::StrCat("'", who->name, "' is ", RoleName(who->role),
                                       "; enrolling a node needs an enrollment token "
                                       "(fleetbench token create NAME --enroll)"));
    }
    absl::StatusOr<v1::EnrollResponse> enrolled = identities_->Enroll(*request, *who);
    if (!enrolled.ok()) return ToGrpcStatus(enrolled.status());
    *response = std::move(*enrolled);
    return grpc::Status::OK;
  }());
  return reactor;
}

grpc::ServerUnaryReactor* AgentGatewayService::Renew(grpc::CallbackServerContext* context,
                                                     const v1::RenewRequest* request,
                                                     v1::RenewResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish([&]() -> grpc::Status {
    if (identities_ == nullptr) {
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                          "this controller runs --insecure: it issues no certificates");
    }
    // mTLS is the proof of who asks: no token is looked at, so neither a
    // stolen token nor an enrollment token renews anybody.
    std::vector<grpc::string_ref> certs =
        context->auth_context()->FindPropertyValues(GRPC_X509_PEM_CERT_PROPERTY_NAME);
    if (certs.empty()) {
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                          "renewing needs the node's certificate (mTLS); a node without one "
                          "enrolls first (agent --enroll-token-file)");
    }
    absl::StatusOr<v1::RenewResponse> renewed =
        identities_->Renew(std::string(certs[0].data(), certs[0].size()), *request);
    if (!renewed.ok()) return ToGrpcStatus(renewed.status());
    *response = std::move(*renewed);
    return grpc::Status::OK;
  }());
  return reactor;
}

}  // namespace fleetbench::controller
