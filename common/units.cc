#include "common/units.h"

#include "absl/strings/str_format.h"

namespace fleetbench {

double GigabytesPerSecond(double bytes, double seconds) {
  if (!(seconds > 0)) return 0;
  return bytes / seconds / 1e9;
}

double GbpsFromBytes(uint64_t bytes, double seconds) {
  if (!(seconds > 0)) return 0;
  return static_cast<double>(bytes) * 8.0 / seconds / 1e9;
}

std::string FormatNumber(double value) {
  return absl::StrFormat("%.6g", value);
}

}  // namespace fleetbench
