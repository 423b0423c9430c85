#include "agent/benchmarks/workload_process/process_group.h"

#include <unistd.h>

#include <fstream>

#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

TEST(ParseProcStatTest, ReadsStateGroupAndRss) {
  const auto stat = ParseProcStat(
      "1234 (sleep) S 1200 1234 1200 0 -1 4194304 92 0 0 0 0 0 0 0 20 0 1 0 "
      "5001 5607424 216 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 "
      "0 0 0\n");
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(stat->state, 'S');
  EXPECT_EQ(stat->pgrp, 1234);
  EXPECT_EQ(stat->rss_pages, 216);
}

TEST(ParseProcStatTest, ACommandNameWithSpacesAndParentheses) {
  const auto stat = ParseProcStat(
      "77 (a) Z (b c) R 1 88 88 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 100 9 0\n");
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(stat->state, 'R');
  EXPECT_EQ(stat->pgrp, 88);
  EXPECT_EQ(stat->rss_pages, 9);
}

TEST(ParseProcStatTest, RefusesWhatIsNotAStatLine) {
  EXPECT_FALSE(ParseProcStat("").has_value());
  EXPECT_FALSE(ParseProcStat("12 (x) S 1 2").has_value());
  EXPECT_FALSE(
      ParseProcStat("12 (x) S 1 two 3 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0")
          .has_value());
}

TEST(SampleProcessGroupTest, CountsThisProcessInItsGroup) {
  const auto sample = SampleProcessGroup(getpgrp());
  ASSERT_TRUE(sample.has_value());
  EXPECT_GE(sample->live_processes, 1);
  EXPECT_GT(sample->rss_bytes, 0);
}

TEST(SampleProcessGroupTest, AGroupThatCannotExistIsEmpty) {
  pid_t pid_max = 4194304;
  std::ifstream("/proc/sys/kernel/pid_max") >> pid_max;
  const auto sample = SampleProcessGroup(pid_max);  // pids are below pid_max
  ASSERT_TRUE(sample.has_value());
  EXPECT_EQ(sample->live_processes, 0);
  EXPECT_EQ(sample->rss_bytes, 0);
}

}  // namespace
}  // namespace fleetbench::agent
