#include "agent/benchmarks/workload_process/output_capture.h"

#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

// OutputTail's rule written out directly over the whole stream.
std::string ExpectedTail(const std::string& stream, size_t capacity) {
  if (stream.size() <= capacity) return stream;
  std::string kept = stream.substr(stream.size() - capacity);
  if (stream[stream.size() - capacity - 1] == '\n') return kept;
  const size_t newline = kept.find('\n');
  if (newline != std::string::npos && newline + 1 < kept.size())
    kept.erase(0, newline + 1);
  return kept;
}

std::string TailOf(const std::string& stream, size_t capacity, size_t chunk) {
  OutputTail tail(capacity);
  for (size_t at = 0; at < stream.size(); at += chunk)
    tail.Append(std::string_view(stream).substr(at, chunk));
  EXPECT_EQ(tail.total_bytes(), static_cast<int64_t>(stream.size()));
  return tail.Text();
}

TEST(OutputTailTest, KeepsEverythingThatFits) {
  EXPECT_EQ(TailOf("one\ntwo", 16, 3), "one\ntwo");
  EXPECT_EQ(TailOf("", 16, 3), "");
}

TEST(OutputTailTest, StartsAtALineStartWhenBytesWereDropped) {
  // Capacity 8 keeps "ree\nfour"; the cut line "ree" goes.
  EXPECT_EQ(TailOf("one\ntwo\nthree\nfour", 8, 5), "four");
  // The kept bytes already start a line: nothing more is cut.
  EXPECT_EQ(TailOf("one\ntwo\nthree\n", 6, 4), "three\n");
}

TEST(OutputTailTest, KeepsACutLineRatherThanNothing) {
  EXPECT_EQ(TailOf("abcdefghij", 4, 3), "ghij");
  EXPECT_EQ(TailOf("abcdefghi\n", 4, 3), "ghi\n");
}

TEST(OutputTailTest, AChunkLargerThanTheCapacity) {
  EXPECT_EQ(TailOf("line one\nline two\n", 12, 100), "line two\n");
}

TEST(OutputTailTest, CapacityZeroKeepsNothingButCounts) {
  EXPECT_EQ(TailOf("abc\ndef\n", 0, 2), "");
}

TEST(OutputTailTest, AnyChunkingGivesTheSameTail) {
  std::mt19937 random(7);
  for (int round = 0; round < 200; ++round) {
    std::string stream(random() % 300, 'x');
    for (char& c : stream) c = "ab\n"[random() % 3];
    const size_t capacity = random() % 40;
    const size_t chunk = 1 + random() % 50;
    EXPECT_EQ(TailOf(stream, capacity, chunk), ExpectedTail(stream, capacity))
        << "stream '" << stream << "' capacity " << capacity << " chunk "
        << chunk;
  }
}

std::vector<std::string> Split(const std::string& stream, size_t max_line,
                               size_t chunk) {
  std::vector<std::string> lines;
  LineSplitter splitter(
      max_line, [&](std::string_view line) { lines.emplace_back(line); });
  for (size_t at = 0; at < stream.size(); at += chunk)
    splitter.Append(std::string_view(stream).substr(at, chunk));
  splitter.Finish();
  return lines;
}

TEST(LineSplitterTest, LinesInOrderWithoutTheirNewline) {
  const std::vector<std::string> expected = {"one", "", "three"};
  for (size_t chunk : {1, 2, 5, 100}) {
    EXPECT_EQ(Split("one\n\nthree\n", 64, chunk), expected) << chunk;
  }
}

TEST(LineSplitterTest, ALastLineWithoutNewlineComesAtFinish) {
  EXPECT_EQ(Split("one\ntwo", 64, 3), (std::vector<std::string>{"one", "two"}));
  EXPECT_EQ(Split("", 64, 3), std::vector<std::string>{});
}

TEST(LineSplitterTest, LongLinesAreCutAndTheRestDropped) {
  for (size_t chunk : {1, 3, 7, 100}) {
    EXPECT_EQ(Split("abcdefgh\nxy\n123456", 4, chunk),
              (std::vector<std::string>{"abcd", "xy", "1234"}))
        << chunk;
  }
}

}  // namespace
}  // namespace fleetbench::agent
