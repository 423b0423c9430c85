#include "agent/benchmarks/stream/stream_math.h"

#include <cmath>
#include <cstdint>

#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

TEST(StreamMathTest, BytesCountedAsStreamDoes) {
  EXPECT_DOUBLE_EQ(StreamBytes(StreamKernel::kCopy, 1000), 16000);
  EXPECT_DOUBLE_EQ(StreamBytes(StreamKernel::kScale, 1000), 16000);
  EXPECT_DOUBLE_EQ(StreamBytes(StreamKernel::kAdd, 1000), 24000);
  EXPECT_DOUBLE_EQ(StreamBytes(StreamKernel::kTriad, 1000), 24000);
}

TEST(StreamMathTest, KernelNames) {
  EXPECT_STREQ(StreamKernelName(StreamKernel::kCopy), "copy");
  EXPECT_STREQ(StreamKernelName(StreamKernel::kScale), "scale");
  EXPECT_STREQ(StreamKernelName(StreamKernel::kAdd), "add");
  EXPECT_STREQ(StreamKernelName(StreamKernel::kTriad), "triad");
}

TEST(StreamMathTest, ExpectedValuesFollowTheKernels) {
  StreamValues v = ExpectedStreamValues(0);
  EXPECT_DOUBLE_EQ(v.a, 1);
  EXPECT_DOUBLE_EQ(v.b, 2);
  EXPECT_DOUBLE_EQ(v.c, 0);
  // c = a = 1; b = 3c = 3; c = a + b = 4; a = b + 3c = 15.
  v = ExpectedStreamValues(1);
  EXPECT_DOUBLE_EQ(v.a, 15);
  EXPECT_DOUBLE_EQ(v.b, 3);
  EXPECT_DOUBLE_EQ(v.c, 4);
  // 12× growth per repetition stays finite at the maximum allowed.
  v = ExpectedStreamValues(200);
  EXPECT_TRUE(std::isfinite(v.a) && std::isfinite(v.b) && std::isfinite(v.c));
}

TEST(StreamMathTest, AverageRelativeError) {
  EXPECT_DOUBLE_EQ(StreamAverageRelativeError(10, 10, 4), 0.25);
  EXPECT_DOUBLE_EQ(StreamAverageRelativeError(10, 10, -4), 0.25);
  EXPECT_DOUBLE_EQ(StreamAverageRelativeError(10, 10, 0), 1);
  EXPECT_DOUBLE_EQ(StreamAverageRelativeError(10, 0, 4), 0);
}

TEST(StreamMathTest, ParsesSysfsCacheSizes) {
  EXPECT_EQ(ParseCacheSize("32K"), 32 * 1024);
  EXPECT_EQ(ParseCacheSize("32768K\n"), 32 * kMiB);
  EXPECT_EQ(ParseCacheSize("2M"), 2 * kMiB);
  EXPECT_EQ(ParseCacheSize("1G"), 1024 * kMiB);
  EXPECT_EQ(ParseCacheSize("512"), 512);
  EXPECT_EQ(ParseCacheSize(""), std::nullopt);
  EXPECT_EQ(ParseCacheSize("K"), std::nullopt);
  EXPECT_EQ(ParseCacheSize("big"), std::nullopt);
  EXPECT_EQ(ParseCacheSize("-1K"), std::nullopt);
}

TEST(StreamMathTest, DefaultArrayIsFourTimesLlcWithFloor) {
  EXPECT_EQ(DefaultStreamArrayBytes(32 * kMiB), 128 * kMiB);
  EXPECT_EQ(DefaultStreamArrayBytes(1 * kMiB), 64 * kMiB);
  EXPECT_EQ(DefaultStreamArrayBytes(0), 64 * kMiB);
  // Rounded up to whole MiB.
  EXPECT_EQ(DefaultStreamArrayBytes(20 * kMiB + 1), 81 * kMiB);
}

TEST(StreamMathTest, SlicesCoverTheArrayOnCacheLines) {
  for (int64_t n :
       {int64_t{0}, int64_t{5}, int64_t{64}, int64_t{1000003}, 16 * kMiB}) {
    for (int threads : {1, 2, 3, 7, 64}) {
      int64_t expected_begin = 0;
      for (int i = 0; i < threads; ++i) {
        const Slice s = ThreadSlice(n, threads, i);
        EXPECT_EQ(s.begin, expected_begin) << n << " " << threads << " " << i;
        EXPECT_LE(s.begin, s.end);
        EXPECT_EQ(s.begin % 8, 0);
        expected_begin = s.end;
      }
      EXPECT_EQ(expected_begin, n) << n << " " << threads;
    }
  }
  // Roughly equal shares.
  const Slice first = ThreadSlice(16 * kMiB, 4, 0);
  EXPECT_EQ(first.end - first.begin, 4 * kMiB);
}

}  // namespace
}  // namespace fleetbench::agent
