// common/reason.h — the one bound on a human-readable reason (a task's, a
// benchmark outcome's) that agent and controller share, and the cut that
// keeps a reason inside it. Reasons are cut where they are made: one built
// from user input (a parameter value quoted in an error) must never make the
// report that carries it too big to store.
#ifndef FLEETBENCH_COMMON_REASON_H_
#define FLEETBENCH_COMMON_REASON_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace fleetbench {

inline constexpr size_t kMaxReasonLength = 4096;  // bytes

// `text` when it fits in `max` bytes; otherwise its head, cut at a UTF-8
// character boundary, followed by "… (N bytes cut)", the whole at most `max`
// bytes. Bytes that are not UTF-8 become U+FFFD first (common/utf8.h): a
// reason that quotes a tool's output must not make its message unreadable.
std::string TruncateReason(absl::string_view text, size_t max = kMaxReasonLength);

// How much of a user's input an error message quotes back.
inline constexpr size_t kMaxEchoLength = 64;  // bytes

// `input` when it fits in `max` bytes; otherwise its first `max` bytes (cut
// at a UTF-8 character boundary) followed by "...". For echoing a value in
// an error: a 128 KiB value must not come back as a 128 KiB message.
std::string ClipInput(absl::string_view input, size_t max = kMaxEchoLength);

// `message` about the benchmark `name`, said once: "NAME: message", unless
// the message already opens with "NAME: " (plugins name themselves in their
// own errors: "allreduce: backend=nccl: ...").
std::string ReasonOf(absl::string_view name, absl::string_view message);

}  // namespace fleetbench

#endif  // FLEETBENCH_COMMON_REASON_H_
