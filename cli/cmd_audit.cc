// fleetbench audit: the mutating calls the controller served, newest
// first: when, who (token name and role), what and on what, how it ended
// (docs/security.md, Audit). Admin.
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "cli/args.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "cli/table.h"
#include "cli/usage.h"
#include "common/proto_json.h"
#include "common/reason.h"
#include "fleetbench/v1/fleet_service.grpc.pb.h"
#include "fleetbench/v1/security.pb.h"

namespace fleetbench::cli {

int AuditCommand(const Argv& argv) {
  constexpr char kAudit[] = "audit";
  const std::vector<FlagSpec> flags = {
      {"since", true, false, "only calls at most this old, e.g. 24h, 7d (default: all)"},
      {"limit", true, false, "the newest N calls (default 100, at most 1000)"},
      {"before", true, false, "the next page: calls older than this id"},
      kJsonFlag};
  int code = 0;
  auto p = Prepare(kAudit, argv, flags, 0, &code);
  if (!p) return code;
  const Args& args = p->args;
  v1::ListAuditRequest request;
  if (args.Has("since")) {
    absl::StatusOr<absl::Duration> since = ParseWindow(args.Get("since"));
    if (!since.ok()) {
      return Usage(kAudit,
                   "--since wants a duration like 24h or 7d, got '" +
                       ClipInput(args.Get("since")) + "'",
                   flags);
    }
    request.set_since_ms(absl::ToInt64Milliseconds(*since));
  }
  if (args.Has("limit")) {
    uint32_t n = 0;
    if (!absl::SimpleAtoi(args.Get("limit"), &n) || n == 0 || n > 1000) {
      return Usage(kAudit, "--limit wants a count from 1 to 1000", flags);
    }
    request.set_limit(n);
  }
  if (args.Has("before")) {
    int64_t id = 0;
    if (!absl::SimpleAtoi(args.Get("before"), &id) || id <= 0) {
      return Usage(kAudit, "--before wants an entry id", flags);
    }
    request.set_before_id(id);
  }
  v1::ListAuditResponse response;
  if (auto s = p->client->Call(&v1::Fleet::Stub::ListAudit, request, &response); !s.ok()) {
    return RemoteError(kAudit, s);
  }
  if (args.Has("json")) {
    std::cout << ToJson(response) << "\n";
    return kExitOk;
  }
  Table table({"ID", "WHEN", "WHO", "ROLE", "RPC", "TARGET", "OUTCOME"});
  for (const v1::AuditEntry& e : response.entries()) {
    std::string outcome = e.code();
    if (!e.message().empty()) absl::StrAppend(&outcome, ": ", e.message());
    table.AddRow({absl::StrCat(e.id()),
                  absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", absl::FromUnixMillis(e.unix_ms()),
                                   absl::UTCTimeZone()),
                  e.principal(), e.role(), e.rpc(), e.target().empty() ? "-" : e.target(),
                  outcome});
  }
  std::cout << table.Render();
  return kExitOk;
}

}  // namespace fleetbench::cli
