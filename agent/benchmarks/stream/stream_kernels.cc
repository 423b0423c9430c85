#include "agent/benchmarks/stream/stream_kernels.h"

#include "agent/benchmarks/stream/stream_math.h"

namespace fleetbench::agent {

void StreamCopy(const double* __restrict a, double* __restrict c,
                int64_t begin, int64_t end) {
  for (int64_t j = begin; j < end; ++j) c[j] = a[j];
}
void StreamScale(double* __restrict b, const double* __restrict c,
                 int64_t begin, int64_t end) {
  for (int64_t j = begin; j < end; ++j) b[j] = kStreamScalar * c[j];
}
void StreamAdd(const double* __restrict a, const double* __restrict b,
               double* __restrict c, int64_t begin, int64_t end) {
  for (int64_t j = begin; j < end; ++j) c[j] = a[j] + b[j];
}
void StreamTriad(double* __restrict a, const double* __restrict b,
                 const double* __restrict c, int64_t begin, int64_t end) {
  for (int64_t j = begin; j < end; ++j) a[j] = b[j] + kStreamScalar * c[j];
}

}  // namespace fleetbench::agent
