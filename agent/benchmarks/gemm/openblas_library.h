// agent/benchmarks/gemm/openblas_library.h — OpenBLAS, loaded with dlopen the
// first time the CPU GEMM plugin needs it instead of being linked.
//
// Why not link it: OpenBLAS (pthreads build) starts its thread pool in a
// library constructor, and those threads busy-wait for work for about a
// tenth of a second before they sleep. Every process that links it pays
// that, and the one `fleetbench` binary is also the CLI: each `fleetbench
// nodes` or `rank` call burned 60–80 ms of CPU on a 2-core machine for a
// library only the gemm plugin uses (docs/results-log.md, "2. rank over
// 1,000,000 samples"). Loaded lazily,
// only the agent that runs or probes gemm starts the pool.
//
// The five entry points every OpenBLAS has are required; their types come
// from cblas.h, so a mismatch with the header fails to compile. The
// half-precision GEMMs are optional: cblas_sbgemm (bf16) exists only in
// builds with BUILD_BFLOAT16=1 — Debian's 0.3.21 declares it in cblas.h but
// does not export it — and cblas_shgemm (fp16) only in OpenBLAS releases
// after 0.3.21, whose cblas.h here does not declare it, so its type is
// spelled out below (fp16 inputs, fp32 alpha, beta and C, like sbgemm).
#ifndef FLEETBENCH_AGENT_BENCHMARKS_GEMM_OPENBLAS_LIBRARY_H_
#define FLEETBENCH_AGENT_BENCHMARKS_GEMM_OPENBLAS_LIBRARY_H_

#include <cblas.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace fleetbench::agent {

// IEEE binary16 as OpenBLAS's shgemm takes it (its hfloat16 is 16 bits).
using ShgemmFn = void (*)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE,
                          enum CBLAS_TRANSPOSE, blasint m, blasint n,
                          blasint k, float alpha, const uint16_t* a,
                          blasint lda, const uint16_t* b, blasint ldb,
                          float beta, float* c, blasint ldc);

struct OpenBlasLibrary {
  decltype(&cblas_sgemm) sgemm = nullptr;
  decltype(&cblas_dgemm) dgemm = nullptr;
  decltype(&openblas_get_num_threads) get_num_threads = nullptr;
  decltype(&openblas_set_num_threads) set_num_threads = nullptr;
  decltype(&openblas_get_config) get_config = nullptr;
  // nullptr when this build lacks them (see above).
  decltype(&cblas_sbgemm) sbgemm = nullptr;
  ShgemmFn shgemm = nullptr;
  std::string path;  // the soname it was loaded as
};

// The process-wide library, loaded on the first call and never unloaded
// (its threads outlive any one benchmark). FAILED_PRECONDITION naming the
// library and dlerror() when it is missing or lacks an entry point; the
// same answer on every later call. Thread-safe.
absl::StatusOr<const OpenBlasLibrary*> OpenBlas();

// Loads `soname` afresh (for tests of the failure path; the plugin uses
// OpenBlas()). The handle is kept open on success.
absl::StatusOr<OpenBlasLibrary> LoadOpenBlasFrom(const std::string& soname);

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_GEMM_OPENBLAS_LIBRARY_H_
