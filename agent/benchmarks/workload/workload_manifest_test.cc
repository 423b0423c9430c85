// Workload manifests: what a good one declares, and the one line a bad one
// is refused with (the file and the field), and the command's expansion.
#include "agent/benchmarks/workload/workload_manifest.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/ulid.h"
#include "common/workload_params.h"
#include "gmock/gmock.h"

namespace fleetbench::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kTrainStep[] = R"json({
  "command": ["/usr/bin/python3", "train_step.py", "--batch", "{batch}", "--tag=run-{batch}-{model}"],
  "cwd": "/srv/ml",
  "env": {"OMP_NUM_THREADS": "8"},
  "params": {"batch": {"default": "64", "pattern": "^[0-9]{1,4}$"},
             "model": {"default": "small", "pattern": "small|large"}},
  "work_unit": "samples",
  "timeout_s": 900
})json";

TEST(WorkloadManifestTest, AGoodManifestDeclaresItsParamsUnitAndTimeout) {
  absl::StatusOr<Workload> w = ParseWorkloadManifest("train_step.json", "train_step", kTrainStep);
  ASSERT_TRUE(w.ok()) << w.status();
  const v1::WorkloadDeclaration d = w->Declaration();
  EXPECT_EQ(d.name(), "train_step");
  EXPECT_EQ(d.work_unit(), "samples");
  EXPECT_EQ(d.timeout_ms(), 900'000);
  EXPECT_EQ(d.params().at("batch").pattern(), "^[0-9]{1,4}$");
  EXPECT_EQ(w->manifest.env().at("OMP_NUM_THREADS"), "8");
}

TEST(WorkloadManifestTest, TheCommandTakesTheResolvedValuesAndNothingElse) {
  absl::StatusOr<Workload> w = ParseWorkloadManifest("f", "train_step", kTrainStep);
  ASSERT_TRUE(w.ok()) << w.status();
  absl::StatusOr<std::map<std::string, std::string>> values =
      ResolveWorkloadParams(w->Declaration(), {{"name", "train_step"}, {"batch", "128"}});
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_THAT(ExpandCommand(w->manifest, *values),
              ElementsAre("/usr/bin/python3", "train_step.py", "--batch", "128",
                          "--tag=run-128-small"));
  EXPECT_THAT(ResolveWorkloadParams(w->Declaration(), {{"batch", "1; rm -rf /"}}).status().message(),
              HasSubstr("does not match ^[0-9]{1,4}$"));
  EXPECT_THAT(ResolveWorkloadParams(w->Declaration(), {{"model", "smallish"}}).status().message(),
              HasSubstr("does not match")) << "the whole value must match";
  EXPECT_THAT(ResolveWorkloadParams(w->Declaration(), {{"output", "/etc/passwd"}}).status().message(),
              HasSubstr("has no parameter 'output'"));
}

TEST(WorkloadManifestTest, BracesThatAreNotAParameterStayLiteral) {
  absl::StatusOr<Workload> w = ParseWorkloadManifest(
      "f", "echo", R"({"command": ["/bin/echo", "{\"k\": 1}", "{}", "{x"], "work_unit": "runs"})");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_THAT(ExpandCommand(w->manifest, {}), ElementsAre("/bin/echo", "{\"k\": 1}", "{}", "{x"));
}

TEST(WorkloadManifestTest, ABadManifestIsRefusedNamingTheFileAndTheField) {
  struct Case {
    const char* json;
    const char* says;
  };
  const Case cases[] = {
      {R"({"work_unit": "s"})", "command: required"},
      {R"({"command": ["python3"], "work_unit": "s"})", "command[0]: the program must be an absolute path"},
      {R"({"command": ["/bin/x", "{batch}"], "work_unit": "s"})", "command[1]: {batch} names no parameter"},
      {R"({"command": ["{prog}"], "params": {"prog": {"pattern": ".*"}}, "work_unit": "s"})",
       "command[0]"},
      {R"({"command": ["/bin/x"], "params": {"b": {"default": "1"}}, "work_unit": "s"})",
       "params.b.pattern: required"},
      {R"({"command": ["/bin/x"], "params": {"b": {"pattern": "(("}}, "work_unit": "s"})",
       "params.b.pattern: pattern '((' is not a valid RE2"},
      {R"({"command": ["/bin/x"], "params": {"b": {"default": "x", "pattern": "[0-9]+"}}, "work_unit": "s"})",
       "params.b.default"},
      {R"({"command": ["/bin/x"], "params": {"name": {"pattern": ".*"}}, "work_unit": "s"})",
       "params.name: 'name' is taken"},
      {R"({"command": ["/bin/x"], "env": {"BAD-NAME": "1"}, "work_unit": "s"})", "env.BAD-NAME"},
      {R"({"command": ["/bin/x"], "cwd": "srv", "work_unit": "s"})", "cwd: must be an absolute path"},
      {R"({"command": ["/bin/x"]})", "work_unit: required"},
      {R"({"command": ["/bin/x"], "work_unit": "s", "timeout_s": 99999999})", "timeout_s"},
      {R"({"command": ["/bin/x"], "work_unit": "s", "timeout": 5})", "timeout"},
      {R"({"command": ["/bin/x"], "work_unit": "s", "loadgen_summary": "../x"})", "loadgen_summary"},
      {R"({"command": ["/bin/x"], "work_unit": "s", "loadgen_summary": "/tmp/x"})", "loadgen_summary"},
      {R"({"command": ["/bin/x"], "work_unit": "s", "loadgen_summary": "out/summary.txt"})",
       "loadgen_summary: a file name in cwd"},
      {R"(not json)", "bad.json: "},
  };
  std::vector<std::pair<std::string, std::string>> built;
  {
    std::string params;
    for (int i = 0; i <= kMaxWorkloadParams; ++i) {
      params += absl::StrCat(i == 0 ? "" : ", ", "\"p", i, "\": {\"pattern\": \"x\"}");
    }
    built.emplace_back(absl::StrCat(R"({"command": ["/bin/x"], "work_unit": "s", "params": {)",
                                    params, "}}"),
                       "params: 33 parameters; at most 32");
    built.emplace_back(absl::StrCat(R"({"command": ["/bin/x"], "work_unit": "s", "params": )",
                                    R"({"b": {"pattern": ")", std::string(1025, 'a'), "\"}}}"),
                       "params.b.pattern: longer than 1024 bytes");
  }
  for (const auto& [json, says] : built) {
    absl::StatusOr<Workload> w = ParseWorkloadManifest("bad.json", "bad", json);
    EXPECT_THAT(w.status().message(), HasSubstr(says)) << json.substr(0, 80);
  }
  for (const Case& c : cases) {
    absl::StatusOr<Workload> w = ParseWorkloadManifest("bad.json", "bad", c.json);
    ASSERT_FALSE(w.ok()) << c.json;
    EXPECT_TRUE(absl::IsInvalidArgument(w.status())) << c.json;
    EXPECT_THAT(w.status().message(), HasSubstr("bad.json: ")) << c.json;
    EXPECT_THAT(w.status().message(), HasSubstr(c.says)) << c.json;
    EXPECT_EQ(std::string(w.status().message()).find('\n'), std::string::npos) << "one line";
  }
  EXPECT_THAT(ParseWorkloadManifest("Bad Name.json", "Bad Name", kTrainStep).status().message(),
              HasSubstr("workload name 'Bad Name'"));
}

TEST(WorkloadManifestTest, AFolderDeclaresItsJsonFilesAndRefusesTheFirstBadOne) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("workloads_" + NewUlid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "train_step.json") << kTrainStep;
  std::ofstream(dir / "echo.json") << R"({"command": ["/bin/echo", "hi"], "work_unit": "runs"})";
  std::ofstream(dir / "train_step.py") << "print('not a manifest')\n";
  absl::StatusOr<std::vector<Workload>> all = LoadWorkloadDir(dir.string());
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].name, "echo");
  EXPECT_EQ((*all)[1].name, "train_step");

  std::ofstream(dir / "typo.json") << R"({"comand": ["/bin/echo"], "work_unit": "runs"})";
  absl::StatusOr<std::vector<Workload>> refused = LoadWorkloadDir(dir.string());
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("typo.json"));
  EXPECT_THAT(refused.status().message(), HasSubstr("comand"));
  std::filesystem::remove(dir / "typo.json");

  std::filesystem::create_directories(dir / "folder.json");
  EXPECT_THAT(LoadWorkloadDir(dir.string()).status().message(),
              HasSubstr("folder.json: not a regular file"));
  std::filesystem::remove(dir / "folder.json");
  std::ofstream(dir / "huge.json") << std::string(65 * 1024, ' ');
  EXPECT_THAT(LoadWorkloadDir(dir.string()).status().message(), HasSubstr("huge.json: larger"));
  std::filesystem::remove(dir / "huge.json");

  for (int i = 0; i < kMaxWorkloadsPerNode; ++i) {
    std::ofstream(dir / absl::StrCat("w", i, ".json"))
        << R"({"command": ["/bin/echo"], "work_unit": "runs"})";
  }
  EXPECT_THAT(LoadWorkloadDir(dir.string()).status().message(),
              HasSubstr("66 manifests; at most 64"));
  std::filesystem::remove_all(dir);

  EXPECT_THAT(LoadWorkloadDir(dir.string()).status().message(), HasSubstr("--workload-dir"));
}

}  // namespace
}  // namespace fleetbench::agent
