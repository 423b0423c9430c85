// The stream-backed Rendezvous: each call is one KvRequest answered by the
// KvResponse of the same id; cancel, a lost stream and no stream end waits
// at once. The controller end is the test (the relay itself is tested in
// controller/core/fleet_core_groups_test.cc and end to end in
// tests/group_e2e_test.cc).
#include "agent/runtime/relay_rendezvous.h"

#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

// What the agent's stream would carry: the requests, in order.
class Wire {
 public:
  bool Send(const v1::AgentMessage& m) {
    absl::MutexLock lock(&mu_);
    if (!connected_) return false;
    sent_.push_back(m.kv_request());
    return true;
  }
  // Waits until `n` requests were sent; the n-th.
  v1::KvRequest Nth(size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return sent_.size() >= n; };
    EXPECT_TRUE(mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(10)));
    return sent_.size() >= n ? sent_[n - 1] : v1::KvRequest{};
  }
  void Disconnect() {
    absl::MutexLock lock(&mu_);
    connected_ = false;
  }

 private:
  absl::Mutex mu_;
  bool connected_ ABSL_GUARDED_BY(mu_) = true;
  std::vector<v1::KvRequest> sent_ ABSL_GUARDED_BY(mu_);
};

v1::KvResponse Reply(uint64_t id, absl::StatusCode code, const std::string& value = "") {
  v1::KvResponse r;
  r.set_request_id(id);
  r.set_code(static_cast<int>(code));
  if (code != absl::StatusCode::kOk) r.set_error("said the controller");
  r.set_value(value);
  return r;
}

class RelayTest : public ::testing::Test {
 protected:
  Wire wire_;
  RelayRendezvous relay_{"task-7", [this](const v1::AgentMessage& m) { return wire_.Send(m); }};
};

TEST_F(RelayTest, SetIsOneRequestAnsweredById) {
  absl::Status result = absl::UnknownError("not yet");
  std::thread member([&] { result = relay_.Set("nccl_id", std::string("\0\1", 2)); });
  const v1::KvRequest sent = wire_.Nth(1);
  EXPECT_EQ(sent.op(), v1::KvRequest::OP_SET);
  EXPECT_EQ(sent.task_id(), "task-7");
  EXPECT_EQ(sent.key(), "nccl_id");
  EXPECT_EQ(sent.value(), std::string("\0\1", 2));
  relay_.Deliver(Reply(sent.request_id() + 1000, absl::StatusCode::kInternal));  // not ours
  relay_.Deliver(Reply(sent.request_id(), absl::StatusCode::kOk));
  member.join();
  EXPECT_TRUE(result.ok()) << result;
}

TEST_F(RelayTest, GetAsksTheControllerToWaitAndReturnsItsAnswer) {
  absl::StatusOr<std::string> got;
  std::thread member([&] { got = relay_.Get("k", absl::Seconds(3)); });
  const v1::KvRequest sent = wire_.Nth(1);
  EXPECT_EQ(sent.op(), v1::KvRequest::OP_GET);
  EXPECT_EQ(sent.wait_ms(), 3000);
  relay_.Deliver(Reply(sent.request_id(), absl::StatusCode::kOk, "value"));
  member.join();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, "value");

  // The controller's refusals come back as they were sent.
  std::thread again([&] { got = relay_.Get("k", absl::ZeroDuration()); });
  const v1::KvRequest second = wire_.Nth(2);
  EXPECT_NE(second.request_id(), sent.request_id());
  relay_.Deliver(Reply(second.request_id(), absl::StatusCode::kPermissionDenied));
  again.join();
  EXPECT_EQ(got.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(got.status().message(), "said the controller");
}

TEST_F(RelayTest, ACancelEndsAPendingWaitAtOnceAndRefusesLaterCalls) {
  absl::StatusOr<std::string> got;
  const absl::Time start = absl::Now();
  std::thread member([&] { got = relay_.Get("k", absl::Hours(1)); });
  wire_.Nth(1);
  relay_.Cancel();
  member.join();
  EXPECT_EQ(got.status().code(), absl::StatusCode::kCancelled);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(relay_.Set("k", "v").code(), absl::StatusCode::kCancelled);
}

TEST_F(RelayTest, ALostStreamEndsAPendingWaitUnavailable) {
  absl::StatusOr<std::string> got;
  std::thread member([&] { got = relay_.Get("k", absl::Hours(1)); });
  wire_.Nth(1);
  wire_.Disconnect();
  relay_.StreamLost();
  member.join();
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnavailable);
  // Not connected: no wait at all.
  EXPECT_EQ(relay_.Set("k", "v").code(), absl::StatusCode::kUnavailable);
}

TEST_F(RelayTest, BoundsAreCheckedBeforeSending) {
  EXPECT_EQ(relay_.Set("", "v").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(relay_.Set(std::string(257, 'k'), "v").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(relay_.Set("k", std::string((64 << 10) + 1, 'v')).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(relay_.Get("", absl::ZeroDuration()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fleetbench::agent
