// agent/benchmarks/stream/stream_kernels.h — the four STREAM loops over one
// slice [begin, end) of the arrays, as stream.c writes them.
//
// They live in their own file, compiled with -fno-tree-loop-distribute-patterns
// (CMakeLists.txt), because GCC otherwise turns the copy loop into a call to
// memmove/memcpy: glibc's memcpy then decides the access pattern (vector
// width, non-temporal stores above a size threshold), and "copy" measures
// the C library instead of the loop STREAM defines. The flag stops only that
// pattern replacement; vectorisation is what the build's optimisation level
// gives (bench/mem_vs_stream.sh compiles stream.c with the same flags; the
// CTest stream_kernels_are_loops, check_stream_kernels.sh, fails when the
// object calls memmove, memcpy or memset).
//
// Pure loops; __restrict lets the compiler treat the arrays as stream.c's
// distinct globals. Thread-safe for disjoint slices.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_STREAM_STREAM_KERNELS_H_
#define FLEETBENCH_AGENT_BENCHMARKS_STREAM_STREAM_KERNELS_H_

#include <cstdint>

namespace fleetbench::agent {

void StreamCopy(const double* __restrict a, double* __restrict c,
                int64_t begin, int64_t end);  // c = a
void StreamScale(double* __restrict b, const double* __restrict c,
                 int64_t begin, int64_t end);  // b = s·c
void StreamAdd(const double* __restrict a, const double* __restrict b,
               double* __restrict c, int64_t begin, int64_t end);  // c = a + b
void StreamTriad(double* __restrict a, const double* __restrict b,
                 const double* __restrict c, int64_t begin,
                 int64_t end);  // a = b + s·c

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_STREAM_STREAM_KERNELS_H_
