#include "agent/benchmarks/gpu/nccl_log.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace fleetbench::gpu {
namespace {

constexpr absl::string_view kInfo = "NCCL INFO ";

// " [0]eth0:10.0.0.1<0> [1]ib0:..." -> {"eth0:10.0.0.1<0>", ...}; a token
// that is not "[<digits>]<name>" (NCCL's "[RO]" flag) is skipped.
std::vector<std::string> IndexedDevices(absl::string_view list) {
  std::vector<std::string> devices;
  for (absl::string_view token :
       absl::StrSplit(list, ' ', absl::SkipWhitespace())) {
    if (!absl::ConsumePrefix(&token, "[")) continue;
    const size_t close = token.find(']');
    if (close == 0 || close == absl::string_view::npos) continue;
    const absl::string_view index = token.substr(0, close);
    if (!std::all_of(index.begin(), index.end(), absl::ascii_isdigit)) {
      continue;
    }
    const absl::string_view name = token.substr(close + 1);
    if (!name.empty()) devices.emplace_back(name);
  }
  return devices;
}

void ReadLine(absl::string_view message, NcclLogFacts* facts) {
  if (absl::ConsumePrefix(&message, "NCCL version ")) {
    facts->version = std::string(absl::StripAsciiWhitespace(message));
    return;
  }
  if (absl::ConsumePrefix(&message, "Using network ")) {
    facts->network = std::string(absl::StripAsciiWhitespace(message));
    return;
  }
  if (absl::ConsumePrefix(&message, "NET/Plugin: Loaded net plugin ")) {
    // "<name> (v10)"
    const size_t paren = message.rfind(" (");
    facts->plugin = std::string(
        paren == absl::string_view::npos ? message : message.substr(0, paren));
    return;
  }
  if (absl::ConsumePrefix(&message, "NET/Socket : Using")) {
    facts->devices = IndexedDevices(message);
    return;
  }
  if (absl::ConsumePrefix(&message, "NET/IB : Using")) {
    const size_t semicolon = message.find(';');
    facts->devices = IndexedDevices(message.substr(0, semicolon));
    if (semicolon != absl::string_view::npos) {
      absl::string_view oob = message.substr(semicolon + 1);
      oob = absl::StripAsciiWhitespace(oob);
      if (absl::ConsumePrefix(&oob, "OOB ")) facts->oob = std::string(oob);
    }
    return;
  }
  if (absl::StartsWith(message, "Channel ")) {
    const size_t via = message.find(" via NET/");
    if (via == absl::string_view::npos) return;
    ++facts->net_channels;
    if (absl::StrContains(message.substr(via), "/GDRDMA")) {
      ++facts->gdr_channels;
    }
  }
}

}  // namespace

NcclLogFacts ParseNcclLog(absl::string_view log) {
  NcclLogFacts facts;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    const size_t at = line.find(kInfo);
    if (at == absl::string_view::npos) continue;
    ReadLine(absl::StripTrailingAsciiWhitespace(line.substr(at + kInfo.size())),
             &facts);
  }
  return facts;
}

std::map<std::string, std::string> NcclLogParams(const NcclLogFacts& facts) {
  std::map<std::string, std::string> p;
  if (!facts.version.empty()) p["nccl_log_version"] = facts.version;
  if (!facts.network.empty()) {
    p["nccl_net"] = facts.network;
    if (facts.network == "Socket") {
      p["nccl_rdma"] = "no: Socket";
    } else if (facts.network == "IB") {
      p["nccl_rdma"] = "yes: IB";
    } else {
      p["nccl_rdma"] = absl::StrCat("unknown: ", facts.network);
    }
  }
  if (!facts.plugin.empty()) p["nccl_net_plugin"] = facts.plugin;
  if (facts.net_channels == 0) {
    if (facts.found()) p["nccl_gdrdma"] = "no net channels";
  } else {
    p["nccl_gdrdma"] =
        absl::StrCat(facts.gdr_channels, " of ", facts.net_channels,
                     " net channels",
                     facts.gdr_channels == 0 ? ": no GPUDirect RDMA" : "");
  }
  if (!facts.devices.empty()) {
    p["nccl_net_devices"] = absl::StrJoin(facts.devices, ",");
  }
  if (!facts.oob.empty()) p["nccl_oob"] = facts.oob;
  return p;
}

}  // namespace fleetbench::gpu
