// common/status_macros.h — early returns on a failed absl::Status or
// absl::StatusOr, for every layer above kernels/.
//
// The macros only return; they never format or log (STYLE.md, "Errors").
// A library's own error code (errno, NVML, verbs) becomes a Status in a
// small function of that library's adapter first, which picks the code and
// writes the message with the call's text and place:
//   FLEETBENCH_RETURN_IF_ERROR(NvmlStatus(api, api.count(&n), "nvml..."));
// kernels/ cannot include this file (it is the lowest layer); it has one
// macro of its own for CUDA, cuBLASLt and NCCL results (kernels/cuda_status.h).
#ifndef FLEETBENCH_COMMON_STATUS_MACROS_H_
#define FLEETBENCH_COMMON_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Returns the Status `expr` evaluates to when it is not OK.
#define FLEETBENCH_RETURN_IF_ERROR(expr)                                      \
  do {                                                                        \
    if (absl::Status fleetbench_status_ = (expr); !fleetbench_status_.ok()) { \
      return fleetbench_status_;                                              \
    }                                                                         \
  } while (0)

// Evaluates the StatusOr `expr`; returns its Status when it is not OK, else
// moves its value into `lhs` (a declaration, `int64_t key`, or an lvalue).
// Expands to statements, not one: not for an unbraced if/else body.
#define FLEETBENCH_ASSIGN_OR_RETURN(lhs, expr) \
  FLEETBENCH_ASSIGN_OR_RETURN_IMPL_(           \
      FLEETBENCH_STATUS_CONCAT_(fleetbench_statusor_, __LINE__), lhs, expr)

#define FLEETBENCH_STATUS_CONCAT_INNER_(a, b) a##b
#define FLEETBENCH_STATUS_CONCAT_(a, b) FLEETBENCH_STATUS_CONCAT_INNER_(a, b)
#define FLEETBENCH_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                      \
  if (!statusor.ok()) return std::move(statusor).status();     \
  lhs = std::move(statusor).value()

#endif  // FLEETBENCH_COMMON_STATUS_MACROS_H_
