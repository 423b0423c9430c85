#include "cli/args.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/reason.h"

namespace fleetbench::cli {

std::string Args::Get(const std::string& name, const std::string& fallback) const {
  auto it = values.find(name);
  return it == values.end() || it->second.empty() ? fallback : it->second.back();
}

const std::vector<std::string>& Args::All(const std::string& name) const {
  static const std::vector<std::string> kEmpty;
  auto it = values.find(name);
  return it == values.end() ? kEmpty : it->second;
}

absl::StatusOr<Args> ParseArgs(const std::vector<std::string>& argv,
                               const std::vector<FlagSpec>& specs) {
  Args args;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--help" || a == "-h") {
      return absl::InvalidArgumentError("help");
    }
    if (a.rfind("--", 0) != 0 || a == "--") {
      args.positional.push_back(a);
      continue;
    }
    std::string name = a.substr(2);
    std::string value;
    bool has_inline = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_inline = true;
    }
    const FlagSpec* spec = nullptr;
    for (const FlagSpec& s : specs) {
      if (s.name == name) spec = &s;
    }
    if (spec == nullptr) return absl::InvalidArgumentError(absl::StrCat("unknown flag --", ClipInput(name)));
    if (spec->takes_value && !has_inline) {
      if (i + 1 >= argv.size()) {
        return absl::InvalidArgumentError(absl::StrCat("--", name, " needs a value"));
      }
      value = argv[++i];
    } else if (!spec->takes_value && has_inline) {
      return absl::InvalidArgumentError(absl::StrCat("--", name, " takes no value"));
    }
    auto& slot = args.values[name];
    if (!spec->repeated && !slot.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("--", name, " given twice"));
    }
    slot.push_back(value);
  }
  return args;
}

std::string FlagsHelp(const std::vector<FlagSpec>& specs) {
  std::string out;
  for (const FlagSpec& s : specs) {
    absl::StrAppend(&out, "  --", s.name, s.takes_value ? " VALUE" : "",
                    s.repeated ? " (repeatable)" : "", "\n      ", s.help, "\n");
  }
  return out;
}

std::vector<std::string> SplitList(const std::string& list) {
  return absl::StrSplit(list, ',', absl::SkipEmpty());
}

absl::StatusOr<std::pair<std::string, std::string>> ParseKeyValue(const std::string& kv) {
  const size_t eq = kv.find('=');
  if (eq == std::string::npos || eq == 0) {
    return absl::InvalidArgumentError(absl::StrCat("'", ClipInput(kv), "' is not key=value"));
  }
  return std::make_pair(kv.substr(0, eq), kv.substr(eq + 1));
}

absl::Status CheckHostPort(const std::string& flag, const std::string& address,
                           bool allow_any_port) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, " '", ClipInput(address), "': ", why));
  };
  if (absl::StartsWith(address, "unix:")) {
    return address.size() > 5 ? absl::OkStatus() : bad("unix: needs a path");
  }
  std::string host;
  std::string port;
  if (absl::StartsWith(address, "[")) {
    const size_t close = address.find("]:");
    if (close == std::string::npos) return bad("wants [IPV6]:PORT");
    host = address.substr(1, close - 1);
    port = address.substr(close + 2);
    if (host.empty() || host.find_first_not_of("0123456789abcdefABCDEF:.") != std::string::npos) {
      return bad("not an IPv6 address in brackets");
    }
  } else {
    const size_t colon = address.rfind(':');
    if (colon == std::string::npos) return bad("wants HOST:PORT");
    host = address.substr(0, colon);
    port = address.substr(colon + 1);
    if (host.find(':') != std::string::npos) {
      return bad("write an IPv6 address in brackets, [ADDR]:PORT");
    }
    if (host.empty() || host.size() > 253 ||
        host.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") !=
            std::string::npos) {
      return bad("not a host name or address");
    }
  }
  int value = -1;
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      !absl::SimpleAtoi(port, &value)) {
    return bad("the port must be a number");
  }
  if (value > 65535 || (value == 0 && !allow_any_port)) {
    return bad(absl::StrCat("port ", value, " is outside ", allow_any_port ? 0 : 1, "..65535"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> ParseControllerList(const std::string& flag,
                                                             const std::string& value) {
  std::vector<std::string> addresses;
  for (absl::string_view part : absl::StrSplit(value, ',')) {
    std::string address(absl::StripAsciiWhitespace(part));
    if (absl::Status s = CheckHostPort(flag, address); !s.ok()) return s;
    if (std::find(addresses.begin(), addresses.end(), address) != addresses.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, " '", ClipInput(address), "' is listed twice"));
    }
    addresses.push_back(std::move(address));
  }
  if (addresses.size() > kMaxControllerAddresses) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": at most ", kMaxControllerAddresses, " addresses"));
  }
  if (addresses.size() > 1) {
    for (const std::string& address : addresses) {
      if (absl::StartsWith(address, "unix:")) {
        return absl::InvalidArgumentError(absl::StrCat(
            flag, ": a unix: socket is one controller's on its own host, not part of a list"));
      }
    }
  }
  return addresses;
}

absl::StatusOr<absl::Duration> ParseWindow(const std::string& w) {
  // Ten years is more history than any fleet has; past it a window is a
  // typo, and 24 * days could overflow.
  constexpr int64_t kMaxWindowDays = 3650;
  const absl::Duration max = absl::Hours(24) * kMaxWindowDays;
  int64_t days = 0;
  absl::Duration d;
  if (!w.empty() && w.back() == 'd' && absl::SimpleAtoi(w.substr(0, w.size() - 1), &days)) {
    if (days > 0 && days <= kMaxWindowDays) return absl::Hours(24) * days;
  } else if (absl::ParseDuration(w, &d) && d > absl::ZeroDuration() && d <= max) {
    return d;
  }
  return absl::InvalidArgumentError(absl::StrCat("--window wants a duration like 7d or 24h, at most ",
                                                 kMaxWindowDays, "d; got '", ClipInput(w), "'"));
}

FlagSpec WindowFlag(const std::string& default_span) {
  return {"window", true, false,
          absl::StrCat("how far back, e.g. 7d, 24h (default ", default_span, ")")};
}

absl::StatusOr<int64_t> WindowMillis(const Args& args) {
  if (!args.Has("window")) return 0;
  absl::StatusOr<absl::Duration> window = ParseWindow(args.Get("window"));
  if (!window.ok()) return window.status();
  return absl::ToInt64Milliseconds(*window);
}

}  // namespace fleetbench::cli
