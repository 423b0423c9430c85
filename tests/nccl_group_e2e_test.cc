// NCCL across nodes through the product on a machine without a GPU:
// three real `fleetbench agent`s on loopback and a real controller, a
// GROUP_MODE_GROUP run of `allreduce backend=nccl` started with the CLI as a
// user would. No member has a driver, so every member fails at once with
// the reason (rank 0's NCCL probe fails and it refuses for the group
// through the rendezvous; the NCCL path itself refuses the same way,
// nccl_group_test), the
// group is failed well inside its deadline, the run names why, no agent is
// left busy and the next run (gloo) works. Nothing here succeeds falsely:
// on a machine with a driver the test is skipped (bench/nccl_gpu_check.sh is
// the GPU run).
#include <dlfcn.h>

#include <string>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "fleetbench/v1/run.pb.h"
#include "gtest/gtest.h"
#include "tests/fleet_fixture.h"

namespace fleetbench::testing {
namespace {

bool DriverPresent() {
  void* libcuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (libcuda == nullptr) return false;
  dlclose(libcuda);
  return true;
}

class NcclGroupE2eTest : public FleetTest {};

TEST_F(NcclGroupE2eTest, WithoutAGpuEveryMemberFailsFastAndTheRunSaysWhy) {
  if (DriverPresent()) GTEST_SKIP() << "an NVIDIA driver is installed here";
  StartController();
  for (const char* n : {"a1", "a2", "a3"}) StartAgent(n, {});
  ASSERT_TRUE(WaitForOnlineNodes(3, absl::Seconds(30)));

  const absl::Time started = absl::Now();
  v1::Run run;
  int code = -1;
  ASSERT_TRUE(CliJson({"run", "--bench", "allreduce", "--param",
                       "allreduce.backend=nccl", "--param",
                       "allreduce.max_bytes=1M", "--nodes", "a1,a2,a3",
                       "--group", "--wait"},
                      &run, &code));
  // The group's deadline is minutes away: nobody waited for it.
  EXPECT_LT(absl::Now() - started, absl::Seconds(30));
  EXPECT_EQ(code, 1) << run.DebugString();
  EXPECT_EQ(run.state(), v1::RUN_STATE_FAILED) << run.DebugString();
  EXPECT_EQ(run.samples_size(), 0);
  ASSERT_EQ(run.groups_size(), 1) << run.DebugString();
  const std::string& reason = run.groups(0).reason();
  EXPECT_EQ(run.groups(0).state(), v1::TASK_STATE_FAILED) << reason;
  // Rank 0's NCCL probe refuses for the group and the others fail with its
  // reason; whichever failure the controller heard first names the group's,
  // and both name the missing driver.
  EXPECT_TRUE(absl::StrContains(reason, "backend=nccl")) << reason;
  EXPECT_TRUE(absl::StrContains(reason, "libcuda.so.1")) << reason;
  ASSERT_EQ(run.tasks_size(), 3);
  for (const v1::NodeTask& t : run.tasks()) {
    EXPECT_NE(t.state(), v1::TASK_STATE_SUCCEEDED) << t.node();
    EXPECT_NE(t.state(), v1::TASK_STATE_RUNNING) << t.node();
  }

  // No agent is left busy: the same three run a gloo group next.
  ASSERT_TRUE(CliJson({"run", "--bench", "allreduce", "--param",
                       "allreduce.backend=gloo", "--param",
                       "allreduce.max_bytes=64K", "--param",
                       "allreduce.min_bytes=64K", "--nodes", "a1,a2,a3",
                       "--group", "--wait"},
                      &run, &code));
  EXPECT_EQ(code, 0) << run.DebugString();
  EXPECT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED) << run.DebugString();
}

}  // namespace
}  // namespace fleetbench::testing
