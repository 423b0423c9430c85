#include "agent/benchmarks/gpu/gpu_params.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace fleetbench::gpu {

ParamReader::ParamReader(std::string plugin, const agent::Params& params,
                         std::vector<std::string> allowed)
    : plugin_(std::move(plugin)), params_(params), allowed_(std::move(allowed)) {}

absl::Status ParamReader::Bad(const std::string& key,
                              const std::string& what) const {
  return absl::InvalidArgumentError(absl::StrCat(plugin_, ": ", key, ": ", what));
}

std::string ParamReader::Get(const std::string& key,
                             const std::string& fallback) const {
  auto it = params_.find(key);
  return it == params_.end() ? fallback : it->second;
}

absl::Status ParamReader::CheckKeys() const {
  for (const auto& [key, value] : params_) {
    if (std::find(allowed_.begin(), allowed_.end(), key) == allowed_.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(plugin_, ": unknown parameter '", key,
                       "' (allowed: ", absl::StrJoin(allowed_, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> ParamReader::Int(const std::string& key,
                                         int64_t fallback, int64_t lo,
                                         int64_t hi) const {
  if (!Has(key)) return fallback;
  const std::string text = Get(key, "");
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value)) {
    return Bad(key, absl::StrCat("'", text, "' is not an integer"));
  }
  if (value < lo || value > hi) {
    return Bad(key, absl::StrCat(value, " is outside ", lo, "..", hi));
  }
  return value;
}

absl::StatusOr<int64_t> ParamReader::Bytes(const std::string& key,
                                           int64_t fallback, int64_t lo,
                                           int64_t hi) const {
  if (!Has(key)) return fallback;
  std::string text = Get(key, "");
  int64_t scale = 1;
  if (!text.empty()) {
    switch (text.back()) {
      case 'K': case 'k': scale = int64_t{1} << 10; break;
      case 'M': case 'm': scale = int64_t{1} << 20; break;
      case 'G': case 'g': scale = int64_t{1} << 30; break;
      default: break;
    }
    if (scale != 1) text.pop_back();
  }
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value < 0 ||
      value > hi / scale) {
    if (absl::SimpleAtoi(text, &value) && value >= 0) {
      return Bad(key, absl::StrCat(Get(key, ""), " is outside ", lo, "..", hi,
                                   " bytes"));
    }
    return Bad(key, absl::StrCat("'", Get(key, ""),
                                 "' is not a byte count (e.g. 1048576, 64K, "
                                 "1M, 1G)"));
  }
  value *= scale;
  if (value < lo || value > hi) {
    return Bad(key, absl::StrCat(Get(key, ""), " is outside ", lo, "..", hi,
                                 " bytes"));
  }
  return value;
}

absl::StatusOr<double> ParamReader::Double(const std::string& key,
                                           double fallback, double lo,
                                           double hi) const {
  if (!Has(key)) return fallback;
  const std::string text = Get(key, "");
  double value = 0;
  if (!absl::SimpleAtod(text, &value) || !std::isfinite(value)) {
    return Bad(key, absl::StrCat("'", text, "' is not a number"));
  }
  if (!(value >= lo && value <= hi)) {
    return Bad(key, absl::StrCat(text, " is outside ", lo, "..", hi));
  }
  return value;
}

absl::StatusOr<std::vector<std::string>> ParamReader::List(
    const std::string& key, const std::string& fallback) const {
  const std::string text = Get(key, fallback);
  if (absl::StripAsciiWhitespace(text).empty()) {
    return Bad(key, "is empty; give a comma-separated list");
  }
  std::vector<std::string> items;
  std::set<std::string> seen;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    item = absl::StripAsciiWhitespace(item);
    if (item.empty()) {
      return Bad(key, absl::StrCat("'", text, "' has an empty entry"));
    }
    if (!seen.insert(std::string(item)).second) {
      return Bad(key, absl::StrCat("'", item, "' is listed twice"));
    }
    items.emplace_back(item);
  }
  return items;
}

absl::StatusOr<std::vector<int>> ParamReader::Devices(
    const std::string& key) const {
  absl::StatusOr<std::vector<std::string>> items = List(key, "all");
  if (!items.ok()) return items.status();
  if (items->size() == 1 && (*items)[0] == "all") return std::vector<int>{};
  std::vector<int> devices;
  for (const std::string& item : *items) {
    int value = 0;
    if (!absl::SimpleAtoi(item, &value) || value < 0 || value > 1023) {
      return Bad(key, absl::StrCat("'", item,
                                   "' is not 'all' or a device index 0..1023"));
    }
    devices.push_back(value);
  }
  return devices;
}

}  // namespace fleetbench::gpu
