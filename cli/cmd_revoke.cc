// `fleetbench nodes revoke NAME` (admin): ends a node's certificate
// identity (docs/security.md, "One identity per node"). Its stream is closed at once and
// its certificate refused from then on; the node must enroll again.
#include <iostream>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/usage.h"
#include "common/proto_json.h"

namespace fleetbench::cli {

int NodesRevokeCommand(const Argv& argv) {
  int code = 0;
  auto p = Prepare("nodes revoke", argv, {kJsonFlag}, 1, &code);
  if (!p) return code;
  v1::RevokeNodeRequest request;
  request.set_name(p->args.positional[0]);
  v1::RevokeNodeResponse response;
  if (auto s = p->client->Call(&v1::Fleet::Stub::RevokeNode, request, &response); !s.ok()) {
    return RemoteError("nodes revoke", s);
  }
  if (p->args.Has("json")) {
    std::cout << ToJson(response) << "\n";
    return kExitOk;
  }
  std::cout << "revoked " << request.name() << "'s certificate"
            << (response.stream_closed() ? "; its stream is closed" : "")
            << "; it must enroll again (agent --enroll-token-file) to connect\n";
  return kExitOk;
}

}  // namespace fleetbench::cli
