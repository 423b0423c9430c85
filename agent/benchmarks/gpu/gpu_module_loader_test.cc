// The paths every node without a GPU takes: the module absent, not a module,
// or present but with no driver underneath. None needs a GPU; on a machine
// that has one, the "no driver" expectations are skipped.
#include "agent/benchmarks/gpu/gpu_module_loader.h"

#include <dlfcn.h>
#include <stdlib.h>

#include <atomic>
#include <cstddef>
#include <set>
#include <string>

#include "agent/benchmarks/gpu/gpu_allreduce.h"
#include "agent/benchmarks/gpu/gpu_benchmarks.h"
#include "agent/benchmarks/gpu/gpu_copy.h"
#include "agent/benchmarks/gpu/gpu_gemm.h"
#include "agent/benchmarks/gpu/gpu_plugin.h"
#include "agent/benchmarks/gpu/gpu_stress.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::gpu {
namespace {

using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;

constexpr char kMissing[] = "/nonexistent/libfleetbench_gpu.so";

GpuPluginOptions OptionsWithModule(const std::string& path) {
  GpuPluginOptions options;
  options.module.candidates = {path};
  options.nvml.library = "/nonexistent/libnvidia-ml.so.1";
  return options;
}

bool DriverPresent() {
  void* libcuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (libcuda == nullptr) return false;
  dlclose(libcuda);
  return true;
}

TEST(GpuModuleLoaderTest, MissingModuleIsAPreconditionWithDlerrorText) {
  absl::StatusOr<std::unique_ptr<GpuModule>> module =
      GpuModule::Load(GpuModuleOptions{{kMissing}});
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(module.status().message(),
              HasSubstr("loading the GPU module libfleetbench_gpu.so: "
                        "/nonexistent/libfleetbench_gpu.so: cannot open "
                        "shared object file"));
}

TEST(GpuModuleLoaderTest, EveryCandidateIsTriedAndReported) {
  absl::StatusOr<std::unique_ptr<GpuModule>> module = GpuModule::Load(
      GpuModuleOptions{{"/nonexistent/a.so", "/nonexistent/b.so"}});
  ASSERT_FALSE(module.ok());
  EXPECT_THAT(module.status().message(), HasSubstr("/nonexistent/a.so: "));
  EXPECT_THAT(module.status().message(), HasSubstr("; /nonexistent/b.so: "));
  EXPECT_THAT(GpuModule::Load(GpuModuleOptions{}).status().message(),
              HasSubstr("no place to look"));
}

TEST(GpuModuleLoaderTest, ASharedLibraryThatIsNotAModuleIsRefused) {
  absl::StatusOr<std::unique_ptr<GpuModule>> module =
      GpuModule::Load(GpuModuleOptions{{FAKE_NVML_LIBRARY}});
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(module.status().message(),
              HasSubstr("not a fleetbench GPU module of this version "
                        "(fleetbench_gpu_api_v1 missing)"));
}

TEST(GpuModuleLoaderTest, DefaultPlacesAreTheEnvironmentThenBesideTheBinary) {
  setenv("FLEETBENCH_GPU_MODULE", "/opt/fb/libfleetbench_gpu.so", 1);
  GpuModuleOptions options = DefaultGpuModuleOptions();
  unsetenv("FLEETBENCH_GPU_MODULE");
  ASSERT_EQ(options.candidates.size(), 2u);
  EXPECT_EQ(options.candidates[0], "/opt/fb/libfleetbench_gpu.so");
  EXPECT_THAT(options.candidates[1], EndsWith("/gpu/libfleetbench_gpu.so"));
  EXPECT_EQ(DefaultGpuModuleOptions().candidates.size(), 1u);
}

TEST(GpuModuleLoaderTest, ModuleCodesBecomeStatuses) {
  EXPECT_TRUE(ModuleStatus(0, "").ok());
  absl::Status s = ModuleStatus(9, "cudaGetDeviceCount: no CUDA device");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(), "cudaGetDeviceCount: no CUDA device");
  EXPECT_EQ(ModuleStatus(99, "x").code(), absl::StatusCode::kInternal);
  EXPECT_EQ(ModuleStatus(-1, "x").code(), absl::StatusCode::kInternal);
  EXPECT_EQ(ModuleStatus(13, "").message(),
            "GPU module call failed with code 13");
}

TEST(GpuModuleLoaderTest, BuiltModuleLoadsAndSaysWhyThereIsNoDevice) {
  const std::string path = GPU_MODULE_PATH;
  if (path.empty()) GTEST_SKIP() << "built without CUDA: no module to load";
  absl::StatusOr<std::unique_ptr<GpuModule>> module =
      GpuModule::Load(GpuModuleOptions{{path}});
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_THAT((*module)->build_info(), HasSubstr("cuda runtime"));
  if (DriverPresent()) GTEST_SKIP() << "an NVIDIA driver is installed here";
  absl::StatusOr<int> count = (*module)->DeviceCount();
  ASSERT_FALSE(count.ok());
  EXPECT_EQ(count.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(count.status().message(), HasSubstr("cudaGetDeviceCount: "));
  EXPECT_THAT(count.status().message(), HasSubstr("libcuda.so.1"));
}

TEST(GpuModuleLoaderTest, AModuleWithTheOlderShorterTableIsRefused) {
  absl::StatusOr<std::unique_ptr<GpuModule>> module =
      GpuModule::Load(GpuModuleOptions{{OLD_GPU_MODULE_PATH}});
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(module.status().message(), HasSubstr("GPU module too old"));
  EXPECT_THAT(module.status().message(),
              HasSubstr("built with this fleetbench"));
}

TEST(GpuModuleLoaderTest, CheckApiTableWantsEveryEntry) {
  FleetbenchGpuApi api{};
  api.struct_size = sizeof(api);
  EXPECT_THAT(CheckApiTable(api).message(), HasSubstr("null entry"));
  api.struct_size = offsetof(FleetbenchGpuApi, collective);
  EXPECT_THAT(CheckApiTable(api).message(), HasSubstr("too old"));
}

TEST(GpuPluginsTest, RegistrationOrderAndNames) {
  std::vector<std::unique_ptr<agent::Benchmark>> all;
  AppendGpuBenchmarks(&all);
  std::vector<std::string> names;
  for (const auto& b : all) names.push_back(b->name());
  // "allreduce" is composed in registry.cc: this NCCL plugin is the
  // collective plugin's nccl backend.
  EXPECT_THAT(names, ElementsAre("gpu_gemm", "pcie", "hbm", "stress"));
}

// Probe() and Run() of every GPU plugin on a node without the module or
// without a driver: FAILED_PRECONDITION with the reason, never a crash.
void ExpectSkipped(agent::Benchmark& benchmark, const std::string& reason) {
  SCOPED_TRACE(benchmark.name());
  absl::Status probe = benchmark.Probe();
  EXPECT_EQ(probe.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(probe.message(), HasSubstr(reason));
  EXPECT_TRUE(benchmark.ValidateParams({}).ok());
  std::atomic<bool> cancelled{false};
  agent::RunContext context(::testing::TempDir(), &cancelled, nullptr);
  absl::StatusOr<std::vector<v1::Sample>> run = benchmark.Run({}, context);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(run.status().message(), HasSubstr(reason));
  // Bad parameters are still reported as such.
  EXPECT_EQ(benchmark.Run({{"nonsense", "1"}}, context).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(GpuPluginsTest, SkippedWithoutTheModule) {
  const GpuPluginOptions options = OptionsWithModule(kMissing);
  GpuGemmBenchmark gemm(options);
  GpuCopyBenchmark pcie(kPcieCopyPlugin, options);
  GpuCopyBenchmark hbm(kHbmCopyPlugin, options);
  AllreduceBenchmark allreduce(options);
  StressBenchmark stress(options);
  for (agent::Benchmark* b : std::vector<agent::Benchmark*>{
           &gemm, &pcie, &hbm, &allreduce, &stress}) {
    ExpectSkipped(*b, "cannot open shared object file");
  }
}

TEST(GpuPluginsTest, SkippedWithoutADriver) {
  const std::string path = GPU_MODULE_PATH;
  if (path.empty()) GTEST_SKIP() << "built without CUDA: no module to load";
  if (DriverPresent()) GTEST_SKIP() << "an NVIDIA driver is installed here";
  const GpuPluginOptions options = OptionsWithModule(path);
  GpuGemmBenchmark gemm(options);
  GpuCopyBenchmark pcie(kPcieCopyPlugin, options);
  GpuCopyBenchmark hbm(kHbmCopyPlugin, options);
  AllreduceBenchmark allreduce(options);
  StressBenchmark stress(options);
  for (agent::Benchmark* b : std::vector<agent::Benchmark*>{
           &gemm, &pcie, &hbm, &allreduce, &stress}) {
    ExpectSkipped(*b, "libcuda.so.1");
  }
}

}  // namespace
}  // namespace fleetbench::gpu
