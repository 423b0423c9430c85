#include "common/number_text.h"

#include <cmath>
#include <cstdio>

namespace fleetbench {

std::string FormatForPeople(double value) {
  char buf[64];
  const double a = std::fabs(value);
  if (a != 0 && (a < 0.001 || a >= 1e9)) {
    std::snprintf(buf, sizeof(buf), "%.4g", value);
  } else if (a >= 1000) {
    std::snprintf(buf, sizeof(buf), "%.0f", value);
  } else if (a >= 10) {
    std::snprintf(buf, sizeof(buf), "%.2f", value);
  } else {
    std::snprintf(buf, sizeof(buf), "%.4f", value);
  }
  return buf;
}

}  // namespace fleetbench
