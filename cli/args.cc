#include "cli/args.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

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
    if (spec == nullptr) return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name));
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
    return absl::InvalidArgumentError(absl::StrCat("'", kv, "' is not key=value"));
  }
  return std::make_pair(kv.substr(0, eq), kv.substr(eq + 1));
}

absl::StatusOr<absl::Duration> ParseWindow(const std::string& w) {
  int64_t days = 0;
  if (!w.empty() && w.back() == 'd' && absl::SimpleAtoi(w.substr(0, w.size() - 1), &days) &&
      days > 0 && days <= 36500) {
    return absl::Hours(24 * days);
  }
  absl::Duration d;
  if (!absl::ParseDuration(w, &d) || d <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--window wants a duration like 7d or 24h");
  }
  return d;
}

}  // namespace fleetbench::cli
