// cli/client.h — what the user commands share: the controller connection
// (address, token, a deadline on every call), the common flags, and the
// one-line error and usage messages with their exit codes.
#ifndef FLEETBENCH_CLI_CLIENT_H_
#define FLEETBENCH_CLI_CLIENT_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "common/token.h"
#include "common/transport.h"
#include "fleetbench/v1/fleet_service.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace fleetbench::cli {

extern const FlagSpec kControllerFlag;
extern const FlagSpec kTokenFlag;
extern const FlagSpec kJsonFlag;
extern const FlagSpec kCaFlag;
extern const FlagSpec kInsecureFlag;

// "fleetbench COMMAND: message" on stderr; returns kExitFailure.
int Fail(const std::string& command, const std::string& message);
// The error in one line and a hint to --help (cli/usage.h); kExitUsage.
int Usage(const std::string& command, const std::string& error,
          const std::vector<FlagSpec>& flags);

// A connection to the controller's user API with the token attached.
class Client {
 public:
  static absl::StatusOr<Client> Connect(const Args& args);

  // Calls `method` with a deadline; UNAVAILABLE explains which address.
  template <typename Request, typename Response, typename Method>
  absl::Status Call(Method method, const Request& request, Response* response,
                    absl::Duration deadline = absl::Seconds(30)) {
    grpc::ClientContext context;
    context.AddMetadata(kAuthMetadataKey, "Bearer " + token_);
    context.set_deadline(absl::ToChronoTime(absl::Now() + deadline));
    grpc::Status s = (stub_.get()->*method)(&context, request, response);
    if (s.ok()) return absl::OkStatus();
    if (s.error_code() == grpc::StatusCode::UNAVAILABLE) {
      return absl::UnavailableError(
          absl::StrCat("cannot reach the controller at ", address_, ": ",
                       ExplainUnavailable(address_, tls_, s.error_message())));
    }
    return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
  }

  // Calls a server-streaming `method`, handing each message to `on_message`
  // (an error from it cancels the call and is returned).
  template <typename Request, typename Response, typename Method>
  absl::Status ReadStream(Method method, const Request& request,
                          const std::function<absl::Status(const Response&)>& on_message,
                          absl::Duration deadline) {
    grpc::ClientContext context;
    context.AddMetadata(kAuthMetadataKey, "Bearer " + token_);
    context.set_deadline(absl::ToChronoTime(absl::Now() + deadline));
    auto reader = (stub_.get()->*method)(&context, request);
    Response message;
    absl::Status mine = absl::OkStatus();
    while (reader->Read(&message)) {
      mine = on_message(message);
      if (!mine.ok()) {
        context.TryCancel();
        break;
      }
    }
    grpc::Status s = reader->Finish();
    if (!mine.ok()) return mine;
    if (s.ok()) return absl::OkStatus();
    if (s.error_code() == grpc::StatusCode::UNAVAILABLE) {
      return absl::UnavailableError(
          absl::StrCat("cannot reach the controller at ", address_, ": ", s.error_message()));
    }
    return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
  }

  // A new channel to the controller, for a caller that goes on after an
  // UNAVAILABLE (run --wait through a controller restart): the old one
  // would not reach a controller that came back (DialController). With
  // several addresses (a leader and its standbys) it is the first that
  // connects, else the first.
  void Redial();

 private:
  std::vector<std::string> addresses_;
  std::string address_;  // the one dialled
  std::string token_;
  ClientTls tls_;
  std::unique_ptr<v1::Fleet::Stub> stub_;
};

// Parses flags (adding --controller, --token-file, --ca, --insecure) and connects; on
// error prints and sets *exit_code.
struct Prepared {
  Args args;
  std::optional<Client> client;
};
std::optional<Prepared> Prepare(const std::string& command, const Argv& argv,
                                std::vector<FlagSpec> flags, size_t positional, int* exit_code);

}  // namespace fleetbench::cli

#endif  // FLEETBENCH_CLI_CLIENT_H_
