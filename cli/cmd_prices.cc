// fleetbench prices import FILE | list: the price catalog (docs/ranking.md).
// The controller validates the file; this command bounds what it sends and
// prints every bad row the controller names.
#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cli/args.h"
#include "cli/client.h"
#include "cli/usage.h"
#include "common/reason.h"
#include "cli/commands.h"
#include "cli/table.h"
#include "common/proto_json.h"
#include "fleetbench/v1/fleet_service.grpc.pb.h"
#include "fleetbench/v1/price.pb.h"

namespace fleetbench::cli {
namespace {

constexpr char kImport[] = "prices import";
// The API's bound on a catalog (ImportPricesRequest.csv, enforced by the
// controller): a bigger file is refused here, before it is read or sent.
constexpr uint64_t kMaxCatalogBytes = uint64_t{1} << 20;
constexpr char kList[] = "prices list";

// The file's text, refusing (before reading it) one over the catalog bound.
absl::StatusOr<std::string> ReadCatalogFile(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is not a regular file"));
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxCatalogBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, " has ", st.st_size, " bytes, more than the ", kMaxCatalogBytes,
        " a price catalog may have; split it into several files"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  // Read at most one byte past the bound: the file may grow after stat.
  std::string text(kMaxCatalogBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (in.bad()) return absl::DataLossError(absl::StrCat("error reading ", path));
  return text;
}

int ImportCommand(const Argv& argv) {
  const std::vector<FlagSpec> flags = {kJsonFlag};
  int code = 0;
  auto p = Prepare(kImport, argv, flags, 1, &code);
  if (!p) return code;
  const std::string& path = p->args.positional[0];
  absl::StatusOr<std::string> csv = ReadCatalogFile(path);
  if (absl::IsInvalidArgument(csv.status())) {
    return Usage(kImport, std::string(csv.status().message()), flags);
  }
  if (!csv.ok()) return Fail(kImport, std::string(csv.status().message()));
  v1::ImportPricesRequest request;
  request.set_csv(*std::move(csv));
  request.set_source(path);
  v1::ImportPricesResponse response;
  if (auto s = p->client->Call(&v1::Fleet::Stub::ImportPrices, request, &response); !s.ok()) {
    if (absl::IsInvalidArgument(s)) {
      // One line per bad row, as the controller listed them.
      for (absl::string_view line : absl::StrSplit(s.message(), '\n')) {
        std::cerr << "fleetbench " << kImport << ": " << line << "\n";
      }
      return kExitUsage;
    }
    return RemoteError(kImport, s);
  }
  if (p->args.Has("json")) {
    std::cout << ToJson(response) << "\n";
    return kExitOk;
  }
  std::cout << "imported " << path << ": " << response.rows() << " rows (" << response.added()
            << " added, " << response.replaced() << " replaced, " << response.unchanged()
            << " unchanged)\n";
  return kExitOk;
}

std::string TimeText(int64_t unix_ms) {
  const absl::Time t = absl::FromUnixMillis(unix_ms);
  // Midnight UTC is how a date-only row was written; show it the same way.
  const bool midnight = absl::ToCivilSecond(t, absl::UTCTimeZone()) ==
                        absl::CivilSecond(absl::ToCivilDay(t, absl::UTCTimeZone()));
  return absl::FormatTime(midnight ? "%Y-%m-%d" : "%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

int ListCommand(const Argv& argv) {
  const std::vector<FlagSpec> flags = {kJsonFlag};
  int code = 0;
  auto p = Prepare(kList, argv, flags, 0, &code);
  if (!p) return code;
  v1::ListPricesResponse response;
  if (auto s = p->client->Call(&v1::Fleet::Stub::ListPrices, v1::ListPricesRequest(), &response);
      !s.ok()) {
    return RemoteError(kList, s);
  }
  if (p->args.Has("json")) {
    std::cout << ToJson(response) << "\n";
    return kExitOk;
  }
  // Rows come by offer, then date: an offer's row is in force now when it
  // is the last one that has started.
  const int64_t now_ms = absl::ToUnixMillis(absl::Now());
  using Offer = std::tuple<std::string, std::string, std::string>;
  std::map<Offer, int> in_force;  // offer -> index of its row in force now
  for (int i = 0; i < response.prices_size(); ++i) {
    const v1::CatalogPrice& r = response.prices(i);
    if (r.effective_from_unix_ms() <= now_ms) {
      in_force[{r.provider(), r.region(), r.instance_type()}] = i;
    }
  }
  Table table({"PROVIDER", "REGION", "INSTANCE_TYPE", "PRICE_PER_H", "SPOT_PER_H", "CURRENCY",
               "EFFECTIVE_FROM", "NOW"});
  for (int i = 0; i < response.prices_size(); ++i) {
    const v1::CatalogPrice& r = response.prices(i);
    auto it = in_force.find({r.provider(), r.region(), r.instance_type()});
    const std::string now = r.effective_from_unix_ms() > now_ms      ? "future"
                            : it != in_force.end() && it->second == i ? "in force"
                                                                      : "superseded";
    table.AddRow({r.provider(), r.region(), r.instance_type(), FormatNumber(r.price_per_hour()),
                  r.has_spot_price_per_hour() ? FormatNumber(r.spot_price_per_hour()) : "-",
                  r.currency(), TimeText(r.effective_from_unix_ms()), now});
  }
  std::cout << table.Render();
  return kExitOk;
}

}  // namespace

int PricesCommand(const Argv& argv) {
  const std::string help =
      "usage: fleetbench prices import FILE [--json] | list [--json]\n"
      "  import FILE  store a price catalog (CSV: provider,region,instance_type,price_per_hour,\n"
      "               spot_price_per_hour,currency,effective_from); a file with a bad row is\n"
      "               refused whole, each bad row named with its line (exit 2)\n"
      "  list         the stored rows, and which is in force now\n";
  if (!argv.empty() && (argv[0] == "--help" || argv[0] == "-h")) {
    std::cout << help;
    return kExitOk;
  }
  if (argv.empty()) {
    std::cerr << "fleetbench prices: wants a subcommand, import or list\n" << help;
    return kExitUsage;
  }
  const Argv rest(argv.begin() + 1, argv.end());
  if (argv[0] == "import") return ImportCommand(rest);
  if (argv[0] == "list") return ListCommand(rest);
  std::cerr << "fleetbench prices: unknown subcommand '" << ClipInput(argv[0])
            << "'; see fleetbench prices --help\n";
  return kExitUsage;
}

}  // namespace fleetbench::cli
