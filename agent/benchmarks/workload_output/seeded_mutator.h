// agent/benchmarks/workload_output/seeded_mutator.h — random edits of text
// for the fuzz tests of this folder (test-only; no library links it).
//
// Seeded, so a failing input comes back on every run. Each edit, at a random
// place: replace a byte with a random one, insert a random byte, erase 1 to 8
// bytes, insert one of the caller's tokens (pieces that reach a parser's
// corners more often than random bytes do), or repeat up to 40 bytes. Not
// thread-safe: one per test.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_OUTPUT_SEEDED_MUTATOR_H_
#define FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_OUTPUT_SEEDED_MUTATOR_H_

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace fleetbench::agent {

class SeededMutator {
 public:
  SeededMutator(uint32_t seed, std::vector<std::string> tokens)
      : engine_(seed), tokens_(std::move(tokens)) {}

  // 0 to n-1; n > 0.
  size_t Uniform(size_t n) {
    return std::uniform_int_distribution<size_t>(0, n - 1)(engine_);
  }
  char Byte() { return static_cast<char>(Uniform(256)); }
  const std::string& Pick(const std::vector<std::string>& from) {
    return from[Uniform(from.size())];
  }
  std::mt19937& engine() { return engine_; }

  // `text` after 1 to `max_edits` edits.
  std::string Mutate(std::string text, size_t max_edits) {
    for (size_t n = 1 + Uniform(max_edits); n > 0; --n) {
      const size_t at = Uniform(text.size() + 1);
      const bool inside = at < text.size();
      switch (Uniform(5)) {
        case 0:
          if (inside) text[at] = Byte();
          break;
        case 1:
          text.insert(at, 1, Byte());
          break;
        case 2:
          if (inside) text.erase(at, 1 + Uniform(8));
          break;
        case 3:
          if (!tokens_.empty()) text.insert(at, Pick(tokens_));
          break;
        case 4:
          if (inside) text.insert(at, text.substr(at, Uniform(40)));
          break;
      }
    }
    return text;
  }

 private:
  std::mt19937 engine_;
  std::vector<std::string> tokens_;
};

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_OUTPUT_SEEDED_MUTATOR_H_
