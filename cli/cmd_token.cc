// fleetbench token create | list | revoke | shared: API tokens with a role
// and the shared-token switch (docs/security.md). All admin. The secret is
// printed once, by create; nothing else ever shows it.
#include <iostream>
#include <string>
#include <vector>

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
namespace {

constexpr char kCreate[] = "token create";
constexpr char kList[] = "token list";
constexpr char kRevoke[] = "token revoke";
constexpr char kShared[] = "token shared";

std::string When(int64_t unix_ms) {
  if (unix_ms == 0) return "-";
  return absl::FormatTime("%Y-%m-%d %H:%M UTC", absl::FromUnixMillis(unix_ms),
                          absl::UTCTimeZone());
}

// "live", "revoked" or "expired", as of now.
std::string State(const v1::ApiToken& t) {
  if (t.revoked_unix_ms() != 0) return "revoked";
  if (t.expires_unix_ms() != 0 && absl::FromUnixMillis(t.expires_unix_ms()) <= absl::Now()) {
    return "expired";
  }
  return "live";
}

int CreateCommand(const Argv& argv) {
  const std::vector<FlagSpec> flags = {
      {"role", true, false, "viewer, operator or admin"},
      {"enroll", false, false, "an enrollment token for one agent (needs --ttl, at most 7d)"},
      {"ttl", true, false, "how long it lives, e.g. 1h, 90d (default: until revoked)"},
      kJsonFlag};
  int code = 0;
  auto p = Prepare(kCreate, argv, flags, 1, &code);
  if (!p) return code;
  const Args& args = p->args;
  v1::CreateTokenRequest request;
  request.set_name(args.positional[0]);
  if (args.Has("enroll") == args.Has("role")) {
    return Usage(kCreate, "give exactly one of --role or --enroll", flags);
  }
  if (args.Has("enroll")) {
    if (!args.Has("ttl")) return Usage(kCreate, "--enroll needs --ttl, e.g. --ttl 1h", flags);
    request.set_role("enroll");
  } else {
    const std::string role = args.Get("role");
    if (role != "viewer" && role != "operator" && role != "admin") {
      return Usage(kCreate,
                   "--role wants viewer, operator or admin, got '" + ClipInput(role) + "'",
                   flags);
    }
    request.set_role(role);
  }
  if (args.Has("ttl")) {
    absl::StatusOr<absl::Duration> ttl = ParseWindow(args.Get("ttl"));
    if (!ttl.ok()) {
      return Usage(kCreate,
                   "--ttl wants a duration like 1h or 30d, got '" + ClipInput(args.Get("ttl")) +
                       "'",
                   flags);
    }
    request.set_ttl_ms(absl::ToInt64Milliseconds(*ttl));
  }
  v1::CreateTokenResponse created;
  if (auto s = p->client->Call(&v1::Fleet::Stub::CreateToken, request, &created); !s.ok()) {
    if (absl::IsAlreadyExists(s)) {
      std::cerr << "fleetbench " << kCreate << ": " << ClipInput(s.message(), kMaxErrorLineLength)
                << "\n";
      return kExitUsage;
    }
    return RemoteError(kCreate, s);
  }
  if (args.Has("json")) {
    std::cout << ToJson(created) << "\n";
    return kExitOk;
  }
  // The secret alone on stdout, so `> file` captures just it; the rest on
  // stderr.
  std::cout << created.secret() << "\n";
  const v1::ApiToken& t = created.token();
  std::cerr << "token " << t.name() << " (" << t.role() << "), expires "
            << (t.expires_unix_ms() == 0 ? "never" : When(t.expires_unix_ms()))
            << ": shown once, keep it secret (use it with --token-file or FLEETBENCH_TOKEN)\n";
  return kExitOk;
}

int ListCommand(const Argv& argv) {
  const std::vector<FlagSpec> flags = {kJsonFlag};
  int code = 0;
  auto p = Prepare(kList, argv, flags, 0, &code);
  if (!p) return code;
  v1::ListTokensResponse response;
  if (auto s = p->client->Call(&v1::Fleet::Stub::ListTokens, v1::ListTokensRequest(), &response);
      !s.ok()) {
    return RemoteError(kList, s);
  }
  if (p->args.Has("json")) {
    std::cout << ToJson(response) << "\n";
    return kExitOk;
  }
  Table table({"NAME", "ROLE", "STATE", "CREATED", "EXPIRES", "LAST USED", "REVOKED"});
  for (const v1::ApiToken& t : response.tokens()) {
    table.AddRow({t.name(), t.role(), State(t), When(t.created_unix_ms()),
                  t.expires_unix_ms() == 0 ? "never" : When(t.expires_unix_ms()),
                  When(t.last_used_unix_ms()), When(t.revoked_unix_ms())});
  }
  std::cout << table.Render();
  std::cout << "shared token: " << (response.shared_token_enabled() ? "on" : "off") << "\n";
  return kExitOk;
}

int RevokeCommand(const Argv& argv) {
  const std::vector<FlagSpec> flags = {kJsonFlag};
  int code = 0;
  auto p = Prepare(kRevoke, argv, flags, 1, &code);
  if (!p) return code;
  v1::RevokeTokenRequest request;
  request.set_name(p->args.positional[0]);
  v1::RevokeTokenResponse response;
  if (auto s = p->client->Call(&v1::Fleet::Stub::RevokeToken, request, &response); !s.ok()) {
    return RemoteError(kRevoke, s);
  }
  if (p->args.Has("json")) {
    std::cout << ToJson(response) << "\n";
    return kExitOk;
  }
  std::cout << "revoked token " << response.token().name() << " (" << response.token().role()
            << ")\n";
  return kExitOk;
}

int SharedCommand(const Argv& argv) {
  const std::vector<FlagSpec> flags = {kJsonFlag};
  int code = 0;
  auto p = Prepare(kShared, argv, flags, 1, &code);
  if (!p) return code;
  const std::string& what = p->args.positional[0];
  if (what != "on" && what != "off") {
    return Usage(kShared, "wants on or off, got '" + ClipInput(what) + "'", flags);
  }
  v1::SetSharedTokenRequest request;
  request.set_enabled(what == "on");
  v1::SetSharedTokenResponse response;
  if (auto s = p->client->Call(&v1::Fleet::Stub::SetSharedToken, request, &response); !s.ok()) {
    return RemoteError(kShared, s);
  }
  if (p->args.Has("json")) {
    std::cout << ToJson(response) << "\n";
    return kExitOk;
  }
  std::cout << "shared token: " << (response.enabled() ? "on" : "off") << "\n";
  return kExitOk;
}

}  // namespace

int TokenCommand(const Argv& argv) {
  const std::string help =
      "usage: fleetbench token SUBCOMMAND [flags]   (admin)\n"
      "  create NAME --role viewer|operator|admin [--ttl 90d] [--json]\n"
      "  create NAME --enroll --ttl 1h [--json]\n"
      "                 a new token; its secret is printed once (stdout)\n"
      "  list [--json]  tokens: role, state, created, expires, last used (never the secret)\n"
      "  revoke NAME    refuse the token from now on\n"
      "  shared on|off  accept the controller's shared token (as admin) or not\n"
      "Roles, the token format and the migration off the shared token: docs/security.md.\n";
  if (!argv.empty() && (argv[0] == "--help" || argv[0] == "-h")) {
    std::cout << help;
    return kExitOk;
  }
  if (argv.empty()) {
    std::cerr << "fleetbench token: wants a subcommand, create, list, revoke or shared\n" << help;
    return kExitUsage;
  }
  const Argv rest(argv.begin() + 1, argv.end());
  if (argv[0] == "create") return CreateCommand(rest);
  if (argv[0] == "list") return ListCommand(rest);
  if (argv[0] == "revoke") return RevokeCommand(rest);
  if (argv[0] == "shared") return SharedCommand(rest);
  std::cerr << "fleetbench token: unknown subcommand '" << ClipInput(argv[0])
            << "'; see fleetbench token --help\n";
  return kExitUsage;
}

}  // namespace fleetbench::cli
