// agent/runtime/preemption_watch.h — where the agent learns that its
// provider will take the node away (a spot or preemptible instance's
// notice; docs/reliability.md, Preemption notices).
//
// A source, as `--preemption-notice` names it:
//   file:PATH   a notice while PATH exists (a provider's agent or a
//               systemd unit may create it);
//   url:URL     an http:// URL polled with a plain GET (2 s timeouts): a
//               notice while it answers 200 with a body that is not empty
//               and not "false" (AWS's IMDSv1 spot endpoint answers 404
//               until a notice; a local proxy can answer FALSE);
//   cmd:PATH [ARG...]  a program run without a shell: a notice when it
//               exits 0 within `command_deadline` (10 s); one that takes
//               longer is killed and gives no notice. Use it for
//               endpoints that need a header or a token first (GCE's
//               Metadata-Flavor, AWS IMDSv2) or that always answer 200
//               (Azure's scheduled events): a curl and a grep.
// The notice's text (the file, the body, the program's output; the first
// 4 KiB) may hold the termination time as an RFC 3339 UTC time
// ("2027-01-15T08:02:00Z"), taken when present.
//
// Thread safety: Check may be called from one thread at a time.
#ifndef FLEETBENCH_AGENT_RUNTIME_PREEMPTION_WATCH_H_
#define FLEETBENCH_AGENT_RUNTIME_PREEMPTION_WATCH_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace fleetbench::agent {

struct PreemptionNotice {
  std::string source;  // the source as given
  absl::Time termination = absl::InfinitePast();  // InfinitePast: not said
};

class PreemptionWatch {
 public:
  // INVALID_ARGUMENT, naming the flag, for a source of no known kind, a
  // relative file path, a URL that is not http://HOST[:PORT]/PATH, or a
  // relative program path.
  static absl::StatusOr<std::unique_ptr<PreemptionWatch>> Parse(
      const std::string& source, absl::Duration command_deadline = absl::Seconds(10));

  // The notice when there is one now; nullopt otherwise, and when the
  // source cannot be read (an endpoint down is no notice).
  std::optional<PreemptionNotice> Check() const;

 private:
  enum class Kind { kFile, kUrl, kCommand };
  PreemptionWatch(Kind kind, std::string source) : kind_(kind), source_(std::move(source)) {}

  Kind kind_;
  std::string source_;
  std::string path_;               // file, or the URL's path
  std::string host_;               // URL
  int port_ = 80;                  // URL
  std::vector<std::string> argv_;  // command
  absl::Duration command_deadline_;
};

// The first RFC 3339 UTC time in `text`, InfinitePast when there is none.
absl::Time TerminationTimeIn(absl::string_view text);

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_RUNTIME_PREEMPTION_WATCH_H_
