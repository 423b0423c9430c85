#include "cli/client.h"

#include <cstdlib>
#include <iostream>

#include "cli/usage.h"
#include "common/reason.h"
#include "common/wire_limits.h"

namespace fleetbench::cli {

const FlagSpec kControllerFlag{
    "controller", true, false,
    "controller address, HOST:PORT or unix:PATH for its local socket, or a leader and its "
    "standbys as HOST:PORT,HOST:PORT,... (default $FLEETBENCH_CONTROLLER or 127.0.0.1:7070)"};
const FlagSpec kTokenFlag{"token-file", true, false, "file with the token (else $FLEETBENCH_TOKEN)"};
const FlagSpec kJsonFlag{"json", false, false, "print protobuf JSON (snake_case field names)"};
const FlagSpec kCaFlag{"ca", true, false,
                       "the controller's CA certificate (else $FLEETBENCH_CA; the controller "
                       "prints its path at start)"};
const FlagSpec kInsecureFlag{"insecure", false, false,
                             "plaintext, for a controller started with --insecure"};

int Fail(const std::string& command, const std::string& message) {
  std::cerr << "fleetbench " << command << ": " << message << "\n";
  return kExitFailure;
}

int Usage(const std::string& command, const std::string& error, const std::vector<FlagSpec>& flags) {
  return UsageError(command, error, flags);
}

absl::StatusOr<Client> Client::Connect(const Args& args) {
  const char* env = std::getenv("FLEETBENCH_CONTROLLER");
  absl::StatusOr<std::vector<std::string>> addresses = ParseControllerList(
      "--controller", args.Get("controller", env && *env ? env : "127.0.0.1:7070"));
  if (!addresses.ok()) return addresses.status();
  const std::string address = addresses->front();
  absl::StatusOr<std::string> token = LoadToken(args.Get("token-file"));
  if (!token.ok()) return token.status();
  Client c;
  c.addresses_ = *std::move(addresses);
  c.address_ = address;
  c.token_ = *token;
  c.tls_.insecure = args.Has("insecure");
  // The controller's local socket carries no TLS (common/transport.h): no
  // CA to find or read.
  if (IsLocalAddress(address)) {
    if (args.Has("ca") || c.tls_.insecure) {
      return absl::InvalidArgumentError(
          "--ca and --insecure are for TCP addresses; a unix: socket is local, "
          "without TLS");
    }
    // No TLS proves who listens there; the file's owner must.
    if (absl::Status s = CheckLocalSocketOwner(address); !s.ok()) return s;
  } else if (!c.tls_.insecure) {
    absl::StatusOr<std::string> ca = LoadCaPem(args.Get("ca"));
    if (!ca.ok()) return absl::InvalidArgumentError(ca.status().message());
    c.tls_.ca_pem = *ca;
  } else if (args.Has("ca")) {
    return absl::InvalidArgumentError("--ca and --insecure contradict each other");
  }
  c.Redial();
  return c;
}

namespace {

// How long a dial to one of several controllers may take to connect.
constexpr absl::Duration kPickTimeout = absl::Seconds(3);

enum class Reach { kConnected, kStillTrying, kFailed };

// Whether `channel` connects by `deadline`: kFailed as soon as an attempt
// failed (a standby does not listen; a TLS mismatch), kStillTrying when it
// is still connecting then (a slow leader on a busy host).
Reach Connects(grpc::Channel& channel, absl::Time deadline) {
  grpc_connectivity_state state = channel.GetState(/*try_to_connect=*/true);
  while (state != GRPC_CHANNEL_READY) {
    if (state == GRPC_CHANNEL_TRANSIENT_FAILURE || state == GRPC_CHANNEL_SHUTDOWN) {
      return Reach::kFailed;
    }
    if (!channel.WaitForStateChange(state, absl::ToChronoTime(deadline))) {
      return Reach::kStillTrying;
    }
    state = channel.GetState(/*try_to_connect=*/true);
  }
  return Reach::kConnected;
}

}  // namespace

void Client::Redial() {
  // The limit every peer agrees on (common/wire_limits.h); large reads
  // come in pages below it.
  grpc::ChannelArguments channel_args;
  channel_args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  channel_args.SetMaxSendMessageSize(kMaxMessageBytes);
  if (addresses_.size() > 1) {
    // The leader is the one that answers. Else one still connecting (a slow
    // leader) over one that failed; none at all, the first's calls say why.
    std::shared_ptr<grpc::Channel> trying;
    std::string trying_address;
    for (const std::string& address : addresses_) {
      std::shared_ptr<grpc::Channel> channel = DialController(address, tls_, channel_args);
      const Reach reach = Connects(*channel, absl::Now() + kPickTimeout);
      if (reach == Reach::kConnected) {
        address_ = address;
        stub_ = v1::Fleet::NewStub(channel);
        return;
      }
      if (reach == Reach::kStillTrying && trying == nullptr) {
        trying = std::move(channel);
        trying_address = address;
      }
    }
    if (trying != nullptr) {
      address_ = trying_address;
      stub_ = v1::Fleet::NewStub(trying);
      return;
    }
    address_ = addresses_.front();
  }
  stub_ = v1::Fleet::NewStub(DialController(address_, tls_, channel_args));
}

std::optional<Prepared> Prepare(const std::string& command, const Argv& argv,
                                std::vector<FlagSpec> flags, size_t positional, int* exit_code) {
  flags.push_back(kControllerFlag);
  flags.push_back(kTokenFlag);
  flags.push_back(kCaFlag);
  flags.push_back(kInsecureFlag);
  auto args = ParseArgs(argv, flags);
  if (!args.ok()) {
    *exit_code = Usage(command, std::string(args.status().message()), flags);
    return std::nullopt;
  }
  if (args->positional.size() != positional) {
    *exit_code = Usage(command,
                       positional ? "expects " + std::to_string(positional) + " argument(s)"
                                  : "unexpected argument " + ClipInput(args->positional[0]),
                       flags);
    return std::nullopt;
  }
  auto client = Client::Connect(*args);
  if (!client.ok()) {
    *exit_code = absl::IsInvalidArgument(client.status())
                     ? Usage(command, std::string(client.status().message()), flags)
                     : Fail(command, std::string(client.status().message()));
    return std::nullopt;
  }
  return Prepared{std::move(*args), std::move(*client)};
}

}  // namespace fleetbench::cli
