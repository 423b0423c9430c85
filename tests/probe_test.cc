// `fleetbench probe` as a script runs it: the real binary on this machine
// (no GPU here, so the findings come from facts and labels), its findings
// section, verdict line and exit code, in text and --json.
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/process.h"

namespace fleetbench {
namespace {

using testing::CommandResult;
using ::testing::HasSubstr;
using testing::MakeTempDir;
using testing::RunCommand;

class ProbeTest : public ::testing::Test {
 protected:
  // The scratch folder on tmpfs (/dev/shm): disk.scratch_ephemeral is then
  // a finding every machine gives, whatever else its facts say.
  void SetUp() override {
    scratch_ = "/dev/shm/fleetbench_probe_test_" + std::to_string(::getpid());
  }
  void TearDown() override { RunCommand({"rm", "-rf", scratch_}, {}); }

  CommandResult Probe(std::vector<std::string> extra) {
    std::vector<std::string> argv = {FLEETBENCH_BINARY, "probe", "--scratch",
                                     scratch_};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunCommand(argv, {});
  }

  static std::string LastLine(const std::string& out) {
    std::vector<std::string> lines =
        absl::StrSplit(out, '\n', absl::SkipEmpty());
    return lines.empty() ? "" : lines.back();
  }

  std::string scratch_;
};

TEST_F(ProbeTest, FactsOnlyFindingsAndAPassingVerdict) {
  // gpu_gemm is skipped on a node without a GPU: skipped is not failed.
  CommandResult r = Probe({"--bench", "gpu_gemm"});
  EXPECT_THAT(r.out, HasSubstr("\nfindings:\n"));
  EXPECT_THAT(
      r.out,
      HasSubstr("info      disk.scratch_ephemeral  scratch folder is on "
                "tmpfs: gone after a reboot\n"
                "    scratch_filesystem.tmpfs: yes (/proc/self/mounts)\n"));
  // Whatever else this machine's facts say, nothing here is critical or
  // failed: the verdict is PASS or WARN and the exit code 0.
  const std::string verdict = LastLine(r.out);
  EXPECT_THAT(verdict, ::testing::StartsWith("verdict: "));
  EXPECT_THAT(verdict, HasSubstr("(0 critical,"));
  EXPECT_FALSE(absl::StartsWith(verdict, "verdict: FAIL")) << verdict;
  const bool any_warning = absl::StrContains(r.out, "\nwarning   ");
  EXPECT_EQ(absl::StartsWith(verdict, "verdict: WARN"), any_warning) << r.out;
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// mem_numa on a machine with one NUMA node (this one, and CI's): the runner
// reports it skipped with the plugin's reason, not failed, and the probe
// still passes.
TEST_F(ProbeTest, MemNumaOnOneNodeIsSkippedWithTheReason) {
  if (::access("/sys/devices/system/node/node1", F_OK) == 0) {
    GTEST_SKIP() << "this machine has a second NUMA node";
  }
  CommandResult r = Probe({"--bench", "mem_numa"});
  EXPECT_THAT(r.out, ::testing::ContainsRegex(
                         "mem_numa +skipped +mem_numa: one NUMA node with memory "
                         "\\(node0: CPUs [0-9,]+, [0-9.]+ GiB\\): every access is "
                         "local"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST_F(ProbeTest, CriticalFindingFailsWithExitCode3) {
  // The node is said to have 8 GPUs; NVML sees none.
  CommandResult r = Probe({"--bench", "gpu_gemm", "--label", "gpus=8"});
  EXPECT_THAT(r.out, HasSubstr("critical  gpu.none  no GPU visible ("));
  EXPECT_THAT(
      r.out,
      HasSubstr("    gpus: 0 count (expected 8 count: node label gpus=8)\n"));
  EXPECT_THAT(LastLine(r.out),
              ::testing::StartsWith("verdict: FAIL (1 critical,"));
  EXPECT_EQ(r.exit_code, 3) << r.err;
}

TEST_F(ProbeTest, FailedBenchmarkExitsWith1) {
  CommandResult r = Probe({"--bench", "mem", "--param", "mem.repetitions=1"});
  EXPECT_THAT(LastLine(r.out),
              ::testing::StartsWith("verdict: FAIL (0 critical,"));
  EXPECT_THAT(LastLine(r.out), HasSubstr("; failed: mem)"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  // A critical finding outranks the failed benchmark.
  r = Probe(
      {"--bench", "mem", "--param", "mem.repetitions=1", "--label", "gpus=1"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
}

TEST_F(ProbeTest, JsonCarriesFindingsVerdictAndExitCode) {
  CommandResult r =
      Probe({"--bench", "gpu_gemm", "--label", "spot=true", "--json"});
  EXPECT_THAT(r.out, HasSubstr("\"code\": \"node.preemptible\""));
  EXPECT_THAT(r.out, HasSubstr("\"code\": \"disk.scratch_ephemeral\""));
  EXPECT_THAT(r.out, HasSubstr("\"severity\": \"SEVERITY_WARNING\""));
  EXPECT_THAT(r.out, HasSubstr("\"expectation_source\": \"node labels\""));
  const bool critical = absl::StrContains(r.out, "SEVERITY_CRITICAL");
  EXPECT_THAT(r.out, HasSubstr(critical ? "\"verdict\": \"FAIL\""
                                        : "\"verdict\": \"WARN\""));
  EXPECT_THAT(r.out,
              HasSubstr(critical ? "\"exit_code\": 3" : "\"exit_code\": 0"));
  EXPECT_EQ(r.exit_code, critical ? 3 : 0);
}

TEST_F(ProbeTest, HelpDocumentsTheExitCodes) {
  CommandResult r = Probe({"--help"});
  EXPECT_EQ(r.exit_code, 0);  // asked for, help is not an error
  EXPECT_THAT(
      r.out,  // help asked for goes to stdout (cli/usage.h)
      HasSubstr("exit codes: 0 PASS or WARN (warnings only), 3 FAIL with a "
                "critical finding,\n1 a benchmark failed"));
  r = Probe({"--label", "novalue"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("fleetbench probe: --label"));
}

}  // namespace
}  // namespace fleetbench
