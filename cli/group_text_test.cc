// The group blocks of `results`, on hand-built runs.
#include "cli/group_text.h"

#include "common/proto_json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::cli {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

v1::GroupResult* AddGroup(v1::Run* run, std::vector<std::string> members, double busbw,
                          int pass = 0, v1::TaskState state = v1::TASK_STATE_SUCCEEDED,
                          const std::string& reason = "") {
  v1::GroupResult* g = run->add_groups();
  g->set_group_id("g" + std::to_string(run->groups_size()));
  for (const auto& m : members) g->add_members(m);
  g->set_pass(pass);
  g->set_state(state);
  g->set_reason(reason);
  g->set_busbw_gbps(busbw);
  if (busbw > 0) g->set_metric("allreduce.gloo.busbw_GBps");
  return g;
}

void AddCurvePoint(v1::Run* run, const std::string& node, const std::string& nodes, int64_t bytes,
                   double algbw, double busbw) {
  v1::Sample* s = run->add_samples();
  s->set_node(node);
  s->set_metric("allreduce.gloo.curve_busbw_GBps");
  s->set_value(busbw);
  auto& p = *s->mutable_params();
  p["op"] = "allreduce";
  p["bytes"] = std::to_string(bytes);
  p["algbw_GBps"] = std::to_string(algbw).substr(0, 4);
  p["nodes"] = nodes;
}

TEST(FormatBytesTest, PowersOfTwo) {
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(64 << 10), "64 KiB");
  EXPECT_EQ(FormatBytes(256 << 20), "256 MiB");
  EXPECT_EQ(FormatBytes(3LL << 29), "1.5 GiB");
}

// Sizes rounded to a multiple of ranks x element, as a 3-node all-reduce
// of float32 runs them (the demo printed "1024 KiB" and "1.99999 MiB").
TEST(FormatBytesTest, SizesRoundedForTheRanksReadAsTheSizeAskedFor) {
  EXPECT_EQ(FormatBytes(1048572), "1 MiB");
  EXPECT_EQ(FormatBytes(2097144), "2 MiB");
  EXPECT_EQ(FormatBytes(8388600), "8 MiB");
  EXPECT_EQ(FormatBytes(1000), "1000 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(1024 * 1024 - 400), "0.9996 MiB");  // never "1024 KiB"
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatBytes(1234567), "1.177 MiB");
}

TEST(GroupTextTest, MatrixOrdersNodesNaturally) {
  v1::Run run;
  run.mutable_group()->set_mode(v1::GROUP_MODE_ISOLATE);
  AddGroup(&run, {"n10", "n2"}, 5, 1);
  AddGroup(&run, {"n10", "n9"}, 5, 1);
  AddGroup(&run, {"n2", "n9"}, 5, 1);
  EXPECT_THAT(RenderGroups(run), HasSubstr("PAIR BUSBW_GBps  n2      n9      n10\n"));
}

TEST(GroupTextTest, NothingForARunWithoutGroups) {
  v1::Run run;
  EXPECT_EQ(RenderGroups(run), "");
  EXPECT_EQ(VerdictLine(run), "");
}

TEST(GroupTextTest, GroupShowsTheCurveOfItsOwnSamplesAndTheHeadline) {
  v1::Run run;
  run.mutable_group()->set_mode(v1::GROUP_MODE_GROUP);
  AddGroup(&run, {"n1", "n2", "n3"}, 9.5);
  AddCurvePoint(&run, "n1", "n1,n2,n3", 1 << 20, 4.1, 5.47);
  AddCurvePoint(&run, "n1", "n1,n2,n3", 64 << 20, 7.1, 9.5);
  AddCurvePoint(&run, "n1", "n1,n2", 64 << 20, 1.0, 1.0);  // another group's
  const std::string text = RenderGroups(run);
  EXPECT_THAT(text, HasSubstr("group g1 over 3 nodes (n1, n2, n3): succeeded"));
  EXPECT_THAT(text, HasSubstr("OP         SIZE    ALGBW_GBps  BUSBW_GBps\n"
                              "allreduce  1 MiB   4.10        5.4700\n"
                              "allreduce  64 MiB  7.10        9.5000\n"));
  EXPECT_THAT(text, HasSubstr("busbw at the largest size: 9.5000 GBps (allreduce.gloo.busbw_GBps)"));
  EXPECT_THAT(text, Not(HasSubstr("1.0000")));
}

TEST(GroupTextTest, AnNcclGroupShowsWhatNcclUsed) {
  v1::Run run;
  run.mutable_group()->set_mode(v1::GROUP_MODE_GROUP);
  AddGroup(&run, {"n1", "n2"}, 20);
  AddCurvePoint(&run, "n1", "n1,n2", 1 << 20, 21.5, 21.5);
  auto& p = *run.mutable_samples(0)->mutable_params();
  p["nccl_net"] = "Socket";
  p["nccl_rdma"] = "no: Socket";
  p["nccl_gdrdma"] = "0 of 4 net channels: no GPUDirect RDMA";
  p["nccl_net_devices"] = "eth0:10.0.0.1<0>";
  p["nccl_log_version"] = "2.28.9+cuda13.0";
  EXPECT_THAT(RenderGroups(run),
              HasSubstr("nccl: network Socket (RDMA no: Socket); GPUDirect "
                        "RDMA: 0 of 4 net channels: no GPUDirect RDMA; devices "
                        "eth0:10.0.0.1<0>; NCCL 2.28.9+cuda13.0\n"));
  // gloo groups have no such line.
  v1::Run gloo;
  gloo.mutable_group()->set_mode(v1::GROUP_MODE_GROUP);
  AddGroup(&gloo, {"n1", "n2"}, 20);
  AddCurvePoint(&gloo, "n1", "n1,n2", 1 << 20, 21.5, 21.5);
  EXPECT_THAT(RenderGroups(gloo), Not(HasSubstr("nccl:")));
}

TEST(GroupTextTest, ScalingTableWithEfficiencyAgainstTwoNodes) {
  v1::Run run;
  run.mutable_group()->set_mode(v1::GROUP_MODE_SCALING);
  AddGroup(&run, {"n1"}, 0);
  AddGroup(&run, {"n1", "n2"}, 10);
  AddGroup(&run, {"n1", "n2", "n3", "n4"}, 8);
  AddGroup(&run, {"n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8"}, 0, 0, v1::TASK_STATE_FAILED,
           "n7 did not arrive");
  const std::string text = RenderGroups(run);
  EXPECT_THAT(text, HasSubstr("scaling (efficiency: busbw over the 2-node figure, 10.00 GBps)"));
  EXPECT_THAT(text, HasSubstr(
                        "N  NODES                    STATE                      BUSBW_GBps  EFFICIENCY\n"
                        "1  n1                       succeeded                  -           -\n"
                        "2  n1,n2                    succeeded                  10.00       100%\n"
                        "4  n1,n2,n3,n4              succeeded                  8.0000      80%\n"
                        "8  n1,n2,n3,n4,n5,n6,n7,n8  failed: n7 did not arrive  failed      -\n"));
}

TEST(GroupTextTest, ScalingWithoutATwoNodeGroupSaysWhatItCompares) {
  v1::Run run;
  run.mutable_group()->set_mode(v1::GROUP_MODE_SCALING);
  AddGroup(&run, {"n1", "n2", "n3", "n4"}, 8);
  AddGroup(&run, {"n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8"}, 6);
  EXPECT_THAT(RenderGroups(run),
              AllOf(HasSubstr("over the 4-node figure, 8.0000 GBps; there is no 2-node group"),
                    HasSubstr("75%")));
}

v1::Run IsolationRun() {
  v1::Run run;
  run.mutable_group()->set_mode(v1::GROUP_MODE_ISOLATE);
  AddGroup(&run, {"n1", "n4"}, 2, 1);
  AddGroup(&run, {"n2", "n3"}, 10, 1);
  AddGroup(&run, {"n1", "n2"}, 10, 1);
  AddGroup(&run, {"n3", "n4"}, 0, 1, v1::TASK_STATE_FAILED, "n4 did not arrive");
  AddGroup(&run, {"n1", "n3"}, 10, 1);
  AddGroup(&run, {"n2", "n4"}, 2, 1);
  AddGroup(&run, {"n1", "n4"}, 2.1, 2);
  v1::IsolationVerdict* v = run.mutable_isolation();
  v->set_expected_busbw_gbps(6);
  v->set_expectation_source("median of 6 pairs");
  v->set_threshold(0.2);
  v->add_bad_nodes("n4");
  v->add_cleared("n1");
  v->set_pair_tests(7);
  v->set_summary("bad node n4 (with n1 2.10 GBps)");
  v->set_complete(true);
  return run;
}

TEST(GroupTextTest, IsolationMatrixMarksFailingCells) {
  const std::string text = RenderGroups(IsolationRun());
  EXPECT_THAT(text, HasSubstr("pass 1 pairs (* below 4.8000 GBps)\n"
                              "PAIR BUSBW_GBps  n1        n2        n3        n4\n"
                              "n1                         10.00     10.00     2.0000 *\n"
                              "n2               10.00               10.00     2.0000 *\n"
                              "n3               10.00     10.00               failed *\n"
                              "n4               2.0000 *  2.0000 *  failed *\n"));
  EXPECT_THAT(text, HasSubstr("2     n1-n4  2.1000      FAIL\n"));
  EXPECT_THAT(text, HasSubstr("1     n3-n4  failed      FAIL: n4 did not arrive\n"));
  EXPECT_THAT(text, HasSubstr("isolation: expected 6.0000 GBps (median of 6 pairs), threshold 0.2 "
                              "(fails below 4.8000 GBps), 7 pair tests\n"
                              "  bad nodes: n4\n"
                              "  bad links: none\n"
                              "  cleared:   n1\n"));
  EXPECT_EQ(VerdictLine(IsolationRun()), "verdict: bad node n4 (with n1 2.10 GBps)\n");
}

TEST(GroupTextTest, VerdictWhilePassesRun) {
  v1::Run run = IsolationRun();
  run.mutable_isolation()->set_complete(false);
  run.mutable_isolation()->set_summary("pass 2 running: 0 of 1 pairs ended");
  EXPECT_EQ(VerdictLine(run), "verdict: pass 2 running: 0 of 1 pairs ended (still running)\n");
}

TEST(GroupTextTest, ProgressCountsGroupsAndShowsTheVerdictSoFar) {
  EXPECT_EQ(GroupProgressLine(v1::Run()), "");
  v1::Run run = IsolationRun();
  run.mutable_groups(5)->set_state(v1::TASK_STATE_RUNNING);
  run.mutable_groups(6)->set_state(v1::TASK_STATE_QUEUED);
  run.mutable_isolation()->set_summary("pass 1 running: 5 of 6 pairs ended");
  EXPECT_EQ(GroupProgressLine(run),
            "groups: 5 of 7 ended (1 running); pass 1 running: 5 of 6 pairs ended");
}

TEST(GroupTextTest, JsonCarriesGroupsAndTheVerdict) {
  const std::string json = ToJson(IsolationRun());
  EXPECT_THAT(json, AllOf(HasSubstr("\"groups\""), HasSubstr("\"isolation\""),
                          HasSubstr("\"bad_nodes\""), HasSubstr("\"n4 did not arrive\"")));
}

}  // namespace
}  // namespace fleetbench::cli
