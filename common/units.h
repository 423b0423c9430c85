// common/units.h — byte and rate units, and how plugins write a number into
// a sample's params: one definition each, so every plugin's values read and
// convert the same way.
//
// Decimal prefixes for rates (GB/s = 10^9 bytes/s, Gbit/s = 10^9 bits/s, as
// docs/metrics.md says); binary ones for sizes (MiB, GiB). Pure functions.
#ifndef FLEETBENCH_COMMON_UNITS_H_
#define FLEETBENCH_COMMON_UNITS_H_

#include <cstdint>
#include <string>

namespace fleetbench {

inline constexpr int64_t kMiB = int64_t{1} << 20;
inline constexpr int64_t kGiB = int64_t{1} << 30;

// 10^9 bytes per second; 0 for a non-positive time.
double GigabytesPerSecond(double bytes, double seconds);
// 10^9 bits per second; 0 for a non-positive time.
double GbpsFromBytes(uint64_t bytes, double seconds);

// A param value: six significant digits ("%.6g": 12.3457, 1e+06, 0.001).
// Stored history is written this way, so the format is permanent.
std::string FormatNumber(double value);

}  // namespace fleetbench

#endif  // FLEETBENCH_COMMON_UNITS_H_
