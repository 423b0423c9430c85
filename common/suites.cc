#include "common/suites.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace fleetbench {
namespace {

v1::BenchmarkSpec Spec(const std::string& name,
                       std::initializer_list<std::pair<const char*, const char*>> params) {
  v1::BenchmarkSpec spec;
  spec.set_name(name);
  for (const auto& [k, v] : params) (*spec.mutable_params())[k] = v;
  return spec;
}

}  // namespace

const std::vector<SuiteInfo>& AllSuites() {
  static const std::vector<SuiteInfo> kSuites = {
      {"quick", "a few minutes per node: CPU GEMM at 2048",
       {Spec("gemm", {{"sizes", "2048"}, {"min_seconds", "1"}})}},
      {"full", "the long version: CPU GEMM at 4096 and 8192",
       {Spec("gemm", {{"sizes", "4096,8192"}, {"min_seconds", "5"}})}},
  };
  return kSuites;
}

absl::StatusOr<SuiteInfo> FindSuite(const std::string& name) {
  std::vector<std::string> names;
  for (const SuiteInfo& s : AllSuites()) {
    if (s.name == name) return s;
    names.push_back(s.name);
  }
  return absl::NotFoundError(
      absl::StrCat("unknown suite '", name, "'; known: ", absl::StrJoin(names, ", ")));
}

}  // namespace fleetbench
