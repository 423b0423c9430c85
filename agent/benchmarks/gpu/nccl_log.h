// agent/benchmarks/gpu/nccl_log.h — what NCCL's INFO log says about how a
// run moved its data: the facts of an "allreduce" NCCL run, read from the
// per-rank file NCCL_DEBUG=INFO wrote (NCCL_DEBUG_FILE in the task's
// scratch folder; kernels/collective_nccl_group.cc points NCCL at it).
//
// Lines read (the text after "NCCL INFO "; the "host:pid:tid [dev] " head
// and any timestamp before it are skipped), in the shapes NCCL 2.2x prints:
//   NCCL version 2.28.9+cuda13.0                   -> version
//   Using network Socket | IB | <plugin name>      -> network
//   NET/Plugin: Loaded net plugin <name> (v10)     -> plugin
//   NET/Socket : Using [0]eth0:10.0.0.1<0> [1]...  -> devices (interfaces)
//   NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>
//                                                  -> devices (HCA:port/link)
//                                                     and oob
//   Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA
//   Channel 00/0 : 1[0] -> 0[0] [receive] via NET/Socket/0
//                                                  -> net_channels, and
//                                                     gdr_channels when the
//                                                     path has /GDRDMA
// Channels over P2P or SHM (inside a node) are not counted: only NET ones
// cross the network. Anything else is ignored; a log with none of these
// lines gives empty facts (found() false).
//
// Pure functions.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_GPU_NCCL_LOG_H_
#define FLEETBENCH_AGENT_BENCHMARKS_GPU_NCCL_LOG_H_

#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace fleetbench::gpu {

struct NcclLogFacts {
  std::string version;   // "2.28.9+cuda13.0"
  std::string network;   // "Socket", "IB", or a net plugin's name
  std::string plugin;    // a loaded external net plugin's name, if any
  std::vector<std::string> devices;  // "eth0:10.0.0.1<0>", "mlx5_0:1/IB"
  std::string oob;       // IB's out-of-band interface, "eth0:10.0.0.1<0>"
  int net_channels = 0;  // channel connections via NET (send and receive)
  int gdr_channels = 0;  // of those, with GPUDirect RDMA

  bool found() const {
    return !version.empty() || !network.empty() || net_channels > 0 ||
           !devices.empty();
  }
};

NcclLogFacts ParseNcclLog(absl::string_view log);

// The facts as sample params: nccl_log_version, nccl_net, nccl_net_plugin,
// nccl_rdma ("no: Socket", "yes: IB", "unknown: <plugin>"), nccl_gdrdma
// ("8 of 8 net channels", "0 of 4 net channels: no GPUDirect RDMA", "no
// net channels"), nccl_net_devices (comma list), nccl_oob. Keys with
// nothing to say are left out.
std::map<std::string, std::string> NcclLogParams(const NcclLogFacts& facts);

}  // namespace fleetbench::gpu

#endif  // FLEETBENCH_AGENT_BENCHMARKS_GPU_NCCL_LOG_H_
