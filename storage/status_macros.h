// storage/status_macros.h — early returns on a failed Status or StatusOr,
// for the storage implementation files only (not a public header).
#ifndef FLEETBENCH_STORAGE_STATUS_MACROS_H_
#define FLEETBENCH_STORAGE_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define FB_RETURN_IF_ERROR(expr)             \
  do {                                       \
    absl::Status _fb_status = (expr);        \
    if (!_fb_status.ok()) return _fb_status; \
  } while (0)

#define FB_CONCAT_INNER(a, b) a##b
#define FB_CONCAT(a, b) FB_CONCAT_INNER(a, b)
#define FB_ASSIGN_OR_RETURN(lhs, expr) \
  FB_ASSIGN_OR_RETURN_IMPL(FB_CONCAT(_fb_statusor_, __LINE__), lhs, expr)
#define FB_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return std::move(tmp).status(); \
  lhs = std::move(tmp).value()

#endif  // FLEETBENCH_STORAGE_STATUS_MACROS_H_
