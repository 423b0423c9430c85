#include "cli/group_flags.h"

#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/reason.h"

namespace fleetbench::cli {
namespace {

// More group sizes than this is a typo, not a scaling curve.
constexpr int kMaxScalingSizes = 64;
// A node count no fleet reaches: the bound on one size.
constexpr uint32_t kMaxGroupSize = 100000;

absl::StatusOr<std::vector<uint32_t>> ParseSizes(const std::string& list) {
  std::vector<uint32_t> sizes;
  for (absl::string_view part : absl::StrSplit(list, ',')) {
    uint32_t size = 0;
    if (!absl::SimpleAtoi(part, &size) || size < 1 || size > kMaxGroupSize) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--scaling wants node counts like 1,2,4,8; '", ClipInput(std::string(part)),
          "' is not one"));
    }
    if (!sizes.empty() && size <= sizes.back()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--scaling sizes must be strictly ascending; ", size, " follows ", sizes.back()));
    }
    sizes.push_back(size);
  }
  if (sizes.size() > kMaxScalingSizes) {
    return absl::InvalidArgumentError(
        absl::StrCat("--scaling takes at most ", kMaxScalingSizes, " sizes"));
  }
  return sizes;
}

}  // namespace

std::vector<FlagSpec> GroupFlags() {
  return {
      {"group", false, false, "run collective benchmarks as one group over all the nodes"},
      {"scaling", true, false,
       "N,N,...: one group of the first N nodes per size, e.g. 1,2,4,8 (busbw and efficiency "
       "per N)"},
      {"isolate", false, false,
       "find the node or link that scales badly: every pair, then suspects re-paired with "
       "nodes that passed"},
      {"expect-busbw", true, false,
       "with --isolate: the pair busbw expected, in GBps (default: the median of the pairs)"},
      {"threshold", true, false,
       "with --isolate: a pair fails below (1 - F) x the expectation (default 0.2)"},
      {"bisect", false, false,
       "with --isolate: halve the suspect set instead of testing every pair (large fleets)"},
  };
}

absl::StatusOr<std::optional<v1::GroupOptions>> GroupOptionsFromArgs(const Args& args) {
  const int modes = args.Has("group") + args.Has("scaling") + args.Has("isolate");
  if (modes > 1) {
    return absl::InvalidArgumentError("give at most one of --group, --scaling and --isolate");
  }
  if (!args.Has("isolate")) {
    for (const char* flag : {"expect-busbw", "threshold", "bisect"}) {
      if (args.Has(flag)) {
        return absl::InvalidArgumentError(absl::StrCat("--", flag, " needs --isolate"));
      }
    }
  }
  if (modes == 0) return std::nullopt;
  v1::GroupOptions options;
  if (args.Has("group")) {
    options.set_mode(v1::GROUP_MODE_GROUP);
  } else if (args.Has("scaling")) {
    options.set_mode(v1::GROUP_MODE_SCALING);
    absl::StatusOr<std::vector<uint32_t>> sizes = ParseSizes(args.Get("scaling"));
    if (!sizes.ok()) return sizes.status();
    for (uint32_t s : *sizes) options.add_scaling(s);
  } else {
    options.set_mode(v1::GROUP_MODE_ISOLATE);
    options.set_bisect(args.Has("bisect"));
    if (args.Has("expect-busbw")) {
      double gbps = 0;
      if (!absl::SimpleAtod(args.Get("expect-busbw"), &gbps) || !std::isfinite(gbps) ||
          gbps <= 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--expect-busbw wants a bus bandwidth in GBps above 0, got '",
            ClipInput(args.Get("expect-busbw")), "'"));
      }
      options.set_expect_busbw_gbps(gbps);
    }
    if (args.Has("threshold")) {
      double threshold = 0;
      if (!absl::SimpleAtod(args.Get("threshold"), &threshold) || !(threshold > 0) ||
          !(threshold < 1)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--threshold wants a fraction between 0 and 1 (0.2: a pair fails below 0.8x the "
            "expectation), got '",
            ClipInput(args.Get("threshold")), "'"));
      }
      options.set_threshold(threshold);
    }
  }
  return options;
}

}  // namespace fleetbench::cli
