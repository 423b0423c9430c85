#include "agent/benchmarks/workload_process/workload_spawn.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace fs = std::filesystem;

TEST(WorkloadEnvironmentTest, InheritsOnlyTheFewThenAddsTheCommands) {
  const char* inherited[] = {"PATH=/opt/bin:/usr/bin",
                             "HOME=/home/agent",
                             "FLEETBENCH_TOKEN=s3cret",
                             "http_proxy=http://proxy",
                             "LANG=C.UTF-8",
                             "NOEQUALS",
                             nullptr};
  auto env = WorkloadEnvironment({{"LANG", "en_US.UTF-8"}, {"BATCH", "64"}},
                                 inherited);
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_THAT(*env, ElementsAre("BATCH=64", "HOME=/home/agent",
                                "LANG=en_US.UTF-8", "PATH=/opt/bin:/usr/bin"));
}

TEST(WorkloadEnvironmentTest, ADefaultPathWhenTheAgentHasNone) {
  const char* inherited[] = {nullptr};
  auto env = WorkloadEnvironment({}, inherited);
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_THAT(*env, ElementsAre("PATH=/usr/local/bin:/usr/bin:/bin"));
}

TEST(WorkloadEnvironmentTest, RefusesNamesThatCannotBeNames) {
  const char* inherited[] = {nullptr};
  for (const std::string& name :
       {std::string(""), std::string("A=B"), std::string("A\0B", 3)}) {
    auto env = WorkloadEnvironment({{name, "x"}}, inherited);
    EXPECT_EQ(env.status().code(), absl::StatusCode::kInvalidArgument) << name;
  }
  EXPECT_EQ(WorkloadEnvironment({{"A", std::string("x\0y", 3)}}, inherited)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

class ResolveProgramTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        fs::canonical(::testing::TempDir()).string() + "/resolve_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    fs::create_directory(root_ + "/plain");
    fs::create_directory(root_ + "/exec");
    MakeFile(root_ + "/plain/tool", 0644);
    MakeFile(root_ + "/exec/tool", 0755);
  }
  void TearDown() override { fs::remove_all(root_); }
  static void MakeFile(const std::string& path, mode_t mode) {
    std::ofstream(path) << "#!/bin/sh\n";
    ASSERT_EQ(chmod(path.c_str(), mode), 0);
  }

  std::string root_;
};

TEST_F(ResolveProgramTest, AnAbsolutePathAsItIs) {
  auto program = ResolveProgram("/no/such/program", "/usr/bin");
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ(*program, "/no/such/program");  // execve says whether it exists
}

TEST_F(ResolveProgramTest, TheFirstExecutableFileOnPath) {
  auto program = ResolveProgram(
      "tool", root_ + "/missing:" + root_ + "/plain:" + root_ + "/exec");
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ(*program, root_ + "/exec/tool");
}

TEST_F(ResolveProgramTest, NeverRelativeFoldersOfPath) {
  // From root_, "exec" and "./exec" would find exec/tool.
  const fs::path was = fs::current_path();
  fs::current_path(root_);
  auto program = ResolveProgram("tool", ":exec:./exec");
  fs::current_path(was);
  EXPECT_EQ(program.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(program.status().message(), HasSubstr("'tool'"));
}

TEST_F(ResolveProgramTest, RefusesARelativePathAndNothing) {
  EXPECT_EQ(ResolveProgram("exec/tool", root_).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ResolveProgram("./tool", root_).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ResolveProgram("", root_).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fleetbench::agent
