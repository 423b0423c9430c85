#include "common/reason.h"

#include <string>

#include "gtest/gtest.h"

namespace fleetbench {
namespace {

TEST(TruncateReasonTest, ShortReasonIsUnchanged) {
  EXPECT_EQ(TruncateReason("bad size 'x'"), "bad size 'x'");
  const std::string exact(kMaxReasonLength, 'a');
  EXPECT_EQ(TruncateReason(exact), exact);
}

TEST(TruncateReasonTest, LongReasonIsCutWithAMarkerWithinTheLimit) {
  const std::string text(5000, 'x');
  const std::string cut = TruncateReason(text);
  EXPECT_LE(cut.size(), kMaxReasonLength);
  EXPECT_GT(cut.size(), kMaxReasonLength - 32);
  const size_t kept = cut.find("…");
  ASSERT_NE(kept, std::string::npos);
  EXPECT_EQ(cut.substr(0, kept), std::string(kept, 'x'));
  EXPECT_EQ(cut.substr(kept), "… (" + std::to_string(5000 - kept) + " bytes cut)");
}

TEST(TruncateReasonTest, NeverSplitsAUtf8Character) {
  std::string text;
  for (int i = 0; i < 100; ++i) text += "é";  // two bytes each
  for (size_t max = 20; max < 40; ++max) {
    const std::string cut = TruncateReason(text, max);
    EXPECT_LE(cut.size(), max);
    const size_t marker = cut.find("… (");
    ASSERT_NE(marker, std::string::npos) << max;
    EXPECT_EQ(marker % 2, 0u) << max;  // whole "é"s only
  }
}

TEST(TruncateReasonTest, TinyLimitGivesNothingRatherThanTooMuch) {
  EXPECT_LE(TruncateReason(std::string(100, 'x'), 5).size(), 5u);
}

TEST(ClipInputTest, ShortInputIsUnchangedLongInputIsCut) {
  EXPECT_EQ(ClipInput("gemm"), "gemm");
  const std::string exact(kMaxEchoLength, 'a');
  EXPECT_EQ(ClipInput(exact), exact);
  const std::string huge(128 << 10, 'x');
  EXPECT_EQ(ClipInput(huge), std::string(kMaxEchoLength, 'x') + "...");
  std::string accents;
  for (int i = 0; i < 40; ++i) accents += "é";  // two bytes each
  const std::string cut = ClipInput(accents, 5);
  EXPECT_EQ(cut, "éé...");
}

// A failed task's reason was "allreduce: allreduce: backend=nccl: no NVIDIA
// driver": the runner named the benchmark, and so had the plugin.
TEST(ReasonOfTest, NamesTheBenchmarkOnce) {
  EXPECT_EQ(ReasonOf("gemm", "boom"), "gemm: boom");
  EXPECT_EQ(ReasonOf("allreduce", "allreduce: backend=nccl: no driver"),
            "allreduce: backend=nccl: no driver");
  EXPECT_EQ(ReasonOf("net", "network: down"), "net: network: down");
  EXPECT_EQ(ReasonOf("gemm", "gemm:"), "gemm: gemm:");  // not "NAME: " at its head
}

}  // namespace
}  // namespace fleetbench
