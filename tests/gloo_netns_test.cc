// The gloo engine across four network namespaces on a bridge, one process
// per rank (bench/gloo_bench.cc, meeting through a folder), the way agents
// on four hosts meet: each rank listens on its own namespace's IP. One
// member's link slowed with tbf drags the group's all-reduce down to it; a
// member killed mid-collective ends the others long before the deadline,
// and the next run over the same namespaces works. Needs root, iproute2
// and tc; without root it fails saying so.
//
// The same scenarios through the product (agents, a group run over the
// controller's relay) belong in the group-run end-to-end test.
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/process.h"

namespace fleetbench::testing {
namespace {

constexpr int kRanks = 4;
// Only addresses inside namespaces this test creates.
constexpr char kSubnet[] = "10.234.0.";

class GlooNamespacesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(geteuid(), 0u) << "creating network namespaces needs root";
    suffix_ = absl::StrCat(getpid() % 100000);
    hub_ = "fbgh" + suffix_;
    ASSERT_TRUE(Sh({"ip", "netns", "add", hub_}));
    ASSERT_TRUE(Sh({"ip", "-n", hub_, "link", "add", "br0", "type", "bridge"}));
    ASSERT_TRUE(Sh({"ip", "-n", hub_, "link", "set", "br0", "up"}));
    for (int r = 0; r < kRanks; ++r) {
      const std::string ns = Namespace(r);
      ASSERT_TRUE(Sh({"ip", "netns", "add", ns}));
      namespaces_.push_back(ns);
      ASSERT_TRUE(Sh({"ip", "link", "add", "fbg0", "netns", ns, "type", "veth",
                      "peer", "name", HubEnd(r), "netns", hub_}));
      ASSERT_TRUE(Sh({"ip", "-n", ns, "addr", "add",
                      absl::StrCat(Address(r), "/24"), "dev", "fbg0"}));
      ASSERT_TRUE(Sh({"ip", "-n", ns, "link", "set", "fbg0", "up"}));
      ASSERT_TRUE(Sh({"ip", "-n", ns, "link", "set", "lo", "up"}));
      ASSERT_TRUE(Sh({"ip", "-n", hub_, "link", "set", HubEnd(r), "master", "br0"}));
      ASSERT_TRUE(Sh({"ip", "-n", hub_, "link", "set", HubEnd(r), "up"}));
    }
    dir_ = std::filesystem::temp_directory_path() /
           absl::StrCat("gloo_netns_", suffix_);
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }

  void TearDown() override {
    ranks_.clear();  // SIGKILLs what still runs, before the namespaces go
    for (const std::string& ns : namespaces_) Sh({"ip", "netns", "del", ns});
    if (!hub_.empty()) Sh({"ip", "netns", "del", hub_});
    std::filesystem::remove_all(dir_);
  }

  std::string Namespace(int r) const { return absl::StrCat("fbg", r, "n", suffix_); }
  std::string HubEnd(int r) const { return absl::StrCat("g", r, "h", suffix_); }
  static std::string Address(int r) { return absl::StrCat(kSubnet, r + 1); }

  // Shapes both directions of rank r's link with a token bucket.
  void SlowLink(int r, const std::string& rate) {
    for (const auto& [where, dev] :
         {std::pair{Namespace(r), std::string("fbg0")}, std::pair{hub_, HubEnd(r)}}) {
      EXPECT_TRUE(Sh({"ip", "netns", "exec", where, "tc", "qdisc", "add", "dev", dev,
                      "root", "tbf", "rate", rate, "burst", "64kb", "latency", "50ms"}));
    }
  }

  // Starts every rank of one group in its namespace (a fresh folder to
  // meet in per run).
  void StartGroup(const std::string& run, uint64_t bytes, int iters,
                  int deadline_s) {
    const std::string meet = dir_ + "/" + run;
    std::filesystem::create_directories(meet);
    ranks_.clear();
    for (int r = 0; r < kRanks; ++r) {
      ranks_.push_back(std::make_unique<Process>(
          std::vector<std::string>{"/usr/bin/env", "ip", "netns", "exec", Namespace(r),
                                   GLOO_BENCH_BINARY, absl::StrCat(r),
                                   absl::StrCat(kRanks), meet, absl::StrCat(bytes),
                                   absl::StrCat(bytes), absl::StrCat(iters), "1",
                                   Address(r), absl::StrCat(deadline_s)},
          std::map<std::string, std::string>{},
          absl::StrCat(meet, "/stderr.", r)));
    }
  }

  // Rank 0's busbw at its one size, after every rank exited 0.
  double WaitForBusbw() {
    std::string line;
    // Rank 0 prints "# connected", then one line per size.
    EXPECT_NE(ranks_[0]->ReadLineStartingWith("# connected", absl::Minutes(2)), "");
    line = ranks_[0]->ReadLineStartingWith("", absl::Minutes(3));
    for (int r = 0; r < kRanks; ++r) {
      EXPECT_EQ(ranks_[static_cast<size_t>(r)]->Wait(), 0) << "rank " << r;
    }
    std::vector<std::string> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
    double busbw = -1;
    EXPECT_EQ(fields.size(), 4u) << line;
    if (fields.size() == 4) {
      EXPECT_TRUE(absl::SimpleAtod(fields[3], &busbw)) << line;
    }
    return busbw;
  }

  bool Sh(const std::vector<std::string>& argv) {
    std::vector<std::string> full = {"/usr/bin/env"};
    full.insert(full.end(), argv.begin(), argv.end());
    CommandResult r = RunCommand(full, {});
    if (r.exit_code != 0) ADD_FAILURE() << absl::StrJoin(argv, " ") << ": " << r.err;
    return r.exit_code == 0;
  }

  std::string suffix_;
  std::string hub_;
  std::vector<std::string> namespaces_;
  std::string dir_;
  std::vector<std::unique_ptr<Process>> ranks_;
};

TEST_F(GlooNamespacesTest, ASlowMemberDragsTheGroupAllReduceDown) {
  StartGroup("fast", 8 << 20, 5, 300);
  const double fast = WaitForBusbw();
  SlowLink(2, "200mbit");
  StartGroup("slow", 8 << 20, 5, 300);
  const double slow = WaitForBusbw();
  std::cout << "busbw GB/s: unshaped " << fast << ", rank 2 at 200 Mbit/s " << slow
            << "\n";
  // The ring runs at its slowest link: 200 Mbit/s is 0.025 GB/s each way.
  EXPECT_LT(slow, 0.03);
  EXPECT_GT(slow, 0.005);
  EXPECT_GT(fast, 2 * slow);
}

TEST_F(GlooNamespacesTest, AKilledMemberEndsTheOthersBeforeTheDeadline) {
  constexpr int kDeadlineS = 120;
  // Long enough that the kill lands mid-sweep.
  StartGroup("killed", 8 << 20, 100000, kDeadlineS);
  // Every rank, not just the victim: a full mesh is complete for rank 1
  // before it is for the others, and a kill then lands while a survivor is
  // still meeting the group (CI saw rank 2 fail in its connect, not in the
  // allreduce this test is about).
  for (int r = 0; r < kRanks; ++r) {
    ASSERT_NE(ranks_[static_cast<size_t>(r)]->ReadLineStartingWith("# connected",
                                                                    absl::Minutes(2)),
              "")
        << "rank " << r;
  }
  const absl::Time killed_at = absl::Now();
  ranks_[1]->Signal(SIGKILL);
  for (int r : {0, 2, 3}) {
    std::optional<int> code =
        ranks_[static_cast<size_t>(r)]->WaitFor(absl::Seconds(kDeadlineS / 4));
    ASSERT_TRUE(code.has_value()) << "rank " << r << " still running after the kill";
    EXPECT_EQ(*code, 1) << "rank " << r;
  }
  std::cout << "the others ended " << absl::FormatDuration(absl::Now() - killed_at)
            << " after the kill\n";
  // Each says which operation broke.
  for (int r : {0, 2, 3}) {
    std::ifstream err(absl::StrCat(dir_, "/killed/stderr.", r));
    std::stringstream text;
    text << err.rdbuf();
    EXPECT_NE(text.str().find("allreduce at"), std::string::npos)
        << "rank " << r << ": " << text.str();
  }
  // The next group over the same namespaces works.
  StartGroup("after", 1 << 20, 3, 120);
  EXPECT_GT(WaitForBusbw(), 0);
}

}  // namespace
}  // namespace fleetbench::testing
