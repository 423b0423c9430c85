// controller/core/group_test_fixture.h — the fixture the group tests
// share (fleet_core_groups_test.cc, group_passes_test.cc): members that
// declare the collective `allreduce`, group runs started over them, and the
// relay's requests as a member sends them.
#ifndef FLEETBENCH_CONTROLLER_CORE_GROUP_TEST_FIXTURE_H_
#define FLEETBENCH_CONTROLLER_CORE_GROUP_TEST_FIXTURE_H_

#include <algorithm>
#include <set>

#include "controller/core/fleet_core_fixture.h"
#include "gmock/gmock.h"

namespace fleetbench::controller {

inline constexpr int64_t kTimeoutMs = 60000;

class GroupTest : public FleetCoreTest {
 protected:
  // An agent with gemm and the collective `allreduce`.
  std::shared_ptr<RecordingLink> ConnectMember(const std::string& name) {
    v1::Hello hello = MakeHello(name);
    v1::Capability* c = hello.add_capabilities();
    c->set_benchmark("allreduce");
    c->set_status(v1::CAPABILITY_STATUS_AVAILABLE);
    c->set_collective(true);
    c->set_default_timeout_ms(kTimeoutMs);
    Declare(c, "allreduce.gloo.busbw_GBps", "GBps", v1::METRIC_DIRECTION_HIGHER_IS_BETTER);
    auto link = ConnectWith(hello);
    members_[name] = link;
    return link;
  }
  absl::StatusOr<v1::StartRunResponse> StartGroup(const std::vector<std::string>& nodes,
                                                  const std::string& bench = "allreduce",
                                                  uint32_t max_parallel = 0) {
    v1::StartRunRequest request;
    request.add_benchmarks()->set_name(bench);
    for (const auto& n : nodes) request.add_nodes(n);
    request.mutable_group()->set_mode(v1::GROUP_MODE_GROUP);
    request.set_max_parallel(max_parallel);
    return core_->StartRun(request);
  }
  // The group RunTasks a link got.
  static std::vector<v1::RunTask> GroupTasks(const std::shared_ptr<RecordingLink>& link) {
    std::vector<v1::RunTask> out;
    for (const v1::RunTask& t : link->RunTasks()) {
      if (t.has_group()) out.push_back(t);
    }
    return out;
  }
  void Kv(const std::shared_ptr<RecordingLink>& link, uint64_t id, const std::string& task_id,
          v1::KvRequest::Op op, const std::string& key, const std::string& value = "",
          int64_t wait_ms = 0) {
    v1::AgentMessage m;
    v1::KvRequest* r = m.mutable_kv_request();
    r->set_request_id(id);
    r->set_task_id(task_id);
    r->set_op(op);
    r->set_key(key);
    r->set_value(value);
    r->set_wait_ms(wait_ms);
    Send(link, m);
  }
  // The answer to request `id`, if one came.
  static std::optional<v1::KvResponse> Answer(const std::shared_ptr<RecordingLink>& link,
                                              uint64_t id) {
    for (const v1::KvResponse& r : link->KvResponses()) {
      if (r.request_id() == id) return r;
    }
    return std::nullopt;
  }
  void End(const std::shared_ptr<RecordingLink>& link, const v1::RunTask& task,
           v1::TaskState state, const std::string& reason = "", double busbw = 0) {
    v1::AgentMessage m;
    v1::Report* r = m.mutable_report();
    r->set_report_id(NewUlid());
    r->set_task_id(task.task_id());
    if (busbw > 0) {
      v1::Sample* s = r->add_samples();
      s->set_id(NewUlid());
      s->set_benchmark("allreduce");
      s->set_metric("allreduce.gloo.busbw_GBps");
      s->set_unit("GBps");
      s->set_value(busbw);
      s->set_time_unix_ms(absl::ToUnixMillis(clock_.Now()));
    }
    r->set_task_finished(true);
    r->set_task_state(state);
    r->set_task_reason(reason);
    Send(link, m);
  }
  v1::Run GetRun(const std::string& run_id) {
    v1::GetRunRequest request;
    request.set_run_id(run_id);
    auto run = core_->GetRun(request);
    EXPECT_TRUE(run.ok()) << run.status();
    return run.ok() ? *run : v1::Run{};
  }
  // a, b, c in one running group; their RunTasks by node.
  std::map<std::string, v1::RunTask> RunningGroup(std::string* run_id = nullptr) {
    for (const char* n : {"a", "b", "c"}) ConnectMember(n);
    auto started = StartGroup({"c", "a", "b"});
    EXPECT_TRUE(started.ok()) << started.status();
    if (run_id != nullptr && started.ok()) *run_id = started->run_id();
    std::map<std::string, v1::RunTask> tasks;
    for (const auto& [name, link] : members_) {
      auto sent = GroupTasks(link);
      EXPECT_EQ(sent.size(), 1u) << name;
      if (!sent.empty()) tasks[name] = sent[0];
    }
    return tasks;
  }

  std::map<std::string, std::shared_ptr<RecordingLink>> members_;
};

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_CORE_GROUP_TEST_FIXTURE_H_
