// kernels/gpu_module_api.h — the C ABI between the fleetbench
// binary and libfleetbench_gpu.so, the module that holds every line of code
// linked against the CUDA runtime and cuBLASLt.
//
// Why a module: the same fleetbench binary must start on a node without a
// driver or CUDA libraries. The binary never links CUDA; it dlopen()s this
// module when a GPU benchmark is probed or run (gpu_module_loader.h). When
// dlopen fails (module absent, libcublasLt.so.13 absent) or the module's
// device query fails (no libcuda.so.1, no device), the GPU benchmarks report
// FAILED_PRECONDITION with that text: "skipped, with the reason".
//
// The ABI is plain C: fixed-size structs of scalars and char arrays, no C++
// types, no protobuf, no CUDA types, so the two sides may be built by
// different compilers and versions. The module does the measuring only; the
// binary parses parameters, computes statistics and builds samples.
//
// Contract of every function:
//   - returns 0 (absl::StatusCode::kOk) or an absl::StatusCode value; on
//     error writes a NUL-terminated message into error->message;
//   - output arrays are owned by the caller and sized as documented;
//   - calls are not reentrant: the caller runs one at a time (the runner
//     runs one benchmark at a time per node);
//   - cancellation: `cancelled` (may be null) is polled between trials; a
//     non-zero return makes the call stop and return CANCELLED (1).
//
// Versioning: the module exports one symbol, fleetbench_gpu_api_v1. A
// change that breaks this layout gets a new symbol (…_v2) and a new struct.
// Compatible growth appends function pointers at the END of
// FleetbenchGpuApi; `struct_size` (sizeof as the module built it) lets the
// binary refuse, with a reason, a module older than itself
// (FLEETBENCH_GPU_API_MIN_SIZE). Growth so far: device_count..copy (first
// layout), then collective and stress_gemm, then nccl_unique_id and
// group_collective (NCCL across nodes).
#ifndef FLEETBENCH_KERNELS_GPU_MODULE_API_H_
#define FLEETBENCH_KERNELS_GPU_MODULE_API_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FLEETBENCH_GPU_API_SYMBOL "fleetbench_gpu_api_v1"
#define FLEETBENCH_GPU_ERROR_CAPACITY 1024

typedef struct FleetbenchGpuError {
  char message[FLEETBENCH_GPU_ERROR_CAPACITY];
} FleetbenchGpuError;

typedef struct FleetbenchGpuDeviceInfo {
  char name[256];          // cudaDeviceProp::name, e.g. "NVIDIA H100 80GB HBM3"
  char pci_bus_id[32];     // cudaDeviceGetPCIBusId, "0000:3B:00.0"
  int compute_major;       // 9 for sm_90
  int compute_minor;
  int multiprocessors;
  uint64_t memory_bytes;   // total global memory
  int runtime_version;     // cudaRuntimeGetVersion, 13000 for 13.0
  int driver_version;      // cudaDriverGetVersion (highest CUDA it supports)
} FleetbenchGpuDeviceInfo;

// Element types of the GEMM; the numbers are part of the ABI.
typedef enum FleetbenchGpuDtype {
  FLEETBENCH_GPU_FP64 = 0,  // D = A·B in double
  FLEETBENCH_GPU_TF32 = 1,  // fp32 data, TF32 tensor-core math
  FLEETBENCH_GPU_FP16 = 2,  // fp16 A/B/D, fp32 accumulate
  FLEETBENCH_GPU_BF16 = 3,  // bf16 A/B/D, fp32 accumulate
  FLEETBENCH_GPU_FP8 = 4,   // e4m3 A/B, bf16 D, fp32 accumulate, TN; needs
                            // compute capability 8.9+ (Ada, Hopper, later)
} FleetbenchGpuDtype;

typedef int (*FleetbenchGpuCancelledFn)(void* context);

typedef struct FleetbenchGpuGemmArgs {
  int device;
  int dtype;                  // FleetbenchGpuDtype
  int64_t m, n, k;
  int warmup_products;        // untimed products before the first trial
  // Back-to-back products timed by one event pair. 0: chosen by the module
  // so that one trial lasts about target_trial_seconds (1..10000 products),
  // from the time of one product measured after warm-up.
  int products_per_trial;
  double target_trial_seconds;
  int trials;                 // length of seconds_per_trial
  uint64_t workspace_bytes;   // cuBLASLt workspace (32 MiB by default)
  FleetbenchGpuCancelledFn cancelled;
  void* cancelled_context;
} FleetbenchGpuGemmArgs;

typedef struct FleetbenchGpuGemmResult {
  int products_per_trial;     // as used (chosen when the args said 0)
  char layout[8];             // "NN" or "TN" (column-major, op(A) op(B))
  char algorithm[256];        // cuBLASLt's pick, e.g. "algo 66 tile 23 ..."
} FleetbenchGpuGemmResult;

typedef enum FleetbenchGpuCopyKind {
  FLEETBENCH_GPU_COPY_H2D = 0,  // pinned host -> device
  FLEETBENCH_GPU_COPY_D2H = 1,  // device -> pinned host
  FLEETBENCH_GPU_COPY_D2D = 2,  // device -> same device
} FleetbenchGpuCopyKind;

typedef struct FleetbenchGpuCopyArgs {
  int device;
  int kind;                   // FleetbenchGpuCopyKind
  uint64_t bytes;             // size of one copy
  int warmup_copies;
  int copies_per_trial;       // back-to-back copies timed by one event pair
  int trials;                 // length of seconds_per_trial
  FleetbenchGpuCancelledFn cancelled;
  void* cancelled_context;
} FleetbenchGpuCopyArgs;

// Collectives across every visible GPU of the node (NCCL, one process,
// ncclCommInitAll, one stream per GPU). Element type float, sum reduction.
typedef enum FleetbenchGpuCollectiveOp {
  FLEETBENCH_GPU_ALLREDUCE = 0,      // in: bytes per rank; out: bytes
  FLEETBENCH_GPU_ALLGATHER = 1,      // in: bytes/ranks per rank; out: bytes
  FLEETBENCH_GPU_REDUCESCATTER = 2,  // in: bytes per rank; out: bytes/ranks
} FleetbenchGpuCollectiveOp;

typedef struct FleetbenchGpuCollectiveArgs {
  int op;                     // FleetbenchGpuCollectiveOp
  // Sizes in bytes, nccl-tests' "size": the larger of the send and receive
  // buffer of one rank. The module rounds each down to a multiple of
  // 4·ranks bytes (and reports what it used). sizes == 0: probe only —
  // OK when NCCL is usable with the visible GPUs, and result->ranks and
  // result->nccl_version are filled.
  const uint64_t* sizes;
  int size_count;
  int warmup_iters;           // untimed operations per size
  int iters;                  // timed operations per size, one event pair
  FleetbenchGpuCancelledFn cancelled;
  void* cancelled_context;
} FleetbenchGpuCollectiveArgs;

// One entry per size, caller-owned array of size_count.
typedef struct FleetbenchGpuCollectivePoint {
  uint64_t bytes;             // size used (after rounding)
  double seconds;             // per operation: slowest rank's events / iters
  int64_t checked;            // elements compared against expected values
  int64_t mismatches;         // of those, how many differed
  double first_expected;      // the first mismatch, when mismatches > 0
  double first_actual;
} FleetbenchGpuCollectivePoint;

typedef struct FleetbenchGpuCollectiveResult {
  int ranks;                  // GPUs in the communicator
  int nccl_version;           // ncclGetVersion, e.g. 22809
} FleetbenchGpuCollectiveResult;

// Sustained GEMM on one device (the "stress" plugin). The same product
// D = A·B is repeated in batches; after each batch an event gives the
// GPU-time offset since the start. Every check_every products the module
// hashes D on the device: the product never changes, so the hash must equal
// the one taken after the first product (cuBLAS is bitwise reproducible for
// one GPU, algorithm, workspace and stream).
typedef struct FleetbenchGpuStressArgs {
  int device;
  int dtype;                  // FleetbenchGpuDtype (fp8 not accepted)
  int64_t n;                  // square n×n×n
  double seconds;             // wall-clock length of the run
  double batch_seconds;       // target GPU time of one batch (~0.1)
  int check_every;            // products between checksums, >= 1
  uint64_t workspace_bytes;
  int max_batches;            // capacity of the batches array
  FleetbenchGpuCancelledFn cancelled;
  void* cancelled_context;
} FleetbenchGpuStressArgs;

typedef struct FleetbenchGpuStressBatch {
  double end_seconds;         // event time since the first timed product
  int products;               // products in this batch
  int checked;                // 1 when D was hashed after this batch
  uint64_t checksum;          // the hash, when checked
} FleetbenchGpuStressBatch;

typedef struct FleetbenchGpuStressResult {
  int batches;                // entries written
  uint64_t reference_checksum;  // hash of D after the first product
  char algorithm[256];
} FleetbenchGpuStressResult;

// NCCL across nodes (the "allreduce" plugin in a group run): one rank per
// process, each process one member of the group. Rank 0 asks for the
// unique id (nccl_unique_id) in the process that then stays in the
// collective: NCCL's bootstrap root listens in the process that made the
// id. The binary hands the id to the other members (the controller's
// rendezvous relay); every member then calls group_collective with it.
#define FLEETBENCH_GPU_NCCL_ID_BYTES 128  // NCCL_UNIQUE_ID_BYTES

typedef struct FleetbenchGpuNcclId {
  char bytes[FLEETBENCH_GPU_NCCL_ID_BYTES];  // opaque: ncclUniqueId
} FleetbenchGpuNcclId;

typedef struct FleetbenchGpuGroupCollectiveArgs {
  const int* ops;             // FleetbenchGpuCollectiveOp, run in this order
  int op_count;
  const uint64_t* sizes;      // as FleetbenchGpuCollectiveArgs; >= 1 size
  int size_count;
  int warmup_iters;
  int iters;
  int device;                 // this rank's CUDA device
  int rank;                   // 0..nranks-1
  int nranks;
  FleetbenchGpuNcclId id;     // rank 0's, the same on every rank
  // When not null and not empty: NCCL's INFO log (NCCL_DEBUG=INFO,
  // NCCL_DEBUG_SUBSYS=INIT,NET) goes to this file for this call. The module
  // sets those variables in the process environment and has NCCL read them
  // again, so an operator's own NCCL_DEBUG* settings do not apply to it.
  const char* nccl_debug_file;
  // Polled while the communicator is being made and while operations are
  // in flight (every few ms, never blocking on the GPU): non-zero aborts
  // the communicator (ncclCommAbort) and the call returns CANCELLED. The
  // binary folds the group's deadline into it.
  FleetbenchGpuCancelledFn cancelled;
  void* cancelled_context;
} FleetbenchGpuGroupCollectiveArgs;

typedef struct FleetbenchGpuApi {
  uint32_t struct_size;  // sizeof(FleetbenchGpuApi) as the module built it
  // "cuda runtime 13.0, cublasLt 130100": what the module was built with.
  const char* build_info;

  // Number of visible devices. FAILED_PRECONDITION (9) with the CUDA error
  // text when the runtime cannot talk to a driver, or when there are none.
  int (*device_count)(int* count, FleetbenchGpuError* error);
  int (*device_info)(int device, FleetbenchGpuDeviceInfo* info,
                     FleetbenchGpuError* error);
  // Times args->trials trials; writes the event-timed seconds of each trial
  // (covering result->products_per_trial products) into seconds_per_trial.
  // FAILED_PRECONDITION when the device cannot do the dtype (fp8 before
  // compute capability 8.9), RESOURCE_EXHAUSTED when the matrices do not fit.
  int (*gemm)(const FleetbenchGpuGemmArgs* args, double* seconds_per_trial,
              FleetbenchGpuGemmResult* result, FleetbenchGpuError* error);
  // Same shape for copies: seconds of each trial of copies_per_trial copies.
  int (*copy)(const FleetbenchGpuCopyArgs* args, double* seconds_per_trial,
              FleetbenchGpuError* error);

  // --- appended after the first layout ---
  // NCCL collectives over all visible GPUs; points has args->size_count
  // entries. FAILED_PRECONDITION when the module was built without NCCL or
  // NCCL cannot initialise; RESOURCE_EXHAUSTED when buffers do not fit.
  int (*collective)(const FleetbenchGpuCollectiveArgs* args,
                    FleetbenchGpuCollectivePoint* points,
                    FleetbenchGpuCollectiveResult* result,
                    FleetbenchGpuError* error);
  // Sustained GEMM; batches has args->max_batches entries. Unlike the other
  // calls it may run concurrently for DIFFERENT devices (one thread each).
  int (*stress_gemm)(const FleetbenchGpuStressArgs* args,
                     FleetbenchGpuStressBatch* batches,
                     FleetbenchGpuStressResult* result,
                     FleetbenchGpuError* error);

  // --- appended for NCCL across nodes ---
  // ncclGetUniqueId; also fills *nccl_version (ncclGetVersion).
  // FAILED_PRECONDITION without NCCL or without a usable network interface.
  int (*nccl_unique_id)(FleetbenchGpuNcclId* id, int* nccl_version,
                        FleetbenchGpuError* error);
  // This rank's part of one communicator over args->nranks processes,
  // made NON-BLOCKING (ncclConfig_t blocking=0, ncclCommInitRankConfig,
  // ncclCommGetAsyncError polled), so that a member that never comes, a
  // peer that dies or a cancel ends in ncclCommAbort and a return, never a
  // hang. Runs every op over every size on one stream; points has
  // op_count * size_count entries, op-major (ops[0]'s sizes first). A
  // point's seconds are the slowest rank's (the ranks' times are reduced
  // with a max over the same communicator), its check this rank's receive
  // buffer. result->ranks is nranks. CANCELLED after an abort on
  // cancelled(); UNAVAILABLE when NCCL reports a remote or system error
  // (a peer gone); FAILED_PRECONDITION without NCCL or a device.
  int (*group_collective)(const FleetbenchGpuGroupCollectiveArgs* args,
                          FleetbenchGpuCollectivePoint* points,
                          FleetbenchGpuCollectiveResult* result,
                          FleetbenchGpuError* error);
} FleetbenchGpuApi;

// The smallest table this binary accepts: one that has every pointer above.
#define FLEETBENCH_GPU_API_MIN_SIZE \
  (offsetof(FleetbenchGpuApi, group_collective) + sizeof(void*))

// The one exported entry point. Never null.
const FleetbenchGpuApi* fleetbench_gpu_api_v1(void);
typedef const FleetbenchGpuApi* (*FleetbenchGpuApiV1Fn)(void);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // FLEETBENCH_KERNELS_GPU_MODULE_API_H_
