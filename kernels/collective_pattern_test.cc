#include "kernels/collective_pattern.h"

#include "gtest/gtest.h"
#include "kernels/gpu_module_api.h"

namespace fleetbench::kernels {
namespace {

TEST(CollectivePatternTest, ExpectedValuesAfterEachOp) {
  EXPECT_EQ(PatternValue(0, 0), 1.0);
  EXPECT_EQ(PatternValue(2, 14), 6.0);  // 3 · (14 mod 13 + 1)
  // 4 ranks: Σ(r+1) = 10.
  EXPECT_EQ(ExpectedAfter(FLEETBENCH_GPU_ALLREDUCE, 4, 3, 100, 12), 130.0);
  // allgather, 4 ranks sending 100: element 250 is rank 2's element 50.
  EXPECT_EQ(ExpectedAfter(FLEETBENCH_GPU_ALLGATHER, 4, 0, 100, 250),
            PatternValue(2, 50));
  // reducescatter, 4 ranks sending 100: rank 1 holds elements 25..49.
  EXPECT_EQ(ExpectedAfter(FLEETBENCH_GPU_REDUCESCATTER, 4, 1, 100, 0),
            10.0 * (25 % 13 + 1));
  // Sums stay exact in float for large rank counts (<= 2^24).
  EXPECT_LT(ExpectedAfter(FLEETBENCH_GPU_ALLREDUCE, 1024, 0, 1, 12),
            double(1 << 24));
}

}  // namespace
}  // namespace fleetbench::kernels
