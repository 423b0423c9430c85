#include "agent/benchmarks/gemm/cpu_gemm.h"

#include <atomic>
#include <fstream>
#include <optional>
#include <sstream>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "agent/benchmarks/gemm/openblas_library.h"
#include "agent/benchmarks/registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

using ::testing::HasSubstr;

RunContext QuietContext(const std::atomic<bool>* cancelled = nullptr) {
  return RunContext("/tmp", cancelled, nullptr);
}

bool OpenBlasIsMapped() {
  std::ifstream maps("/proc/self/maps");
  std::stringstream text;
  text << maps.rdbuf();
  return text.str().find("libopenblas") != std::string::npos;
}

// First in this file: ctest runs every test in its own process, and nothing
// before it in this binary touches BLAS. The binaries link this plugin, so
// OpenBLAS (and its spinning thread pool) must arrive only when gemm asks.
TEST(OpenBlasLibraryTest, LoadedOnFirstUseNotAtStart) {
  EXPECT_FALSE(OpenBlasIsMapped());
  absl::StatusOr<const OpenBlasLibrary*> blas = OpenBlas();
  ASSERT_TRUE(blas.ok()) << blas.status();
  EXPECT_TRUE(OpenBlasIsMapped());
  EXPECT_EQ((*blas)->path, "libopenblas.so.0");
  EXPECT_GE((*blas)->get_num_threads(), 1);
  // The same library, not a second load.
  EXPECT_EQ(*OpenBlas(), *blas);
}

TEST(OpenBlasLibraryTest, MissingLibraryNamesItAndThePackage) {
  absl::StatusOr<OpenBlasLibrary> lib =
      LoadOpenBlasFrom("libfleetbench-no-such-blas.so.0");
  ASSERT_EQ(lib.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(lib.status().message(),
              HasSubstr("libfleetbench-no-such-blas.so.0"));
  EXPECT_THAT(lib.status().message(), HasSubstr("libopenblas0"));
}

TEST(OpenBlasLibraryTest, ALibraryWithoutCblasIsRefused) {
  absl::StatusOr<OpenBlasLibrary> lib = LoadOpenBlasFrom("libm.so.6");
  ASSERT_EQ(lib.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(lib.status().message(), HasSubstr("no cblas_sgemm"));
}

TEST(CpuGemmParamsTest, DefaultsWhenEmpty) {
  absl::StatusOr<CpuGemmConfig> config = ParseCpuGemmParams({});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->dtypes, (std::vector<std::string>{"fp32", "fp64"}));
  EXPECT_EQ(config->sizes, (std::vector<int>{4096}));
  EXPECT_GE(config->threads, 1);
  EXPECT_DOUBLE_EQ(config->min_seconds, 2);
  EXPECT_EQ(config->max_runs, 50);
  EXPECT_EQ(config->warmup_runs, 1);
}

TEST(CpuGemmParamsTest, AcceptsGoodValues) {
  absl::StatusOr<CpuGemmConfig> config = ParseCpuGemmParams({
      {"dtypes", "fp64, fp32"},
      {"sizes", "16,512 ,32768"},
      {"threads", "3"},
      {"min_seconds", "0.01"},
      {"max_runs", "100000"},
      {"warmup_runs", "0"},
  });
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->dtypes, (std::vector<std::string>{"fp64", "fp32"}));
  EXPECT_EQ(config->sizes, (std::vector<int>{16, 512, 32768}));
  EXPECT_EQ(config->threads, 3);
  EXPECT_DOUBLE_EQ(config->min_seconds, 0.01);
  EXPECT_EQ(config->max_runs, 100000);
  EXPECT_EQ(config->warmup_runs, 0);
}

struct BadCase {
  Params params;
  std::string message;
  // Short names in test listings (and so in CTest) instead of raw bytes.
  friend void PrintTo(const BadCase& c, std::ostream* os) {
    for (const auto& [key, value] : c.params)
      *os << key << "='" << value << "'";
  }
};

class CpuGemmBadParamsTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(CpuGemmBadParamsTest, RejectedWithActionableMessage) {
  CpuGemmBenchmark gemm;
  const absl::Status status = gemm.ValidateParams(GetParam().params);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    All, CpuGemmBadParamsTest,
    ::testing::Values(
        BadCase{{{"sizes", "40x"}}, "gemm: sizes: '40x' is not an integer"},
        BadCase{{{"sizes", "8"}}, "gemm: sizes: 8 is outside 16..32768"},
        BadCase{{{"sizes", "65536"}}, "outside 16..32768"},
        BadCase{{{"sizes", "64,,128"}}, "has an empty entry"},
        BadCase{{{"sizes", ""}}, "gemm: sizes: is empty"},
        BadCase{{{"sizes", "64,64"}}, "'64' is listed twice"},
        BadCase{{{"dtypes", "fp8"}},
                "gemm: dtypes: 'fp8' is not one of fp32, fp64, bf16, fp16"},
        BadCase{{{"m", "64"}, {"n", "64"}}, "gemm: k: missing: give m, n and k together"},
        BadCase{{{"m", "0"}, {"n", "64"}, {"k", "64"}},
                "gemm: m: 0 is outside 1..1048576"},
        BadCase{{{"m", "64"}, {"n", "1048577"}, {"k", "64"}},
                "gemm: n: 1048577 is outside 1..1048576"},
        BadCase{{{"m", "64"}, {"n", "64"}, {"k", "x"}}, "gemm: k: 'x' is not an integer"},
        BadCase{{{"m", "64"}, {"n", "64"}, {"k", "64"}, {"sizes", "64"}},
                "gemm: sizes: give either sizes (square) or m, n and k, not both"},
        BadCase{{{"transa", "t"}}, "gemm: transa: 't' is not N (as stored) or T"},
        BadCase{{{"transb", "C"}}, "gemm: transb: 'C' is not N"},
        BadCase{{{"threads", "0"}}, "gemm: threads: 0 is outside 1..1024"},
        BadCase{{{"threads", "1025"}}, "outside 1..1024"},
        BadCase{{{"threads", "two"}}, "'two' is not an integer"},
        BadCase{{{"min_seconds", "0"}}, "gemm: min_seconds: 0 is outside"},
        BadCase{{{"min_seconds", "nan"}}, "'nan' is not a number"},
        BadCase{{{"min_seconds", "601"}}, "outside 0.01..600"},
        BadCase{{{"max_runs", "0"}}, "gemm: max_runs: 0 is outside 1..100000"},
        BadCase{{{"warmup_runs", "-1"}}, "gemm: warmup_runs: -1 is outside"},
        BadCase{{{"m", "1048576"}, {"n", "1048576"}, {"k", "1048576"}},
                "gemm: m: m=1048576 n=1048576 k=1048576: A, B and C would hold "
                "3.3e+12 elements, more than the 32768-square size's 3.22e+09"},
        // A list of shapes, each with its transposes.
        BadCase{{{"shapes", ""}}, "gemm: shapes: is empty"},
        BadCase{{{"shapes", "4096x1024"}},
                "gemm: shapes: '4096x1024' is not MxNxK or MxNxK:AB (e.g. "
                "4096x1024x256:TN)"},
        BadCase{{{"shapes", "64x64x64:NN:T"}}, "'64x64x64:NN:T' is not MxNxK"},
        BadCase{{{"shapes", "64x64x0"}}, "gemm: shapes: 0 is outside 1..1048576"},
        BadCase{{{"shapes", "64xfourx64"}}, "gemm: shapes: 'four' is not an integer"},
        BadCase{{{"shapes", "64x64x64:NX"}},
                "gemm: shapes: '64x64x64:NX': 'NX' is not two of N (as stored) "
                "or T (transposed), for A then B"},
        BadCase{{{"shapes", "64x64x64:t"}}, "'t' is not two of N"},
        BadCase{{{"shapes", "64x64x64,64x64x64"}}, "'64x64x64' is listed twice"},
        BadCase{{{"shapes", "64x64x64,64x64x64:NN"}},
                "gemm: shapes: '64x64x64:NN' is the same case as '64x64x64'"},
        BadCase{{{"shapes", "16x16x16,1048576x1048576x16"}},
                "gemm: shapes: '1048576x1048576x16': A, B and C would hold"},
        BadCase{{{"shapes", "64x64x64"}, {"sizes", "64"}},
                "gemm: shapes: give either shapes or sizes, not both"},
        BadCase{{{"shapes", "64x64x64"}, {"k", "64"}}, "give either shapes or k, not both"},
        BadCase{{{"shapes", "64x64x64"}, {"transa", "T"}},
                "give either shapes or transa, not both (transposes go in each "
                "entry: 4096x1024x256:TN)"},
        BadCase{{{"size", "64"}},
                "gemm: unknown parameter 'size' (allowed: dtypes, sizes, m, n, "
                "k, transa, transb, shapes, threads, min_seconds, max_runs, "
                "warmup_runs)"}));

TEST(CpuGemmParamsTest, ShapesWithTheirOwnTransposes) {
  absl::StatusOr<CpuGemmConfig> config = ParseCpuGemmParams(
      {{"shapes", "4096x1024x256, 1024x3000x512:TN,1x1048576x3:NT,16x16x16:TT"}});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->sizes.empty());
  EXPECT_EQ(config->m, 0);
  EXPECT_EQ(config->shapes,
            (std::vector<GemmShape>{{4096, 1024, 256, false, false},
                                    {1024, 3000, 512, true, false},
                                    {1, 1048576, 3, false, true},
                                    {16, 16, 16, true, true}}));
}

TEST(CpuGemmParamsTest, AtMostSixteenShapes) {
  std::string sixteen;
  for (int i = 1; i <= kMaxGemmShapes; ++i) {
    absl::StrAppend(&sixteen, i > 1 ? "," : "", 16 * i, "x64x64");
  }
  EXPECT_TRUE(ParseCpuGemmParams({{"shapes", sixteen}}).ok());
  const absl::Status seventeen =
      ParseCpuGemmParams({{"shapes", sixteen + ",8x8x8"}}).status();
  EXPECT_EQ(seventeen.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(seventeen.message(), "gemm: shapes: 17 entries; at most 16");
}

TEST(CpuGemmParamsTest, OneShapeWithTransposes) {
  absl::StatusOr<CpuGemmConfig> config = ParseCpuGemmParams(
      {{"m", "1"}, {"n", "1048576"}, {"k", "3"}, {"transa", "T"}, {"transb", "N"},
       {"dtypes", "bf16,fp16"}});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->sizes.empty());
  EXPECT_EQ(config->m, 1);
  EXPECT_EQ(config->n, 1048576);
  EXPECT_EQ(config->k, 3);
  EXPECT_TRUE(config->transa);
  EXPECT_FALSE(config->transb);
  EXPECT_EQ(config->dtypes, (std::vector<std::string>{"bf16", "fp16"}));
}

TEST(CpuGemmBenchmarkTest, NameAndProbe) {
  CpuGemmBenchmark gemm;
  EXPECT_EQ(gemm.name(), "gemm");
  EXPECT_TRUE(gemm.Probe().ok());
}

TEST(CpuGemmBenchmarkTest, RegisteredUnderItsName) {
  int found = 0;
  for (const auto& benchmark : MakeAllBenchmarks()) {
    if (benchmark->name() == "gemm") ++found;
  }
  EXPECT_EQ(found, 1);
}

TEST(CpuGemmBenchmarkTest, SmallRealRunGivesOneSamplePerDtype) {
  CpuGemmBenchmark gemm;
  std::vector<double> fractions;
  RunContext context("/tmp", nullptr,
                     [&fractions](double fraction, const std::string&) {
                       fractions.push_back(fraction);
                     });
  absl::StatusOr<std::vector<v1::Sample>> samples = gemm.Run(
      {{"sizes", "64"}, {"min_seconds", "0.01"}, {"threads", "1"}}, context);
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 2u);
  const char* kMetrics[] = {"gemm.cpu.fp32.tflops", "gemm.cpu.fp64.tflops"};
  const char* kDtypes[] = {"fp32", "fp64"};
  for (size_t i = 0; i < 2; ++i) {
    const v1::Sample& s = (*samples)[i];
    EXPECT_EQ(s.metric(), kMetrics[i]);
    EXPECT_EQ(s.unit(), "tflops");
    const std::optional<MetricInfo> info = DeclaredMetric(CpuGemmBenchmark(), s.metric());
    ASSERT_TRUE(info.has_value()) << "not in CpuGemmBenchmark::metrics()";
    EXPECT_EQ(info->unit, s.unit());
    EXPECT_GT(s.value(), 0);
    EXPECT_EQ(s.params().at("dtype"), kDtypes[i]);
    EXPECT_EQ(s.params().at("size"), "64");
    EXPECT_EQ(s.params().at("threads"), "1");
    EXPECT_GE(std::stoi(s.params().at("runs")), 3);
    EXPECT_LE(std::stod(s.params().at("min_tflops")), s.value());
    EXPECT_GE(std::stod(s.params().at("max_tflops")), s.value());
    EXPECT_GE(std::stod(s.params().at("spread")), 0);
    EXPECT_EQ(s.params().at("method"),
              "openblas cblas_?gemm, median of timed runs after warm-up");
    for (const char* key : {"p10_tflops", "p90_tflops", "blas"}) {
      EXPECT_TRUE(s.params().contains(key)) << key;
    }
  }
  ASSERT_FALSE(fractions.empty());
  EXPECT_DOUBLE_EQ(fractions.back(), 1.0);
  for (size_t i = 1; i < fractions.size(); ++i) {
    EXPECT_GE(fractions[i], fractions[i - 1]);
  }
}

// Every transpose combination of a non-square shape runs, is checked
// against the reference entries (a wrong leading dimension fails the
// check or reads out of bounds under ASan), and says its shape.
TEST(CpuGemmBenchmarkTest, NonSquareShapesWithEveryTranspose) {
  CpuGemmBenchmark gemm;
  for (const char* ta : {"N", "T"}) {
    for (const char* tb : {"N", "T"}) {
      absl::StatusOr<std::vector<v1::Sample>> samples = gemm.Run(
          {{"m", "96"}, {"n", "40"}, {"k", "200"}, {"transa", ta},
           {"transb", tb}, {"min_seconds", "0.01"}, {"threads", "1"}},
          QuietContext());
      ASSERT_TRUE(samples.ok()) << ta << tb << ": " << samples.status();
      ASSERT_EQ(samples->size(), 2u);
      for (const v1::Sample& s : *samples) {
        EXPECT_GT(s.value(), 0);
        EXPECT_EQ(s.params().at("m"), "96");
        EXPECT_EQ(s.params().at("n"), "40");
        EXPECT_EQ(s.params().at("k"), "200");
        EXPECT_EQ(s.params().at("transa"), ta);
        EXPECT_EQ(s.params().at("transb"), tb);
        EXPECT_FALSE(s.params().contains("size"));  // not square
      }
    }
  }
}

// One run of a shapes list: a sample per (dtype, shape), dtypes outer,
// each with its own m, n, k and transposes, each checked against the
// reference entries; a square entry reads as the same case from sizes.
TEST(CpuGemmBenchmarkTest, ShapesListGivesOneSamplePerShapeWithItsParams) {
  CpuGemmBenchmark gemm;
  absl::StatusOr<std::vector<v1::Sample>> samples = gemm.Run(
      {{"shapes", "96x40x200,40x96x200:TN,64x64x64:NT"},
       {"dtypes", "fp32,fp64"}, {"min_seconds", "0.01"}, {"threads", "1"}},
      QuietContext());
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 6u);
  struct Want {
    const char *metric, *m, *n, *k, *transa, *transb;
  };
  const Want want[] = {{"gemm.cpu.fp32.tflops", "96", "40", "200", "N", "N"},
                       {"gemm.cpu.fp32.tflops", "40", "96", "200", "T", "N"},
                       {"gemm.cpu.fp32.tflops", "64", "64", "64", "N", "T"},
                       {"gemm.cpu.fp64.tflops", "96", "40", "200", "N", "N"},
                       {"gemm.cpu.fp64.tflops", "40", "96", "200", "T", "N"},
                       {"gemm.cpu.fp64.tflops", "64", "64", "64", "N", "T"}};
  for (size_t i = 0; i < samples->size(); ++i) {
    const v1::Sample& s = (*samples)[i];
    EXPECT_EQ(s.metric(), want[i].metric) << i;
    EXPECT_GT(s.value(), 0) << i;
    EXPECT_EQ(s.params().at("m"), want[i].m) << i;
    EXPECT_EQ(s.params().at("n"), want[i].n) << i;
    EXPECT_EQ(s.params().at("k"), want[i].k) << i;
    EXPECT_EQ(s.params().at("transa"), want[i].transa) << i;
    EXPECT_EQ(s.params().at("transb"), want[i].transb) << i;
    EXPECT_EQ(s.params().contains("size"), i % 3 == 2) << i;  // square only
  }
  EXPECT_EQ((*samples)[2].params().at("size"), "64");
}

// Debian's OpenBLAS 0.3.21 exports neither cblas_sbgemm nor cblas_shgemm;
// asking for them is a skip with the reason, and nothing is measured. Where
// a build has them, the same request must measure instead.
TEST(CpuGemmBenchmarkTest, HalfPrecisionIsSkippedWithTheReasonWhereMissing) {
  absl::StatusOr<const OpenBlasLibrary*> blas = OpenBlas();
  ASSERT_TRUE(blas.ok());
  CpuGemmBenchmark gemm;
  for (const char* dtype : {"bf16", "fp16"}) {
    const bool present = std::string(dtype) == "bf16"
                             ? (*blas)->sbgemm != nullptr
                             : (*blas)->shgemm != nullptr;
    absl::StatusOr<std::vector<v1::Sample>> samples = gemm.Run(
        {{"dtypes", absl::StrCat("fp32,", dtype)}, {"sizes", "64"},
         {"min_seconds", "0.01"}, {"threads", "1"}},
        QuietContext());
    if (present) {
      ASSERT_TRUE(samples.ok()) << samples.status();
      EXPECT_EQ(samples->back().metric(), absl::StrCat("gemm.cpu.", dtype, ".tflops"));
      continue;
    }
    ASSERT_EQ(samples.status().code(), absl::StatusCode::kFailedPrecondition)
        << dtype;
    EXPECT_THAT(samples.status().message(),
                HasSubstr(std::string(dtype) == "bf16" ? "has no cblas_sbgemm"
                                                       : "has no cblas_shgemm"));
    EXPECT_THAT(samples.status().message(), HasSubstr("OpenBLAS 0."));
    EXPECT_THAT(samples.status().message(),
                HasSubstr(absl::StrCat("drop ", dtype, " from dtypes")));
  }
}

TEST(CpuGemmBenchmarkTest, MaxRunsBelowThreeIsHonoured) {
  CpuGemmBenchmark gemm;
  absl::StatusOr<std::vector<v1::Sample>> samples =
      gemm.Run({{"dtypes", "fp64"},
                {"sizes", "16"},
                {"max_runs", "1"},
                {"min_seconds", "0.01"}},
               QuietContext());
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 1u);
  EXPECT_EQ(samples->front().params().at("runs"), "1");
}

TEST(CpuGemmBenchmarkTest, CancelledBeforeStart) {
  CpuGemmBenchmark gemm;
  std::atomic<bool> cancelled{true};
  absl::StatusOr<std::vector<v1::Sample>> samples = gemm.Run(
      {{"sizes", "64"}, {"min_seconds", "0.01"}}, QuietContext(&cancelled));
  EXPECT_EQ(samples.status().code(), absl::StatusCode::kCancelled);
}

TEST(CpuGemmBenchmarkTest, CancelledBetweenRuns) {
  CpuGemmBenchmark gemm;
  std::atomic<bool> cancelled{false};
  // The first progress report (start of the first case) cancels; the run
  // must notice before its next BLAS call, long before 600 s are spent.
  RunContext context(
      "/tmp", &cancelled,
      [&cancelled](double, const std::string&) { cancelled = true; });
  absl::StatusOr<std::vector<v1::Sample>> samples = gemm.Run(
      {{"sizes", "64"}, {"min_seconds", "600"}, {"max_runs", "100000"}},
      context);
  EXPECT_EQ(samples.status().code(), absl::StatusCode::kCancelled);
}

TEST(CpuGemmBenchmarkTest, RunRejectsBadParams) {
  CpuGemmBenchmark gemm;
  EXPECT_EQ(gemm.Run({{"sizes", "40x"}}, QuietContext()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fleetbench::agent
