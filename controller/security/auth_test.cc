#include "controller/security/auth.h"

#include "gtest/gtest.h"

namespace fleetbench::controller {
namespace {

TEST(RoleTest, NamesRoundTrip) {
  for (Role role : {Role::kEnroll, Role::kViewer, Role::kOperator, Role::kAdmin}) {
    absl::StatusOr<Role> parsed = ParseRole(RoleName(role));
    ASSERT_TRUE(parsed.ok()) << RoleName(role);
    EXPECT_EQ(*parsed, role);
  }
  absl::StatusOr<Role> bad = ParseRole("root");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("viewer, operator, admin"), std::string::npos);
}

TEST(RoleTest, EachRoleAllowsWhatTheOneBelowDoesAndEnrollOnlyEnrolls) {
  struct Case {
    Role have, need;
    bool allowed;
  };
  const Case cases[] = {
      {Role::kViewer, Role::kViewer, true},     {Role::kViewer, Role::kOperator, false},
      {Role::kViewer, Role::kAdmin, false},     {Role::kOperator, Role::kViewer, true},
      {Role::kOperator, Role::kOperator, true}, {Role::kOperator, Role::kAdmin, false},
      {Role::kAdmin, Role::kViewer, true},      {Role::kAdmin, Role::kAdmin, true},
      {Role::kEnroll, Role::kEnroll, true},     {Role::kEnroll, Role::kViewer, false},
      {Role::kEnroll, Role::kAdmin, false},     {Role::kAdmin, Role::kEnroll, false},
      {Role::kViewer, Role::kEnroll, false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(RoleAllows(c.have, c.need), c.allowed)
        << RoleName(c.have) << " for " << RoleName(c.need);
  }
}

}  // namespace
}  // namespace fleetbench::controller
