// Real gloo over real loopback TCP: each rank is a GlooEngine in its own
// thread of this process, meeting the others through a LocalRendezvous.
#include "agent/benchmarks/collective/gloo_engine.h"

#include <dirent.h>

#include <atomic>
#include <functional>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "agent/benchmarks/collective/local_rendezvous.h"
#include "gloo/transport/context.h"
#include "gloo/transport/pair.h"
#include "gloo/transport/tcp/device.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::collective {
namespace {

using ::testing::HasSubstr;

struct RankOutcome {
  absl::Status status;
  std::vector<std::vector<GlooPoint>> points;  // per op
  absl::Time ended;
};

// Runs `ranks` members (those in `present`, all when empty) of one group,
// each connecting and sweeping every op of `ops` over `sizes`.
std::vector<RankOutcome> RunGroup(int ranks,
                                  const std::vector<std::string>& ops,
                                  const std::vector<uint64_t>& sizes, int iters,
                                  absl::Duration deadline_in,
                                  std::function<bool(int rank)> cancelled = {},
                                  std::vector<int> present = {}) {
  if (present.empty()) {
    for (int r = 0; r < ranks; ++r) present.push_back(r);
  }
  LocalRendezvous rendezvous;
  const absl::Time deadline = absl::Now() + deadline_in;
  std::vector<RankOutcome> outcomes(static_cast<size_t>(ranks));
  std::vector<std::thread> threads;
  for (int r : present) {
    threads.emplace_back([&, r] {
      RankOutcome& out = outcomes[static_cast<size_t>(r)];
      GlooMember member;
      member.rank = r;
      member.size = ranks;
      member.address = "127.0.0.1";
      member.rendezvous = &rendezvous;
      member.deadline = deadline;
      if (cancelled)
        member.cancelled = [&cancelled, r] { return cancelled(r); };
      absl::StatusOr<std::unique_ptr<GlooEngine>> engine =
          GlooEngine::Connect(member);
      if (!engine.ok()) {
        out.status = engine.status();
        out.ended = absl::Now();
        return;
      }
      for (const std::string& op : ops) {
        absl::StatusOr<std::vector<GlooPoint>> points =
            (*engine)->Sweep(op, sizes, /*warmup=*/1, iters);
        if (!points.ok()) {
          out.status = points.status();
          break;
        }
        out.points.push_back(*std::move(points));
      }
      out.ended = absl::Now();
    });
  }
  for (std::thread& t : threads) t.join();
  return outcomes;
}

class GlooEngineRanksTest : public ::testing::TestWithParam<int> {};

TEST_P(GlooEngineRanksTest, EveryOpGivesTheKnownValuesOnEveryRank) {
  const int ranks = GetParam();
  const std::vector<std::string> ops = {"allreduce", "allgather",
                                        "reducescatter"};
  // 1 KiB to 1 MiB plus an odd size that rounds down to whole floats per rank.
  const std::vector<uint64_t> sizes = {1024, 65536, 1 << 20, 1000003};
  std::vector<RankOutcome> out =
      RunGroup(ranks, ops, sizes, /*iters=*/3, absl::Seconds(60));
  for (int r = 0; r < ranks; ++r) {
    const RankOutcome& o = out[static_cast<size_t>(r)];
    ASSERT_TRUE(o.status.ok()) << "rank " << r << ": " << o.status;
    ASSERT_EQ(o.points.size(), ops.size());
    for (size_t op = 0; op < ops.size(); ++op) {
      ASSERT_EQ(o.points[op].size(), sizes.size());
      for (size_t i = 0; i < sizes.size(); ++i) {
        const GlooPoint& p = o.points[op][i];
        SCOPED_TRACE(ops[op] + " rank " + std::to_string(r) + " size " +
                     std::to_string(sizes[i]));
        EXPECT_EQ(p.mismatches, 0)
            << "expected " << p.first_expected << " got " << p.first_actual;
        EXPECT_GT(p.checked, 0);
        EXPECT_EQ(p.bytes % (4u * static_cast<uint64_t>(ranks)), 0u);
        EXPECT_LE(p.bytes, sizes[i]);
        EXPECT_GT(p.bytes + 4u * static_cast<uint64_t>(ranks), sizes[i]);
        EXPECT_GT(p.seconds, 0);
        // The group's time is the slowest rank's, the same on every rank.
        EXPECT_GE(p.group_seconds, p.seconds);
        EXPECT_DOUBLE_EQ(p.group_seconds, out[0].points[op][i].group_seconds);
        EXPECT_GE(p.slowest_rank, 0);
        EXPECT_LT(p.slowest_rank, ranks);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(OneToFourRanks, GlooEngineRanksTest,
                         ::testing::Values(1, 2, 3, 4));

TEST(GlooEngineTest, CancelMidRunEndsEveryRankQuickly) {
  const int ranks = 3;
  std::atomic<bool> cancel{false};
  std::atomic<int> polls{0};
  absl::Time cancelled_at = absl::InfiniteFuture();
  std::atomic<bool> stamped{false};
  // Rank 0 raises the flag once the sweep is well under way (its 20th poll
  // between operations); every rank sees the same flag, as when the
  // controller cancels the group.
  auto cancelled = [&](int rank) {
    if (rank == 0 && ++polls == 20 && !stamped.exchange(true)) {
      cancelled_at = absl::Now();
      cancel = true;
    }
    return cancel.load();
  };
  std::vector<RankOutcome> out =
      RunGroup(ranks, {"allreduce"}, {4 << 20}, /*iters=*/10000,
               absl::Seconds(120), cancelled);
  ASSERT_TRUE(cancel.load());
  for (int r = 0; r < ranks; ++r) {
    const RankOutcome& o = out[static_cast<size_t>(r)];
    EXPECT_EQ(o.status.code(), absl::StatusCode::kCancelled)
        << "rank " << r << ": " << o.status;
    EXPECT_LT(o.ended - cancelled_at, absl::Seconds(5)) << "rank " << r;
  }
}

TEST(GlooEngineTest, OneRankStoppingEndsThePeersLongBeforeTheDeadline) {
  // Only rank 1 is cancelled: it leaves, its connections close, and the
  // ranks blocked in an operation with it fail at once, not at the deadline.
  const int ranks = 3;
  std::atomic<int> polls{0};
  std::atomic<bool> cancel{false};
  auto cancelled = [&](int rank) {
    if (rank != 1) return false;
    if (++polls >= 20) cancel = true;
    return cancel.load();
  };
  const absl::Time start = absl::Now();
  std::vector<RankOutcome> out =
      RunGroup(ranks, {"allreduce"}, {4 << 20}, /*iters=*/10000,
               absl::Seconds(120), cancelled);
  EXPECT_EQ(out[1].status.code(), absl::StatusCode::kCancelled)
      << out[1].status;
  for (int r : {0, 2}) {
    const RankOutcome& o = out[static_cast<size_t>(r)];
    EXPECT_FALSE(o.status.ok()) << "rank " << r;
    EXPECT_THAT(o.status.message(), HasSubstr("allreduce at"));
    EXPECT_LT(o.ended - start, absl::Seconds(60))
        << "rank " << r << ": " << o.status;
  }
}

TEST(GlooEngineTest, AMissingRankFailsByTheDeadlineNamingIt) {
  const absl::Time start = absl::Now();
  std::vector<RankOutcome> out =
      RunGroup(3, {"allreduce"}, {4096}, 1, absl::Seconds(2), {}, {0, 1});
  for (int r : {0, 1}) {
    const RankOutcome& o = out[static_cast<size_t>(r)];
    EXPECT_EQ(o.status.code(), absl::StatusCode::kDeadlineExceeded)
        << "rank " << r << ": " << o.status;
    EXPECT_THAT(o.status.message(), HasSubstr("rank 2 did not arrive"));
    EXPECT_LT(o.ended - start, absl::Seconds(6));
  }
}

// Threads of this process now (gloo's device loops count).
int ThreadCount() {
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return -1;
  int n = 0;
  while (dirent* e = readdir(dir)) n += e->d_name[0] != '.';
  closedir(dir);
  return n;
}

// A cancelled member whose peer published its address but never dials in
// (rank 0 on 127.0.0.1 is the listening end of the pair with 127.0.0.2):
// the meeting ends with the cancel, and no thread of it stays behind to
// wait for the deadline (gloo's listening pair would wait 5x it).
TEST(GlooEngineTest, ACancelledMeetingLeavesNoThreadBehind) {
  LocalRendezvous rendezvous;
  // The silent peer: a real pair listening on 127.0.0.2, nobody behind it.
  gloo::transport::tcp::attr attr;
  attr.hostname = "127.0.0.2";
  std::shared_ptr<gloo::transport::Device> device =
      gloo::transport::tcp::CreateDevice(attr);
  std::shared_ptr<gloo::transport::Context> peer = device->createContext(1, 2);
  const std::vector<char> address = peer->createPair(0)->address().bytes();
  ASSERT_TRUE(
      rendezvous.Set("gloo/1", std::string(address.begin(), address.end()))
          .ok());
  const int before = ThreadCount();

  std::atomic<bool> cancel{false};
  absl::Status status;
  absl::Time returned;
  std::thread member_thread([&] {
    GlooMember member;
    member.rank = 0;
    member.size = 2;
    member.address = "127.0.0.1";
    member.rendezvous = &rendezvous;
    member.deadline = absl::Now() + absl::Seconds(60);
    member.cancelled = [&cancel] { return cancel.load(); };
    status = GlooEngine::Connect(member).status();
    returned = absl::Now();
  });
  // Rank 0 published its own address: next it connects the pair, and waits.
  ASSERT_TRUE(rendezvous.Get("gloo/0", absl::Seconds(30)).ok());
  const absl::Time cancelled = absl::Now();
  cancel = true;
  member_thread.join();
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
  EXPECT_LT(returned - cancelled, absl::Seconds(2));
  // Connect() returned after its meeting thread ended: nothing is left.
  EXPECT_EQ(ThreadCount(), before);
}

TEST(GlooEngineTest, BadArgumentsAreRefused) {
  LocalRendezvous rendezvous;
  GlooMember member;
  member.rank = 2;
  member.size = 2;
  member.rendezvous = &rendezvous;
  EXPECT_EQ(GlooEngine::Connect(member).status().code(),
            absl::StatusCode::kInvalidArgument);
  member.rank = 0;
  member.size = 1;
  member.deadline = absl::Now() + absl::Seconds(30);
  absl::StatusOr<std::unique_ptr<GlooEngine>> engine =
      GlooEngine::Connect(member);
  ASSERT_TRUE(engine.ok()) << engine.status();
  EXPECT_EQ((*engine)->Sweep("alltoall", {1024}, 0, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*engine)->Sweep("allreduce", {2}, 0, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fleetbench::collective
