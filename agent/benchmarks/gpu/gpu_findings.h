// agent/benchmarks/gpu/gpu_findings.h — what in a GPU's facts can explain a
// low number: power caps, a narrow PCIe link, MIG, ECC errors, heat, vGPU.
//
// Pure: reads one v1::GpuFacts (agent/facts/gpu_facts.h) and returns one
// short sentence per finding, in a fixed order; an empty list means nothing
// to say. Absent (unreadable) facts never produce a finding. The rules and
// their thresholds are listed in docs/gpu.md ("Findings").
#ifndef FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_FINDINGS_H_
#define FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_FINDINGS_H_

#include <string>
#include <vector>

#include "fleetbench/v1/gpu.pb.h"

namespace fleetbench::gpu {

// Enforced power limit below this share of the default one is a cap.
inline constexpr double kPowerCapShare = 0.99;
// Default power limit below this share of the SKU's board power is a board
// configured (by the vendor or the cloud) below its datasheet.
inline constexpr double kBoardPowerShare = 0.95;

std::vector<std::string> DiagnoseGpu(const v1::GpuFacts& facts);

}  // namespace fleetbench::gpu

#endif  // FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_FINDINGS_H_
