// agent/benchmarks/net/test_request.h — the TEST message: one test as the
// client asks for it and the server checks it (internal to the TCP engine,
// tcp_engine.h; the fields are in docs/network.md, "Control protocol").
//
// Pure encode/decode, no state. The server does not trust the peer: a
// request outside the plugin's own limits is INVALID_ARGUMENT.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_NET_TEST_REQUEST_H_
#define FLEETBENCH_AGENT_BENCHMARKS_NET_TEST_REQUEST_H_

#include <string>

#include "absl/status/statusor.h"
#include "agent/benchmarks/net/control_frame.h"
#include "agent/benchmarks/net/tcp_engine.h"

namespace fleetbench::agent::net {

struct TestRequest {
  int id = 0;
  std::string kind;  // forward, reverse, latency
  int streams = 1;
  double warmup_s = 0;
  double duration_s = 0;
  int message_bytes = 0;
  int count = 0;
  StreamSettings settings;  // forward and reverse
};

// Durations travel as whole milliseconds, the rate as whole bits/s.
ControlMessage EncodeTest(const TestRequest& test);
absl::StatusOr<TestRequest> DecodeTest(const ControlMessage& message);

}  // namespace fleetbench::agent::net

#endif  // FLEETBENCH_AGENT_BENCHMARKS_NET_TEST_REQUEST_H_
