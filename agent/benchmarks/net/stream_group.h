// agent/benchmarks/net/stream_group.h — the data connections of one test
// and their threads (internal to the TCP engine, tcp_engine.h).
//
// One thread per connection, sending, receiving or echoing; the group
// starts them, counts what each moved and joins them. Counters are per
// stream and on their own cache lines so the threads do not share one.
//
// Errors: the first failure of any thread is kept (error()); Finish()
// returns it, or CANCELLED / DEADLINE_EXCEEDED when the wait for the
// threads was cut short.
//
// Thread safety: the group is driven by one thread (the test's); the
// counters, flags and kept error are safe to read while its threads run.
// The destructor aborts and joins whatever still runs.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_NET_STREAM_GROUP_H_
#define FLEETBENCH_AGENT_BENCHMARKS_NET_STREAM_GROUP_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "agent/benchmarks/net/socket_tuning.h"
#include "agent/benchmarks/net/tcp_engine.h"
#include "agent/benchmarks/pairwise/tcp_socket.h"

namespace fleetbench::agent::net {

// How often a blocking send()/recv() in a data thread looks at its flags.
inline constexpr std::chrono::milliseconds kDataSlice{100};
// Longest pause between two ping-pong round trips, or two echoes.
inline constexpr double kRoundTripTimeoutS = 10;

class StreamGroup {
 public:
  explicit StreamGroup(std::vector<pairwise::Socket> sockets);
  ~StreamGroup();
  StreamGroup(const StreamGroup&) = delete;
  StreamGroup& operator=(const StreamGroup&) = delete;

  size_t size() const { return sockets_.size(); }

  // Blocking send()/recv() that return every kDataSlice (SO_*TIMEO).
  absl::Status Prepare();
  absl::Status SetNoDelay();
  // A throughput test's socket buffers and congestion control, on every
  // connection (those left at 0 / "" stay the kernel's).
  absl::Status Apply(const StreamSettings& settings);

  // Each thread writes settings.write_bytes blocks until StopSending(),
  // then shuts down its write side so the receiver sees EOF after the last
  // byte. With settings.rate_bps, each stream keeps to its share: before a
  // block it waits until the bytes sent so far are due at that rate
  // (iperf3 -b paces the same way, in the application).
  void StartSenders(const StreamSettings& settings);
  // Each thread reads read_bytes at a time until EOF.
  void StartReceivers(int64_t read_bytes);
  // Each thread returns every message_bytes it reads until EOF; its counter
  // counts the messages.
  void StartEchoers(int message_bytes);

  std::vector<uint64_t> StreamBytes() const;
  // TCP_INFO counters summed over the connections; -1 fields unknown.
  TcpCounters Counters() const;
  // The first connection's congestion control and buffers (all connections
  // of a group are set alike).
  std::string Congestion() const;
  SocketBuffers Buffers() const;

  void StopSending() { stop_sending_.store(true); }
  void Abort() { abort_.store(true); }
  bool AllEnded() const { return running_.load() == 0; }

  // Waits until every thread has ended (EOF seen, or stopped), at most
  // until `deadline`; then the stragglers are aborted. OK when all ended on
  // their own without an error.
  absl::Status Finish(pairwise::Deadline deadline,
                      const pairwise::CancelFn& cancelled);

  absl::Status error() const;

 private:
  struct alignas(64) PaddedCounter {
    std::atomic<uint64_t> value{0};
  };

  template <typename Fn>
  void Launch(Fn fn) {
    running_.fetch_add(1);
    threads_.emplace_back([this, fn] {
      fn();
      running_.fetch_sub(1);
    });
  }
  void JoinAll();
  void RecordError(const absl::Status& status);

  void SendLoop(size_t i, size_t write_bytes, double rate_bps);
  void ReceiveLoop(size_t i, size_t read_bytes);
  void EchoLoop(size_t i, int message_bytes);

  std::vector<pairwise::Socket> sockets_;
  std::unique_ptr<PaddedCounter[]> counters_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_sending_{false};
  std::atomic<bool> abort_{false};
  std::atomic<int> running_{0};
  mutable std::mutex mu_;
  absl::Status error_;
};

}  // namespace fleetbench::agent::net

#endif  // FLEETBENCH_AGENT_BENCHMARKS_NET_STREAM_GROUP_H_
