#include "agent/benchmarks/gpu/gpu_params.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace fleetbench::gpu {

ParamReader::ParamReader(std::string plugin, const agent::Params& params,
                         std::vector<std::string> allowed)
    : reader_(plugin, params), allowed_(std::move(allowed)) {}

absl::Status ParamReader::Bad(const std::string& key,
                              const std::string& what) const {
  return reader_.Error(key, what);
}

absl::Status ParamReader::CheckKeys() const {
  std::vector<absl::string_view> allowed(allowed_.begin(), allowed_.end());
  return reader_.CheckKeys(allowed);
}

absl::StatusOr<int64_t> ParamReader::Int(const std::string& key,
                                         int64_t fallback, int64_t lo,
                                         int64_t hi) const {
  if (!Has(key)) return fallback;
  return reader_.Int(key, fallback, lo, hi);
}

absl::StatusOr<int64_t> ParamReader::Bytes(const std::string& key,
                                           int64_t fallback, int64_t lo,
                                           int64_t hi) const {
  if (!Has(key)) return fallback;
  std::string text = reader_.Get(key, "");
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
      return Bad(key, absl::StrCat(reader_.Get(key, ""), " is outside ", lo,
                                   "..", hi, " bytes"));
    }
    return Bad(key, absl::StrCat("'", reader_.Get(key, ""),
                                 "' is not a byte count (e.g. 1048576, 64K, "
                                 "1M, 1G)"));
  }
  value *= scale;
  if (value < lo || value > hi) {
    return Bad(key, absl::StrCat(reader_.Get(key, ""), " is outside ", lo,
                                 "..", hi, " bytes"));
  }
  return value;
}

absl::StatusOr<double> ParamReader::Double(const std::string& key,
                                           double fallback, double lo,
                                           double hi) const {
  if (!Has(key)) return fallback;
  return reader_.Double(key, fallback, lo, hi);
}

absl::StatusOr<std::vector<std::string>> ParamReader::List(
    const std::string& key, const std::string& fallback) const {
  return reader_.List(key, fallback);
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
