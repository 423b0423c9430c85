#include "controller/ranking/goodput.h"

#include <cmath>
#include <random>

#include "gtest/gtest.h"

namespace fleetbench::controller {
namespace {

// A job of `work_h` hours of progress run directly: each checkpoint
// interval is tried until no interruption falls inside it; an interruption
// costs the time since the last checkpoint plus the restart. Returns the
// goodput of `jobs` such jobs together (progress over wall time).
double SimulatedGoodput(double rate_per_node_hour, const JobShape& job, double work_h,
                        int jobs, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> next_failure(rate_per_node_hour * job.nodes);
  const double interval_h = absl::ToDoubleHours(job.checkpoint_interval);
  const double restart_h = absl::ToDoubleHours(job.restart_cost);
  double wall = 0;
  for (int j = 0; j < jobs; ++j) {
    for (double done = 0; done < work_h;) {
      const double segment = std::min(interval_h, work_h - done);
      const double failure = next_failure(rng);
      if (failure >= segment) {
        wall += segment;
        done += segment;
      } else {
        wall += failure + restart_h;
      }
    }
  }
  return work_h * jobs / wall;
}

TEST(GoodputTest, MatchesADirectSimulationOfExponentialInterruptions) {
  struct Case {
    double rate;
    JobShape job;
  };
  // From one node to a large job; goodputs from about 0.99 to about 0.2.
  const Case cases[] = {
      {0.001, {1, absl::Minutes(30), absl::Minutes(10)}},
      {0.002, {64, absl::Minutes(30), absl::Minutes(10)}},
      {0.002, {512, absl::Minutes(30), absl::Minutes(10)}},
      {0.0005, {1024, absl::Hours(2), absl::Minutes(20)}},
      {0.01, {128, absl::Minutes(15), absl::Minutes(5)}},
  };
  uint64_t seed = 1;
  for (const Case& c : cases) {
    const double model = JobGoodput(c.rate, c.job);
    const double simulated = SimulatedGoodput(c.rate, c.job, 24, 10'000, seed++);
    EXPECT_NEAR(model / simulated, 1.0, 0.02)
        << "rate " << c.rate << " nodes " << c.job.nodes << ": model " << model
        << " simulated " << simulated;
  }
}

TEST(GoodputTest, ApproximatelyOneMinusLostWorkPerInterruption) {
  const JobShape job{8, absl::Minutes(30), absl::Minutes(10)};
  const double rate = 1e-4;
  const double job_rate = rate * 8;
  EXPECT_NEAR(JobGoodput(rate, job), 1 - job_rate * (10.0 / 60 + 0.25), 1e-6);
}

TEST(GoodputTest, EdgesOfTheModel) {
  EXPECT_EQ(JobGoodput(0, {}), 1.0);
  EXPECT_EQ(JobGoodput(std::nan(""), {}), 1.0);
  // Interrupted far more often than it checkpoints: nothing gets done.
  EXPECT_EQ(JobGoodput(10, {kMaxJobNodes, absl::Hours(1), absl::Minutes(1)}), 0.0);
  // More nodes, less goodput.
  EXPECT_GT(JobGoodput(0.001, {1}), JobGoodput(0.001, {512}));
}

TEST(GoodputTest, RefusesShapesThatMeanNothing) {
  EXPECT_TRUE(CheckJobShape({}).ok());
  EXPECT_FALSE(CheckJobShape({0}).ok());
  EXPECT_FALSE(CheckJobShape({kMaxJobNodes + 1}).ok());
  EXPECT_FALSE(CheckJobShape({1, absl::ZeroDuration(), absl::Minutes(1)}).ok());
  EXPECT_FALSE(CheckJobShape({1, absl::InfiniteDuration(), absl::Minutes(1)}).ok());
  EXPECT_FALSE(CheckJobShape({1, absl::Minutes(5), -absl::Minutes(1)}).ok());
  EXPECT_TRUE(CheckJobShape({1, absl::Minutes(5), absl::ZeroDuration()}).ok());
}

}  // namespace
}  // namespace fleetbench::controller
