// What an ended run says about its nodes' reliability: a critical node
// finding or a bad-node verdict, once per node however many findings.
#include "controller/core/run_interruptions.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

diagnosis::NodeEvidence Node(const std::string& name, int gpus_label) {
  diagnosis::NodeEvidence e;
  e.node = name;
  e.run_id = "R1";
  if (gpus_label > 0) e.labels["gpus"] = std::to_string(gpus_label);
  return e;
}

TEST(RunInterruptionsTest, OnlyANodeWithACriticalNodeFindingCounts) {
  // g says it has 8 GPUs and shows none: gpu.none, critical. h says
  // nothing of GPUs: nothing to judge.
  const std::vector<RunInterruption> found = CriticalFindingsOf({Node("g", 8), Node("h", 0)});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].node, "g");
  EXPECT_EQ(found[0].kind, v1::INTERRUPTION_KIND_CRITICAL_FINDING);
  EXPECT_EQ(found[0].detail, "run R1: gpu.none");
}

TEST(RunInterruptionsTest, ACodeOnSeveralGpusIsNamedOnce) {
  diagnosis::NodeEvidence e = Node("g", 0);
  for (int i = 0; i < 2; ++i) {
    v1::GpuFacts* gpu = e.facts.add_gpus();
    gpu->set_index(i);
    gpu->set_ecc_uncorrected_volatile(3);  // errors since the driver loaded
  }
  const std::vector<RunInterruption> found = CriticalFindingsOf({e});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].detail, "run R1: gpu.ecc_errors");
}

TEST(RunInterruptionsTest, ACompleteVerdictsBadNodesAreIsolated) {
  v1::IsolationVerdict verdict;
  verdict.add_bad_nodes("n3");
  verdict.add_cleared("n1");
  verdict.set_pair_tests(9);
  EXPECT_THAT(IsolatedBy("R2", verdict), IsEmpty()) << "not complete yet";
  verdict.set_complete(true);
  const std::vector<RunInterruption> found = IsolatedBy("R2", verdict);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].node, "n3");
  EXPECT_EQ(found[0].kind, v1::INTERRUPTION_KIND_ISOLATED);
  EXPECT_EQ(found[0].detail, "run R2: a bad node by isolation (9 group tests)");
}

}  // namespace
}  // namespace fleetbench::controller
