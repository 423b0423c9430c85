#include "diagnosis/node_rule_support.h"

#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/units.h"

namespace fleetbench::diagnosis::node_rules {

v1::Finding NewFinding(const NodeEvidence& evidence, const RuleInfo& rule) {
  v1::Finding f;
  f.set_code(std::string(rule.code));
  f.set_severity(rule.severity);
  f.mutable_subject()->set_node(evidence.node);
  f.set_run_id(evidence.run_id);
  f.set_time_unix_ms(evidence.time_unix_ms);
  return f;
}

void AddEvidence(v1::Finding* finding, absl::string_view name, double measured,
                 std::optional<double> expected, absl::string_view unit,
                 absl::string_view expectation_source) {
  v1::Evidence* e = finding->add_evidence();
  e->set_name(std::string(name));
  e->set_measured(measured);
  if (expected.has_value()) e->set_expected(*expected);
  e->set_unit(std::string(unit));
  e->set_expectation_source(std::string(expectation_source));
}

std::vector<const v1::Sample*> SamplesOf(const NodeEvidence& evidence,
                                         absl::string_view metric) {
  std::vector<const v1::Sample*> found;
  for (const v1::Sample& s : evidence.samples) {
    if (s.metric() == metric) found.push_back(&s);
  }
  return found;
}

std::string Param(const v1::Sample& sample, absl::string_view key) {
  auto it = sample.params().find(std::string(key));
  return it == sample.params().end() ? "" : it->second;
}

std::optional<double> NumberParam(const v1::Sample& sample,
                                  absl::string_view key) {
  double value = 0;
  const std::string text = Param(sample, key);
  if (text.empty() || !absl::SimpleAtod(text, &value) ||
      !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

std::optional<int> GpuOfSample(const v1::Sample& sample) {
  int index = 0;
  if (!absl::SimpleAtoi(Param(sample, "gpu"), &index) || index < 0) {
    return std::nullopt;
  }
  return index;
}

double UsableCores(const v1::CpuFacts& cpu, std::string* limited_by) {
  limited_by->clear();
  double cores = cpu.logical_cores();
  if (cpu.allowed_cores() > 0 && cpu.allowed_cores() < cores) {
    cores = cpu.allowed_cores();
    *limited_by = "the allowed-CPU list (cpuset)";
  }
  if (cpu.cgroup_limit_cores() > 0 && cpu.cgroup_limit_cores() < cores) {
    cores = cpu.cgroup_limit_cores();
    *limited_by = absl::StrCat("a cgroup CPU limit (", cpu.cgroup_limit_source(), ")");
  }
  return cores;
}

std::string WithUnit(double value, absl::string_view unit) {
  return absl::StrCat(FormatNumber(value), " ", unit);
}

}  // namespace fleetbench::diagnosis::node_rules
