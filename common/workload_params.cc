// Which parameter values a declared workload takes.
#include "common/workload_params.h"

#include "absl/strings/str_cat.h"
#include "common/reason.h"
#include "re2/re2.h"

namespace fleetbench {
namespace {

bool NameChar(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }

}  // namespace

absl::Status CheckWorkloadName(absl::string_view name) {
  bool ok = !name.empty() && name.size() <= 48 && name[0] != '_';
  for (char c : name) ok &= NameChar(c);
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("workload name '", ClipInput(name),
                   "' is not [a-z0-9][a-z0-9_]{0,47}"));
}

absl::Status CheckNamedWorkload(const std::string* name) {
  if (name == nullptr) {
    return absl::InvalidArgumentError(
        "which workload? (--param workload.name=NAME; `fleetbench nodes --json` lists each "
        "node's)");
  }
  return CheckWorkloadName(*name);
}

absl::Status CheckWorkloadPattern(absl::string_view pattern) {
  RE2::Options options;
  options.set_log_errors(false);
  RE2 re(std::string(pattern), options);
  if (re.ok()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("pattern '", ClipInput(pattern),
                                                 "' is not a valid RE2 expression: ",
                                                 re.error()));
}

absl::StatusOr<std::map<std::string, std::string>> ResolveWorkloadParams(
    const v1::WorkloadDeclaration& workload, const std::map<std::string, std::string>& given) {
  for (const auto& [key, value] : given) {
    if (key == kWorkloadNameParam || workload.params().contains(key)) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        "workload ", workload.name(), " has no parameter '", ClipInput(key), "'",
        workload.params().empty() ? " (it takes none)" : ""));
  }
  std::map<std::string, std::string> values;
  for (const auto& [key, param] : workload.params()) {
    auto it = given.find(key);
    const bool defaulted = it == given.end();
    const std::string& value = defaulted ? param.default_() : it->second;
    RE2::Options options;
    options.set_log_errors(false);
    RE2 re(param.pattern(), options);
    if (!re.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("workload ", workload.name(), ": parameter ",
                                                     key, " has an invalid pattern"));
    }
    if (value.size() > kMaxWorkloadValueBytes || !RE2::FullMatch(value, re)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "workload ", workload.name(), ": ", key, "=", ClipInput(value),
          defaulted ? " (its default)" : "", " does not match ", param.pattern(),
          defaulted && value.empty() ? "; give it with --param workload." + key + "=VALUE" : ""));
    }
    values[key] = value;
  }
  return values;
}

}  // namespace fleetbench
