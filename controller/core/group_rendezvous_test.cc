// GroupRendezvous on its own: what a SET and a GET answer, a waiting GET
// woken by the SET of its key, waits that run out (their own or the
// group's deadline), the bounds, and the end of the group. The membership
// checks in front of it are tested through FleetCore
// (fleet_core_groups_test.cc).
#include "controller/core/group_rendezvous.h"

#include <memory>
#include <string>

#include "common/wire_limits.h"
#include "controller/core/fleet_core_fixture.h"
#include "gmock/gmock.h"

namespace fleetbench::controller {
namespace {

using ::testing::HasSubstr;

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);
const absl::Time kDeadline = kNow + absl::Minutes(10);

v1::KvRequest Set(uint64_t id, const std::string& key, const std::string& value) {
  v1::KvRequest r;
  r.set_request_id(id);
  r.set_op(v1::KvRequest::OP_SET);
  r.set_key(key);
  r.set_value(value);
  return r;
}

v1::KvRequest Get(uint64_t id, const std::string& key, int64_t wait_ms) {
  v1::KvRequest r;
  r.set_request_id(id);
  r.set_op(v1::KvRequest::OP_GET);
  r.set_key(key);
  r.set_wait_ms(wait_ms);
  return r;
}

TEST(GroupRendezvousTest, ASetIsReadBackAndWakesOnlyTheWaitersOfItsKey) {
  GroupRendezvous relay;
  auto rank0 = std::make_shared<RecordingLink>();
  auto rank1 = std::make_shared<RecordingLink>();
  relay.Handle(rank1, Get(1, "nccl-id", 5000), kNow, kDeadline);
  relay.Handle(rank1, Get(2, "other", 5000), kNow, kDeadline);
  EXPECT_TRUE(rank1->KvResponses().empty()) << "a GET of an unset key waits";

  relay.Handle(rank0, Set(7, "nccl-id", "abc"), kNow, kDeadline);
  ASSERT_EQ(rank0->KvResponses().size(), 1u);
  EXPECT_EQ(rank0->KvResponses()[0].request_id(), 7u);
  EXPECT_EQ(rank0->KvResponses()[0].code(), 0);
  ASSERT_EQ(rank1->KvResponses().size(), 1u) << "only the waiter of the key set";
  EXPECT_EQ(rank1->KvResponses()[0].request_id(), 1u);
  EXPECT_EQ(rank1->KvResponses()[0].value(), "abc");

  relay.Handle(rank1, Get(3, "nccl-id", 0), kNow, kDeadline);
  ASSERT_EQ(rank1->KvResponses().size(), 2u);
  EXPECT_EQ(rank1->KvResponses()[1].value(), "abc");
}

TEST(GroupRendezvousTest, WaitsRunOutAtTheirOwnTimeOrTheGroupsDeadline) {
  GroupRendezvous relay;
  auto link = std::make_shared<RecordingLink>();
  relay.Handle(link, Get(1, "short", 1000), kNow, kDeadline);
  relay.Handle(link, Get(2, "long", 3'600'000), kNow, kDeadline);
  relay.Expire(kNow + absl::Milliseconds(999), kDeadline);
  EXPECT_TRUE(link->KvResponses().empty());
  relay.Expire(kNow + absl::Seconds(1), kDeadline);
  ASSERT_EQ(link->KvResponses().size(), 1u);
  EXPECT_EQ(link->KvResponses()[0].request_id(), 1u);
  EXPECT_EQ(link->KvResponses()[0].code(), static_cast<int>(absl::StatusCode::kDeadlineExceeded));
  EXPECT_EQ(link->KvResponses()[0].error(), "no member set the key in time");
  relay.Expire(kDeadline, kDeadline);
  ASSERT_EQ(link->KvResponses().size(), 2u);
  EXPECT_EQ(link->KvResponses()[1].error(),
            "the group's deadline passed before a member set the key");
  // Past the deadline a GET no longer waits.
  relay.Handle(link, Get(3, "late", 1000), kDeadline, kDeadline);
  ASSERT_EQ(link->KvResponses().size(), 3u);
  EXPECT_EQ(link->KvResponses()[2].code(), static_cast<int>(absl::StatusCode::kDeadlineExceeded));
}

TEST(GroupRendezvousTest, BadRequestsAreRefusedAndStoreNothing) {
  GroupRendezvous relay;
  auto link = std::make_shared<RecordingLink>();
  relay.Handle(link, Set(1, "", "v"), kNow, kDeadline);
  relay.Handle(link, Set(2, std::string(kMaxKvKeyBytes + 1, 'k'), "v"), kNow, kDeadline);
  relay.Handle(link, Set(3, "k", std::string(kMaxKvValueBytes + 1, 'v')), kNow, kDeadline);
  relay.Handle(link, Get(4, "k", -1), kNow, kDeadline);
  v1::KvRequest unknown = Get(5, "k", 0);
  unknown.set_op(static_cast<v1::KvRequest::Op>(99));
  relay.Handle(link, unknown, kNow, kDeadline);
  ASSERT_EQ(link->KvResponses().size(), 5u);
  for (const v1::KvResponse& r : link->KvResponses()) {
    EXPECT_EQ(r.code(), static_cast<int>(absl::StatusCode::kInvalidArgument)) << r.error();
  }
  relay.Handle(link, Get(6, "k", 0), kNow, kDeadline);
  EXPECT_EQ(link->KvResponses().back().code(), static_cast<int>(absl::StatusCode::kNotFound));
  EXPECT_THAT(link->KvResponses().back().error(), HasSubstr("no member set 'k'"));
}

TEST(GroupRendezvousTest, TheEndAnswersEveryWaiterAndForgetsTheKeys) {
  GroupRendezvous relay;
  auto link = std::make_shared<RecordingLink>();
  relay.Handle(link, Set(1, "a", "1"), kNow, kDeadline);
  relay.Handle(link, Get(2, "b", 60000), kNow, kDeadline);
  relay.End(absl::AbortedError("the group ended: rank 1 failed"));
  ASSERT_EQ(link->KvResponses().size(), 2u);
  EXPECT_EQ(link->KvResponses()[1].request_id(), 2u);
  EXPECT_EQ(link->KvResponses()[1].code(), static_cast<int>(absl::StatusCode::kAborted));
  EXPECT_EQ(link->KvResponses()[1].error(), "the group ended: rank 1 failed");
  relay.Handle(link, Get(3, "a", 0), kNow, kDeadline);
  EXPECT_EQ(link->KvResponses().back().code(), static_cast<int>(absl::StatusCode::kNotFound));
}

}  // namespace
}  // namespace fleetbench::controller
