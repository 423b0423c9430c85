// The "allreduce" plugin through the Benchmark interface: real gloo over
// loopback between members in threads, each with its own RunContext and
// GroupContext as the agent's runner gives them.
#include "agent/benchmarks/collective/collective_benchmark.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "agent/benchmarks/collective/local_rendezvous.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::collective {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// The one test double: a GPU backend, since this machine has no GPU.
class FakeNccl final : public agent::Benchmark {
 public:
  explicit FakeNccl(absl::Status probe) : probe_(std::move(probe)) {}
  std::string name() const override { return "allreduce"; }
  absl::Status Probe() const override { return probe_; }
  absl::Status ValidateParams(const agent::Params&) const override {
    return absl::OkStatus();
  }
  std::vector<agent::MetricInfo> metrics() const override {
    return {{"allreduce.nccl.busbw_GBps", "GBps", agent::kHigherIsBetter, "x"}};
  }
  absl::StatusOr<std::vector<v1::Sample>> Run(
      const agent::Params& params, const agent::RunContext&) override {
    ran_with = params;
    v1::Sample s;
    s.set_metric("allreduce.nccl.busbw_GBps");
    s.set_value(1);
    return std::vector<v1::Sample>{s};
  }
  agent::Params ran_with;

 private:
  absl::Status probe_;
};

struct MemberOutcome {
  absl::StatusOr<std::vector<v1::Sample>> samples;
};

std::vector<MemberOutcome> RunGroup(
    int ranks, const agent::Params& params,
    absl::Status nccl_probe = absl::FailedPreconditionError("no GPU")) {
  LocalRendezvous rendezvous;
  std::vector<std::string> nodes, addresses;
  for (int r = 0; r < ranks; ++r) {
    nodes.push_back("node" + std::to_string(r));
    addresses.push_back("127.0.0.1");
  }
  std::vector<MemberOutcome> out(static_cast<size_t>(ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      agent::GroupContext group;
      group.group_id = "g1";
      group.rank = r;
      group.size = ranks;
      group.member_nodes = nodes;
      group.member_addresses = addresses;
      group.deadline = absl::Now() + absl::Seconds(60);
      group.rendezvous = &rendezvous;
      std::atomic<bool> cancelled{false};
      agent::RunContext context("/nonexistent", &cancelled, nullptr);
      context.set_group(&group);
      CollectiveBenchmark bench(std::make_unique<FakeNccl>(nccl_probe));
      out[static_cast<size_t>(r)].samples = bench.Run(params, context);
    });
  }
  for (std::thread& t : threads) t.join();
  return out;
}

TEST(CollectiveBenchmarkTest, GroupOfThreeReportsOnRankZeroOnly) {
  std::vector<MemberOutcome> out =
      RunGroup(3, {{"backend", "gloo"},
                   {"ops", "allreduce,allgather,reducescatter"},
                   {"min_bytes", "64K"},
                   {"max_bytes", "256K"},
                   {"iters", "3"},
                   {"warmup", "1"}});
  for (int r = 1; r < 3; ++r) {
    ASSERT_TRUE(out[static_cast<size_t>(r)].samples.ok())
        << out[static_cast<size_t>(r)].samples.status();
    EXPECT_THAT(*out[static_cast<size_t>(r)].samples, IsEmpty());
  }
  ASSERT_TRUE(out[0].samples.ok()) << out[0].samples.status();
  const std::vector<v1::Sample>& samples = *out[0].samples;
  CollectiveBenchmark bench(nullptr);
  std::vector<std::string> headlines;
  int curve = 0;
  for (const v1::Sample& s : samples) {
    EXPECT_TRUE(DeclaredMetric(bench, s.metric()).has_value()) << s.metric();
    EXPECT_EQ(s.unit(), "GBps");
    EXPECT_GT(s.value(), 0);
    EXPECT_EQ(s.params().at("ranks"), "3");
    EXPECT_EQ(s.params().at("backend"), "gloo");
    EXPECT_EQ(s.params().at("nodes"), "node0,node1,node2");
    EXPECT_EQ(s.params().at("iters"), "3");
    if (s.metric() == "allreduce.gloo.curve_busbw_GBps") {
      ++curve;
    } else {
      headlines.push_back(s.metric());
      // The headline is the largest size (256 KiB rounds to 3·21845 floats).
      EXPECT_EQ(s.params().at("bytes"), std::to_string(262140));
    }
  }
  EXPECT_THAT(headlines, ElementsAre("allreduce.gloo.busbw_GBps",
                                     "allgather.gloo.busbw_GBps",
                                     "reducescatter.gloo.busbw_GBps"));
  EXPECT_EQ(curve, 3 * 3);  // 64K, 128K, 256K for each op
}

TEST(CollectiveBenchmarkTest, AutoInAGroupFollowsRankZerosNcclProbe) {
  // NCCL probes OK on rank 0: the group runs the NCCL backend on every
  // member (one rank per node).
  std::vector<MemberOutcome> out =
      RunGroup(2, {{"min_bytes", "4K"}, {"max_bytes", "4K"}, {"iters", "1"}},
               absl::OkStatus());
  for (const MemberOutcome& m : out) {
    ASSERT_TRUE(m.samples.ok()) << m.samples.status();
    ASSERT_FALSE(m.samples->empty());
    EXPECT_EQ(m.samples->front().params().at("backend"), "nccl");
  }
  // Without NCCL on rank 0 every member runs gloo.
  out = RunGroup(2, {{"min_bytes", "4K"}, {"max_bytes", "4K"}, {"iters", "1"}});
  ASSERT_TRUE(out[0].samples.ok()) << out[0].samples.status();
  ASSERT_TRUE(out[1].samples.ok()) << out[1].samples.status();
  ASSERT_FALSE(out[0].samples->empty());
  EXPECT_EQ(out[0].samples->front().params().at("backend"), "gloo");
}

TEST(CollectiveBenchmarkTest,
     NcclInAGroupWithoutAGpuFailsOnEveryMemberWithRankZerosReason) {
  std::vector<MemberOutcome> out = RunGroup(2, {{"backend", "nccl"}});
  EXPECT_EQ(out[0].samples.status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(out[0].samples.status().message(), HasSubstr("no GPU"));
  EXPECT_EQ(out[1].samples.status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(out[1].samples.status().message(),
              HasSubstr("rank 0 (node0) refused the run"));
  EXPECT_THAT(out[1].samples.status().message(), HasSubstr("no GPU"));
}

TEST(CollectiveBenchmarkTest, AloneAutoPicksNcclWhereItProbesElseGloo) {
  std::atomic<bool> cancelled{false};
  agent::RunContext context("/nonexistent", &cancelled, nullptr);
  auto nccl = std::make_unique<FakeNccl>(absl::OkStatus());
  FakeNccl* fake = nccl.get();
  CollectiveBenchmark with_gpu(std::move(nccl));
  absl::StatusOr<std::vector<v1::Sample>> samples =
      with_gpu.Run({{"iters", "2"}}, context);
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 1u);
  EXPECT_EQ(samples->front().params().at("backend"), "nccl");
  // The NCCL backend never sees the backend key.
  EXPECT_EQ(fake->ran_with.count("backend"), 0u);
  EXPECT_EQ(fake->ran_with.at("iters"), "2");

  CollectiveBenchmark cpu_only(
      std::make_unique<FakeNccl>(absl::FailedPreconditionError("no GPU")));
  samples = cpu_only.Run(
      {{"min_bytes", "4K"}, {"max_bytes", "8K"}, {"iters", "2"}}, context);
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 3u);  // headline + 2 curve points
  for (const v1::Sample& s : *samples) {
    EXPECT_EQ(s.params().at("backend"), "gloo");
    EXPECT_EQ(s.params().at("ranks"), "1");
    EXPECT_EQ(s.value(), 0);  // one rank: nothing crosses a link
    EXPECT_EQ(s.params().count("nodes"), 0u);
  }
  EXPECT_EQ(cpu_only.Run({{"backend", "nccl"}}, context).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(CollectiveBenchmarkTest, ProbeIsOkWithoutAGpuAndParamsAreChecked) {
  CollectiveBenchmark bench(
      std::make_unique<FakeNccl>(absl::FailedPreconditionError("no GPU")));
  EXPECT_TRUE(bench.Probe().ok());
  EXPECT_TRUE(bench.collective());
  EXPECT_TRUE(
      bench.ValidateParams({{"backend", "gloo"}, {"ops", "allgather"}}).ok());
  EXPECT_THAT(bench.ValidateParams({{"backend", "mpi"}}).message(),
              HasSubstr("backend"));
  EXPECT_EQ(bench.ValidateParams({{"backend", "gloo,nccl"}}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bench.ValidateParams({{"opps", "allreduce"}}).code(),
            absl::StatusCode::kInvalidArgument);
  // Both backends' metrics are declared.
  EXPECT_TRUE(DeclaredMetric(bench, "allreduce.nccl.busbw_GBps").has_value());
  EXPECT_TRUE(
      DeclaredMetric(bench, "reducescatter.gloo.busbw_GBps").has_value());
}

TEST(CollectiveBenchmarkTest, DefaultTimeoutFollowsTheSweep) {
  CollectiveBenchmark bench(nullptr);
  // One 16 MiB all-reduce, 1 warm-up + 2 timed + 1 checked: 4 x 2 x 16 MiB
  // at 25 MB/s = 5.4 s, rounded up, after the 2-minute start allowance.
  EXPECT_EQ(bench.DefaultTimeout({{"min_bytes", "16M"},
                                  {"max_bytes", "16M"},
                                  {"iters", "2"},
                                  {"warmup", "1"}}),
            absl::Minutes(2) + absl::Seconds(6));
  // The defaults (1M..1G, 20 + 5 + 1 operations, all-reduce): 2047 MiB x 2
  // x 26 at 25 MB/s = 4464.6 s.
  EXPECT_EQ(bench.DefaultTimeout({}), absl::Minutes(2) + absl::Seconds(4465));
  // Every op counts: all-gather and reduce-scatter send 1x the size.
  EXPECT_EQ(bench.DefaultTimeout({{"ops", "allreduce,allgather,reducescatter"},
                                  {"min_bytes", "16M"},
                                  {"max_bytes", "16M"},
                                  {"iters", "2"},
                                  {"warmup", "1"},
                                  {"backend", "nccl"}}),
            absl::Minutes(2) + absl::Seconds(11));
  // Parameters that do not parse: the plugin interface's default.
  EXPECT_EQ(bench.DefaultTimeout({{"iters", "many"}}), absl::Minutes(30));
}

TEST(CollectiveBenchmarkTest, ResolveBackend) {
  const absl::Status no_gpu = absl::FailedPreconditionError("no GPU");
  EXPECT_EQ(*ResolveBackend("auto", absl::OkStatus()), "nccl");
  EXPECT_EQ(*ResolveBackend("auto", no_gpu), "gloo");
  EXPECT_EQ(*ResolveBackend("gloo", absl::OkStatus()), "gloo");
  EXPECT_EQ(*ResolveBackend("gloo", no_gpu), "gloo");
  EXPECT_EQ(*ResolveBackend("nccl", absl::OkStatus()), "nccl");
  EXPECT_THAT(ResolveBackend("nccl", no_gpu).status().message(),
              HasSubstr("no GPU"));
  EXPECT_EQ(ResolveBackend("nccl", no_gpu).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(CollectiveBenchmarkTest, GlooSamplesUseTheSlowestRankAndBusFactors) {
  GlooPoint small;
  small.bytes = 1000;
  small.seconds = 1e-6;
  small.group_seconds = 2e-6;
  small.checked = 10;
  GlooPoint large = small;
  large.bytes = 4'000'000'000;
  large.seconds = 1.0;
  large.group_seconds = 2.0;  // algbw 2 GB/s
  large.slowest_rank = 3;
  absl::StatusOr<std::vector<v1::Sample>> samples =
      GlooSamples("allreduce", 4, {"a", "b", "c", "d"}, {small, large});
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 3u);
  const v1::Sample& headline = (*samples)[0];
  EXPECT_EQ(headline.metric(), "allreduce.gloo.busbw_GBps");
  EXPECT_DOUBLE_EQ(headline.value(), 2.0 * 1.5);
  EXPECT_EQ(headline.params().at("algbw_GBps"), "2");
  EXPECT_EQ(headline.params().at("time_us"), "2e+06");
  EXPECT_EQ(headline.params().at("slowest_rank"), "3");
  EXPECT_EQ(headline.params().at("nodes"), "a,b,c,d");

  samples = GlooSamples("allgather", 4, {}, {large});
  ASSERT_TRUE(samples.ok());
  EXPECT_DOUBLE_EQ((*samples)[0].value(), 2.0 * 0.75);

  GlooPoint wrong = small;
  wrong.mismatches = 2;
  wrong.first_expected = 6;
  wrong.first_actual = 5;
  absl::Status bad = GlooSamples("allreduce", 2, {}, {wrong}).status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(bad.message(), HasSubstr("expected 6, got 5"));
}

TEST(CollectiveBenchmarkTest, HostOfAddress) {
  EXPECT_EQ(HostOfAddress("10.0.0.2"), "10.0.0.2");
  EXPECT_EQ(HostOfAddress("10.0.0.2:7000"), "10.0.0.2");
  EXPECT_EQ(HostOfAddress("[fd00::2]:7000"), "fd00::2");
  EXPECT_EQ(HostOfAddress("fd00::2"), "fd00::2");
  EXPECT_EQ(HostOfAddress("node1"), "node1");
  EXPECT_EQ(HostOfAddress("[::1]"), "::1");
  EXPECT_EQ(HostOfAddress("ipv4:10.0.0.7:51234"), "10.0.0.7");
  EXPECT_EQ(HostOfAddress("ipv6:[fd00::7]:51234"), "fd00::7");
}

}  // namespace
}  // namespace fleetbench::collective
