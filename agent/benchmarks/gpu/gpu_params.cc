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
  return reader_.Bytes(key, fallback, lo, hi);
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
