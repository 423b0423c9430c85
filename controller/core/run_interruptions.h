// controller/core/run_interruptions.h — the interruptions a run implies once
// it has ended (docs/reliability.md): a node whose results in the run drew a
// critical node-rule finding (diagnosis/node_rules.h: uncorrected ECC errors
// now, wrong results under stress, hardware slowdown, a CUDA runtime a major
// version past the driver, no GPU where the node says it has some) counts one
// `critical_finding`; a node that a complete isolation verdict names bad
// counts one `isolated`. One per node and run, whatever the number of
// findings, so a run read again never counts twice.
//
// Only node rules count: a fleet rule's critical (an outlier against its
// peers) says the node is slow, not that it stopped the job. Pure; the core
// gathers the evidence and hands the result to its ledger.
#ifndef FLEETBENCH_CONTROLLER_CORE_RUN_INTERRUPTIONS_H_
#define FLEETBENCH_CONTROLLER_CORE_RUN_INTERRUPTIONS_H_

#include <string>
#include <vector>

#include "diagnosis/node_rules.h"
#include "fleetbench/v1/reliability.pb.h"
#include "fleetbench/v1/run.pb.h"

namespace fleetbench::controller {

struct RunInterruption {
  std::string node;
  v1::InterruptionKind kind = v1::INTERRUPTION_KIND_UNSPECIFIED;
  std::string detail;  // "run R: gpu.ecc_errors, gpu.wrong_results"
};

// One `critical_finding` per node in `nodes` (each its evidence from one
// run: facts, labels, samples, outcomes) with a critical node-rule finding;
// the detail names the run and the codes.
std::vector<RunInterruption> CriticalFindingsOf(const std::vector<diagnosis::NodeEvidence>& nodes);

// One `isolated` per bad node of `verdict`; none while it is incomplete.
std::vector<RunInterruption> IsolatedBy(const std::string& run_id,
                                        const v1::IsolationVerdict& verdict);

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_CORE_RUN_INTERRUPTIONS_H_
