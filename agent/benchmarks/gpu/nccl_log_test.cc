// NCCL INFO lines in the exact shapes NCCL 2.28's format strings give
// (src/init.cc "Using network %s", transport/net.cc "Channel %02d/%d : ...
// via NET/%s/%d%s%s%s", net_socket.cc "NET/Socket : Using%s", net_ib.cc
// "NET/IB : Using%s %s; OOB %s:%s", plugin/net "NET/Plugin: Loaded net
// plugin %s (v10)"), with the "host:pid:tid [dev] NCCL INFO " head.
#include "agent/benchmarks/gpu/nccl_log.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::gpu {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr char kSocketRun[] =
    "gpu-07:41253:41253 [0] NCCL INFO Bootstrap: Using eth0:10.0.0.7<0>\n"
    "gpu-07:41253:41253 [0] NCCL INFO NCCL version 2.28.9+cuda13.0\n"
    "gpu-07:41253:41260 [0] NCCL INFO NET/IB : No device found.\n"
    "gpu-07:41253:41260 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.7<0> "
    "[1]eth1:192.168.1.7<0>\n"
    "gpu-07:41253:41260 [0] NCCL INFO Using network Socket\n"
    "gpu-07:41253:41260 [0] NCCL INFO Channel 00/02 :    0   1\n"
    "gpu-07:41253:41262 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] "
    "via NET/Socket/0\n"
    "gpu-07:41253:41262 [0] NCCL INFO Channel 01/0 : 1[0] -> 0[0] [receive] "
    "via NET/Socket/1\n"
    "gpu-07:41253:41262 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via "
    "NET/Socket/0\n"
    "gpu-07:41253:41262 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[0] [send] via "
    "NET/Socket/1\n"
    "gpu-07:41253:41253 [0] NCCL INFO comm 0x55d0 rank 0 nranks 2 cudaDev 0 "
    "nvmlDev 0 busId 18000 commId 0x1a2b - Init COMPLETE\n";

constexpr char kIbRun[] =
    "h100-3:9001:9001 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
    "h100-3:9001:9010 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB "
    "[1]mlx5_3:1/RoCE [RO]; OOB ens1f0:10.2.0.3<0>\n"
    "h100-3:9001:9010 [0] NCCL INFO Using network IB\n"
    "h100-3:9001:9012 [0] NCCL INFO Channel 00/0 : 8[0] -> 0[0] [receive] "
    "via NET/IB/0/GDRDMA\n"
    "h100-3:9001:9012 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via "
    "NET/IB/0/GDRDMA\n"
    "h100-3:9001:9012 [0] NCCL INFO Channel 01/0 : 0[0] -> 8[0] [send] via "
    "NET/IB/1(1)/GDRDMA(PCI)/Shared\n"
    "h100-3:9001:9012 [0] NCCL INFO Channel 02/0 : 0[0] -> 8[0] [send] via "
    "NET/IB/1\n"
    "h100-3:9001:9012 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via "
    "P2P/CUMEM/read\n";

TEST(NcclLogTest, SocketMeansNoRdmaAndNoGpuDirect) {
  const NcclLogFacts facts = ParseNcclLog(kSocketRun);
  EXPECT_EQ(facts.version, "2.28.9+cuda13.0");
  EXPECT_EQ(facts.network, "Socket");
  EXPECT_THAT(facts.devices,
              ElementsAre("eth0:10.0.0.7<0>", "eth1:192.168.1.7<0>"));
  EXPECT_EQ(facts.net_channels, 4);
  EXPECT_EQ(facts.gdr_channels, 0);
  const auto p = NcclLogParams(facts);
  EXPECT_EQ(p.at("nccl_log_version"), "2.28.9+cuda13.0");
  EXPECT_EQ(p.at("nccl_net"), "Socket");
  EXPECT_EQ(p.at("nccl_rdma"), "no: Socket");
  EXPECT_EQ(p.at("nccl_gdrdma"), "0 of 4 net channels: no GPUDirect RDMA");
  EXPECT_EQ(p.at("nccl_net_devices"), "eth0:10.0.0.7<0>,eth1:192.168.1.7<0>");
  EXPECT_EQ(p.count("nccl_oob"), 0u);
}

TEST(NcclLogTest, IbWithHcasOobAndGdrdmaPerChannel) {
  const NcclLogFacts facts = ParseNcclLog(kIbRun);
  EXPECT_EQ(facts.version, "2.21.5+cuda12.4");
  EXPECT_EQ(facts.network, "IB");
  EXPECT_THAT(facts.devices, ElementsAre("mlx5_0:1/IB", "mlx5_3:1/RoCE"));
  EXPECT_EQ(facts.oob, "ens1f0:10.2.0.3<0>");
  // The P2P channel stays inside the node: not counted.
  EXPECT_EQ(facts.net_channels, 4);
  EXPECT_EQ(facts.gdr_channels, 3);
  const auto p = NcclLogParams(facts);
  EXPECT_EQ(p.at("nccl_rdma"), "yes: IB");
  EXPECT_EQ(p.at("nccl_gdrdma"), "3 of 4 net channels");
  EXPECT_EQ(p.at("nccl_net_devices"), "mlx5_0:1/IB,mlx5_3:1/RoCE");
  EXPECT_EQ(p.at("nccl_oob"), "ens1f0:10.2.0.3<0>");
}

TEST(NcclLogTest, ANetPluginIsNamed) {
  const NcclLogFacts facts = ParseNcclLog(
      "[2026-12-01 21:00:00] p5:7:8 [3] NCCL INFO NET/Plugin: Loaded net "
      "plugin Libfabric (v10)\n"
      "p5:7:8 [3] NCCL INFO Using network Libfabric\r\n"
      "p5:7:9 [3] NCCL INFO Channel 00/0 : 3[3] -> 11[3] [send] via "
      "NET/Libfabric/3/GDRDMA\n");
  EXPECT_EQ(facts.plugin, "Libfabric");
  EXPECT_EQ(facts.network, "Libfabric");
  const auto p = NcclLogParams(facts);
  EXPECT_EQ(p.at("nccl_net_plugin"), "Libfabric");
  EXPECT_EQ(p.at("nccl_rdma"), "unknown: Libfabric");
  EXPECT_EQ(p.at("nccl_gdrdma"), "1 of 1 net channels");
}

TEST(NcclLogTest, NothingToSayGivesNoParams) {
  EXPECT_FALSE(ParseNcclLog("").found());
  EXPECT_THAT(NcclLogParams(ParseNcclLog("")), IsEmpty());
  // WARN lines, other subsystems and garbage are ignored.
  const NcclLogFacts facts = ParseNcclLog(
      "\nh:1:2 [0] misc/socket.cc:50 NCCL WARN socketProgress: Connection "
      "closed by remote peer\nrandom text\nh:1:2 [0] NCCL INFO NET/Socket : "
      "Using [x]bad [0]\n");
  EXPECT_THAT(facts.devices, IsEmpty());
  EXPECT_FALSE(facts.found());
  // One node only: version and no net channels.
  const auto p = NcclLogParams(
      ParseNcclLog("h:1:2 [0] NCCL INFO NCCL version 2.28.9+cuda13.0\n"));
  EXPECT_EQ(p.at("nccl_gdrdma"), "no net channels");
}

}  // namespace
}  // namespace fleetbench::gpu
