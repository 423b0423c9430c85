// agent/benchmarks/stream/stream_team.h — the threads that run the STREAM
// kernels over their slices of three arrays, one operation at a time; shared
// by "mem" (all CPUs, first-touch arrays) and "mem_numa" (one node's CPUs,
// arrays bound to one node).
//
// The coordinator (the caller of Run()) publishes the operation, then meets
// the workers at one barrier; they meet again at a second. The two waits
// bracket the timed interval, as the implicit barrier of STREAM's OpenMP
// loop does. Each worker owns slice ThreadSlice(n, threads, index) of every
// array, and is pinned to cpus[index] when there is a CPU for every thread.
//
// Thread safety: one caller; the arrays must outlive the team and are
// touched only by the workers while it lives.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_STREAM_STREAM_TEAM_H_
#define FLEETBENCH_AGENT_BENCHMARKS_STREAM_STREAM_TEAM_H_

#include <pthread.h>
#include <sched.h>

#include <barrier>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <system_error>
#include <thread>
#include <vector>

#include "agent/benchmarks/stream/stream_kernels.h"
#include "agent/benchmarks/stream/stream_math.h"

namespace fleetbench::agent {

enum class Op { kInit, kCopy, kScale, kAdd, kTriad, kCheck, kStop };

inline Op OpOf(StreamKernel kernel) {
  switch (kernel) {
    case StreamKernel::kCopy:
      return Op::kCopy;
    case StreamKernel::kScale:
      return Op::kScale;
    case StreamKernel::kAdd:
      return Op::kAdd;
    case StreamKernel::kTriad:
      return Op::kTriad;
  }
  return Op::kStop;
}

// Per-thread sums of |x - expected| over each array (kCheck).
struct alignas(64) ErrorSums {
  double a = 0;
  double b = 0;
  double c = 0;
};

// Worker threads that run one operation at a time over their own slices.
// The coordinator (the Run() thread) publishes the operation, then meets
// the workers at `start_`; they meet again at `done_`. The two barrier
// waits bracket the timed interval, as the implicit barrier of STREAM's
// OpenMP loop does.
class StreamTeam {
 public:
  StreamTeam(int threads, const std::vector<int>& cpus, double* a, double* b,
             double* c, int64_t n, StreamValues expected)
      : threads_(threads),
        a_(a),
        b_(b),
        c_(c),
        n_(n),
        expected_(expected),
        sums_(static_cast<size_t>(threads)),
        start_(threads + 1),
        done_(threads + 1) {
    // Pin only when every thread gets a CPU of its own.
    pinned_ = static_cast<int>(cpus.size()) >= threads;
    for (int i = 0; i < threads; ++i) {
      try {
        workers_.emplace_back([this, i] { Work(i); });
      } catch (const std::system_error&) {
        break;
      }
      if (pinned_) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpus[static_cast<size_t>(i)], &set);
        if (pthread_setaffinity_np(workers_.back().native_handle(), sizeof(set),
                                   &set) != 0) {
          pinned_ = false;
        }
      }
    }
    // Threads that could not be started never arrive: take them out of
    // both barriers so the ones that did start can still be stopped.
    for (int i = static_cast<int>(workers_.size()); i < threads; ++i) {
      (void)start_.arrive_and_drop();
      (void)done_.arrive_and_drop();
    }
  }

  ~StreamTeam() {
    op_ = Op::kStop;
    start_.arrive_and_wait();
    for (std::thread& t : workers_) t.join();
  }
  StreamTeam(const StreamTeam&) = delete;
  StreamTeam& operator=(const StreamTeam&) = delete;

  bool complete() const {
    return static_cast<int>(workers_.size()) == threads_;
  }
  bool pinned() const { return pinned_; }

  // Runs `op` on every slice; returns the wall time in seconds.
  double Run(Op op) {
    op_ = op;
    const auto begin = std::chrono::steady_clock::now();
    start_.arrive_and_wait();
    done_.arrive_and_wait();
    const auto end = std::chrono::steady_clock::now();
    return std::chrono::duration<double>(end - begin).count();
  }

  ErrorSums TotalErrors() const {
    ErrorSums total;
    for (const ErrorSums& s : sums_) {
      total.a += s.a;
      total.b += s.b;
      total.c += s.c;
    }
    return total;
  }

 private:
  void Work(int index) {
    const Slice slice = ThreadSlice(n_, threads_, index);
    const int64_t lo = slice.begin;
    const int64_t hi = slice.end;
    while (true) {
      start_.arrive_and_wait();
      const Op op = op_;
      if (op == Op::kStop) return;
      switch (op) {
        case Op::kInit:
          for (int64_t j = lo; j < hi; ++j) {
            a_[j] = 1.0;
            b_[j] = 2.0;
            c_[j] = 0.0;
          }
          break;
        case Op::kCopy:
          StreamCopy(a_, c_, lo, hi);
          break;
        case Op::kScale:
          StreamScale(b_, c_, lo, hi);
          break;
        case Op::kAdd:
          StreamAdd(a_, b_, c_, lo, hi);
          break;
        case Op::kTriad:
          StreamTriad(a_, b_, c_, lo, hi);
          break;
        case Op::kCheck: {
          ErrorSums& s = sums_[static_cast<size_t>(index)];
          s = ErrorSums{};
          for (int64_t j = lo; j < hi; ++j) {
            s.a += std::abs(a_[j] - expected_.a);
            s.b += std::abs(b_[j] - expected_.b);
            s.c += std::abs(c_[j] - expected_.c);
          }
          break;
        }
        case Op::kStop:
          break;
      }
      done_.arrive_and_wait();
    }
  }

  const int threads_;
  double* const a_;
  double* const b_;
  double* const c_;
  const int64_t n_;
  const StreamValues expected_;
  std::vector<ErrorSums> sums_;
  bool pinned_ = false;
  // Written by the coordinator before it arrives at start_, read by the
  // workers after it: the barrier orders the two.
  Op op_ = Op::kInit;
  std::barrier<> start_;
  std::barrier<> done_;
  std::vector<std::thread> workers_;
};


}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_STREAM_STREAM_TEAM_H_
