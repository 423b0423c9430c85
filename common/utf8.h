// common/utf8.h — text that protobuf will carry. A proto3 `string` must be
// valid UTF-8: protobuf writes one that is not, but the peer's parser
// refuses the whole message. What a benchmark quotes from outside (a
// workload's output, a tool's error) is made valid where it enters a
// message, each bad byte written as U+FFFD so that it shows.
//
// Pure functions, thread-safe.
#ifndef FLEETBENCH_COMMON_UTF8_H_
#define FLEETBENCH_COMMON_UTF8_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace fleetbench {

// The length of the valid UTF-8 sequence at s[i] (s[i] >= 0x80) and its
// code point, or 0 when the bytes there are not one (truncated, overlong,
// surrogate, above U+10FFFF).
int DecodeUtf8(std::string_view s, size_t i, uint32_t* cp);

// `text` with each byte that starts no valid UTF-8 sequence replaced by
// U+FFFD; `text` itself when it is valid.
std::string ToValidUtf8(std::string_view text);

}  // namespace fleetbench

#endif  // FLEETBENCH_COMMON_UTF8_H_
