// diagnosis/rules_test_util.h — what the rule tests share to read a list of
// findings: its codes in order, and the one finding a case expects.
// Test-only, header-only.
#ifndef FLEETBENCH_DIAGNOSIS_RULES_TEST_UTIL_H_
#define FLEETBENCH_DIAGNOSIS_RULES_TEST_UTIL_H_

#include <string>
#include <vector>

#include "fleetbench/v1/finding.pb.h"
#include "gtest/gtest.h"

namespace fleetbench::diagnosis {

inline std::vector<std::string> Codes(
    const std::vector<v1::Finding>& findings) {
  std::vector<std::string> codes;
  for (const v1::Finding& f : findings) codes.push_back(f.code());
  return codes;
}

// The one finding expected (a copy: callers pass temporaries); an empty
// finding, after a failed expectation naming the codes, otherwise.
inline v1::Finding Only(const std::vector<v1::Finding>& findings) {
  EXPECT_EQ(findings.size(), 1u) << ::testing::PrintToString(Codes(findings));
  return findings.empty() ? v1::Finding() : findings[0];
}

}  // namespace fleetbench::diagnosis

#endif  // FLEETBENCH_DIAGNOSIS_RULES_TEST_UTIL_H_
