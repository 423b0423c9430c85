// The agent side of NCCL across nodes (gpu_allreduce.h, RunGroup) through
// the real dlopen path, against a fake GPU module (fake_gpu_module_for_test.cc:
// this machine has no GPU): rank 0 alone makes the id and publishes it,
// the others wait for it and all use the same one; a rank 0 that cannot
// start refuses for the group; a member that never comes ends in an abort
// by cancel or by the group's deadline, never a hang.
#include <dlfcn.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "agent/benchmarks/gpu/gpu_allreduce.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::gpu {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

// The group's key-value store, in this process (the agents' relay is
// tested in agent/runtime and the e2e tests). Counts who set what.
class MemoryRendezvous final : public agent::Rendezvous {
 public:
  absl::Status Set(const std::string& key, const std::string& value) override {
    std::lock_guard<std::mutex> lock(mu_);
    values_[key] = value;
    ++sets_[key];
    changed_.notify_all();
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> Get(const std::string& key,
                                  absl::Duration timeout) override {
    std::unique_lock<std::mutex> lock(mu_);
    if (!changed_.wait_for(lock, absl::ToChronoMilliseconds(timeout),
                           [&] { return values_.count(key) > 0; })) {
      return absl::DeadlineExceededError("not set");
    }
    return values_.at(key);
  }
  int sets(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    return sets_[key];
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  std::map<std::string, std::string> values_;
  std::map<std::string, int> sets_;
};

struct Stats {
  int unique_id_calls = 0, group_calls = 0, aborts = 0, distinct_ids = 0;
};

// What the fake module saw since the last call (and resets it).
Stats TakeStats() {
  void* module = dlopen(FAKE_GPU_MODULE_PATH, RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(module, nullptr) << "the fake module is not loaded";
  Stats s;
  if (module == nullptr) return s;
  using Fn = void (*)(int*, int*, int*, int*);
  auto fn = reinterpret_cast<Fn>(dlsym(module, "fake_gpu_module_stats"));
  EXPECT_NE(fn, nullptr);
  if (fn != nullptr) {
    fn(&s.unique_id_calls, &s.group_calls, &s.aborts, &s.distinct_ids);
  }
  dlclose(module);
  return s;
}

GpuPluginOptions FakeModule(const std::string& path = FAKE_GPU_MODULE_PATH) {
  GpuPluginOptions options;
  options.module.candidates = {path};
  options.nvml.library = "/nonexistent/libnvidia-ml.so.1";
  return options;
}

struct Member {
  agent::GroupContext group;
  std::atomic<bool> cancelled{false};
  absl::StatusOr<std::vector<v1::Sample>> samples;
  absl::Duration took;
};

class NcclGroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Loaded once and kept (as the loader keeps modules), so that the
    // stats are read from the instance the plugin uses.
    ASSERT_NE(dlopen(FAKE_GPU_MODULE_PATH, RTLD_NOW | RTLD_LOCAL), nullptr)
        << dlerror();
    TakeStats();
  }

  // Members of a group of `size`; only those in `present` run.
  void Make(int size, absl::Duration deadline = absl::Seconds(60)) {
    members_.clear();
    rendezvous_ = std::make_unique<MemoryRendezvous>();
    for (int r = 0; r < size; ++r) {
      auto m = std::make_unique<Member>();
      m->group.group_id = "g1";
      m->group.rank = r;
      m->group.size = size;
      for (int q = 0; q < size; ++q) {
        m->group.member_nodes.push_back("n" + std::to_string(q + 1));
        m->group.member_addresses.push_back("127.0.0.1");
      }
      m->group.deadline = absl::Now() + deadline;
      m->group.rendezvous = rendezvous_.get();
      members_.push_back(std::move(m));
    }
  }
  std::thread Start(int rank, const agent::Params& params,
                    GpuPluginOptions options = FakeModule()) {
    return std::thread([this, rank, params, options] {
      Member& m = *members_[static_cast<size_t>(rank)];
      agent::RunContext context(::testing::TempDir(), &m.cancelled, nullptr);
      context.set_group(&m.group);
      AllreduceBenchmark bench(options);
      const absl::Time start = absl::Now();
      m.samples = bench.Run(params, context);
      m.took = absl::Now() - start;
    });
  }

  std::unique_ptr<MemoryRendezvous> rendezvous_;
  std::vector<std::unique_ptr<Member>> members_;
};

const agent::Params kSweep = {{"ops", "allreduce,allgather"},
                              {"min_bytes", "1M"},
                              {"max_bytes", "4M"},
                              {"iters", "2"}};

TEST_F(NcclGroupTest, RankZeroAloneMakesTheIdAndEveryRankUsesIt) {
  Make(3);
  // The others come first and wait for rank 0's id.
  std::vector<std::thread> threads;
  threads.push_back(Start(2, kSweep));
  threads.push_back(Start(1, kSweep));
  threads.push_back(Start(0, kSweep));
  for (std::thread& t : threads) t.join();
  for (const auto& m : members_) {
    ASSERT_TRUE(m->samples.ok()) << m->samples.status();
  }
  const Stats stats = TakeStats();
  EXPECT_EQ(stats.unique_id_calls, 1);
  EXPECT_EQ(stats.group_calls, 3);
  EXPECT_EQ(stats.distinct_ids, 1);  // the same id on every rank
  EXPECT_EQ(rendezvous_->sets(kNcclIdKey), 1);
  EXPECT_THAT(*members_[1]->samples, IsEmpty());
  EXPECT_THAT(*members_[2]->samples, IsEmpty());

  const std::vector<v1::Sample>& samples = *members_[0]->samples;
  // 2 ops x (headline + 3 sizes).
  ASSERT_EQ(samples.size(), 8u);
  AllreduceBenchmark bench(FakeModule());
  for (const v1::Sample& s : samples) {
    EXPECT_TRUE(DeclaredMetric(bench, s.metric()).has_value()) << s.metric();
    EXPECT_EQ(s.params().at("ranks"), "3");
    EXPECT_EQ(s.params().at("nodes"), "n1,n2,n3");
    EXPECT_EQ(s.params().at("gpu_name"), "Fake GPU");
    // The facts of rank 0's NCCL INFO log.
    EXPECT_EQ(s.params().at("nccl_net"), "Socket");
    EXPECT_EQ(s.params().at("nccl_rdma"), "no: Socket");
    EXPECT_EQ(s.params().at("nccl_gdrdma"),
              "0 of 2 net channels: no GPUDirect RDMA");
    EXPECT_EQ(s.params().at("nccl_net_devices"), "veth0:10.1.0.1<0>");
  }
  // nccl-tests' factor for 3 ranks: all-reduce 2(n-1)/n; the fake takes
  // 1 ns per byte, so algbw is 1 GB/s.
  EXPECT_EQ(samples[0].metric(), "allreduce.nccl.busbw_GBps");
  EXPECT_NEAR(samples[0].value(), 4.0 / 3, 1e-9);
  EXPECT_EQ(samples[4].metric(), "allgather.nccl.busbw_GBps");
  EXPECT_NEAR(samples[4].value(), 2.0 / 3, 1e-9);
}

TEST_F(NcclGroupTest, ARankZeroWithoutAGpuRefusesForTheGroup) {
  Make(2);
  std::thread waiting = Start(1, kSweep);
  std::thread zero = Start(0, kSweep, FakeModule("/nonexistent/module.so"));
  zero.join();
  waiting.join();
  ASSERT_FALSE(members_[0]->samples.ok());
  EXPECT_EQ(members_[0]->samples.status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(members_[0]->samples.status().message(),
              HasSubstr("nccl rank 0 of 2"));
  ASSERT_FALSE(members_[1]->samples.ok());
  EXPECT_EQ(members_[1]->samples.status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(members_[1]->samples.status().message(),
              HasSubstr("rank 0 (n1) refused the run"));
  EXPECT_THAT(members_[1]->samples.status().message(),
              HasSubstr("cannot open shared object file"));
  // Fast: nobody waited for the deadline (60 s).
  EXPECT_LT(members_[1]->took, absl::Seconds(10));
  EXPECT_EQ(TakeStats().group_calls, 0);
}

TEST_F(NcclGroupTest, AMemberThatNeverComesEndsInAnAbortOnCancel) {
  Make(2);
  std::thread zero = Start(0, kSweep);  // rank 1 never starts
  // Rank 0 has published its id (and goes on to wait for its peer) before
  // the cancel.
  ASSERT_TRUE(rendezvous_->Get(kNcclIdKey, absl::Seconds(30)).ok());
  const absl::Time cancelled = absl::Now();
  members_[0]->cancelled = true;
  zero.join();
  EXPECT_LT(absl::Now() - cancelled, absl::Seconds(5));
  ASSERT_FALSE(members_[0]->samples.ok());
  EXPECT_EQ(members_[0]->samples.status().code(), absl::StatusCode::kCancelled);
  EXPECT_THAT(members_[0]->samples.status().message(), HasSubstr("aborted"));
  EXPECT_EQ(TakeStats().aborts, 1);
}

TEST_F(NcclGroupTest, TheGroupsDeadlineAbortsAndSaysSo) {
  Make(2, absl::Milliseconds(500));
  std::thread zero = Start(0, kSweep);
  zero.join();
  ASSERT_FALSE(members_[0]->samples.ok());
  EXPECT_EQ(members_[0]->samples.status().code(),
            absl::StatusCode::kDeadlineExceeded)
      << members_[0]->samples.status();
  EXPECT_LT(members_[0]->took, absl::Seconds(10));
  EXPECT_EQ(TakeStats().aborts, 1);
  // A member waiting for an id that never comes ends by the deadline too.
  Make(2, absl::Milliseconds(500));
  std::thread one = Start(1, kSweep);
  one.join();
  ASSERT_FALSE(members_[1]->samples.ok());
  EXPECT_EQ(members_[1]->samples.status().code(),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(members_[1]->samples.status().message(),
              HasSubstr("got no allreduce/nccl_id from rank 0 (n1)"));
}

TEST(NcclIdTextTest, RoundTripsAndRefusesBadText) {
  FleetbenchGpuNcclId id{};
  for (int i = 0; i < FLEETBENCH_GPU_NCCL_ID_BYTES; ++i) {
    id.bytes[i] = static_cast<char>(i * 37);
  }
  const std::string text = NcclIdText(id);
  EXPECT_EQ(text.size(), 256u);
  absl::StatusOr<FleetbenchGpuNcclId> back = ParseNcclIdText(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(std::string(back->bytes, 128), std::string(id.bytes, 128));
  EXPECT_EQ(ParseNcclIdText("abc").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseNcclIdText(std::string(256, 'g')).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fleetbench::gpu
