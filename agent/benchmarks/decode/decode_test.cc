#include <atomic>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "agent/benchmarks/decode/decode_benchmark.h"
#include "agent/benchmarks/decode/synthetic_image.h"
#include "agent/benchmarks/decode/turbo_jpeg.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

using ::testing::HasSubstr;

TEST(SyntheticPhotoTest, DeterministicAndSeedDependent) {
  const RgbImage a = SyntheticPhoto(64, 48, 1);
  const RgbImage b = SyntheticPhoto(64, 48, 1);
  const RgbImage c = SyntheticPhoto(64, 48, 2);
  ASSERT_EQ(a.pixels.size(), 64u * 48 * 3);
  EXPECT_EQ(a.pixels, b.pixels);
  EXPECT_NE(a.pixels, c.pixels);
}

TEST(SyntheticPhotoTest, CompressesLikeAPhotoNotLikeAFlatPicture) {
  // Photos at quality 90 take a few bits per pixel; a flat or smooth
  // picture well under one. The benchmark's timing depends on it.
  const RgbImage photo = SyntheticPhoto(512, 512, 3);
  absl::StatusOr<std::vector<uint8_t>> jpeg = EncodeJpeg(photo, 90);
  ASSERT_TRUE(jpeg.ok()) << jpeg.status();
  const double bpp = 8.0 * jpeg->size() / (512.0 * 512.0);
  EXPECT_GT(bpp, 1.5);
  EXPECT_LT(bpp, 6.0);
  RgbImage flat = photo;
  std::fill(flat.pixels.begin(), flat.pixels.end(), 128);
  absl::StatusOr<std::vector<uint8_t>> flat_jpeg = EncodeJpeg(flat, 90);
  ASSERT_TRUE(flat_jpeg.ok());
  EXPECT_LT(8.0 * flat_jpeg->size() / (512.0 * 512.0), 0.5);
}

TEST(AreaResizeTest, AveragesWholeBlocks) {
  // 4×2 → 2×1: each output pixel is the mean of a 2×2 block.
  const std::vector<uint8_t> in = {
      0,  0,  0,  10, 10, 10, 100, 100, 100, 200, 200, 200,  // row 0
      20, 20, 20, 30, 30, 30, 100, 100, 100, 0,   0,   0};   // row 1
  std::vector<uint8_t> out(2 * 1 * 3);
  std::vector<float> scratch;
  AreaResize(in.data(), 4, 2, out.data(), 2, 1, &scratch);
  EXPECT_EQ(out, (std::vector<uint8_t>{15, 15, 15, 100, 100, 100}));
}

TEST(AreaResizeTest, WeighsPartlyCoveredPixels) {
  // 3 pixels → 2: output 0 covers source [0, 1.5): 1×in0 + 0.5×in1.
  const std::vector<uint8_t> in = {0, 0, 0, 90, 90, 90, 180, 180, 180};
  std::vector<uint8_t> out(2 * 3);
  std::vector<float> scratch;
  AreaResize(in.data(), 3, 1, out.data(), 2, 1, &scratch);
  EXPECT_EQ(out[0], 30);   // (0 + 0.5·90) / 1.5
  EXPECT_EQ(out[3], 150);  // (0.5·90 + 180) / 1.5
}

TEST(AreaResizeTest, KeepsAConstantPictureConstant) {
  std::vector<uint8_t> in(1920 * 1080 * 3, 77);
  std::vector<uint8_t> out(224 * 224 * 3);
  std::vector<float> scratch;
  AreaResize(in.data(), 1920, 1080, out.data(), 224, 224, &scratch);
  EXPECT_EQ(std::set<uint8_t>(out.begin(), out.end()), std::set<uint8_t>{77});
}

TEST(TurboJpegTest, RoundTripsAPicture) {
  const RgbImage photo = SyntheticPhoto(320, 200, 5);
  absl::StatusOr<std::vector<uint8_t>> jpeg = EncodeJpeg(photo, 95);
  ASSERT_TRUE(jpeg.ok()) << jpeg.status();
  JpegDecoder decoder;
  ASSERT_TRUE(decoder.status().ok());
  int w = 0, h = 0;
  ASSERT_TRUE(decoder.Header(*jpeg, &w, &h).ok());
  EXPECT_EQ(w, 320);
  EXPECT_EQ(h, 200);
  std::vector<uint8_t> rgb(320 * 200 * 3);
  ASSERT_TRUE(decoder.Decode(*jpeg, w, h, rgb.data()).ok());
  // JPEG drops the sensor noise, so the PSNR is modest; a different
  // picture is far further away.
  EXPECT_GT(PsnrDb(rgb.data(), photo.pixels.data(), rgb.size()), 25);
  const RgbImage other = SyntheticPhoto(320, 200, 6);
  EXPECT_LT(PsnrDb(rgb.data(), other.pixels.data(), rgb.size()), 15);
}

TEST(TurboJpegTest, BrokenBytesAreAnError) {
  JpegDecoder decoder;
  int w = 0, h = 0;
  const std::vector<uint8_t> junk(100, 0x42);
  absl::Status s = decoder.Header(junk, &w, &h);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("decode:"));
}

TEST(DecodeParamsTest, Defaults) {
  absl::StatusOr<DecodeConfig> c = ParseDecodeParams({});
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->sizes.size(), 2u);
  EXPECT_EQ(c->sizes[0].width, 512);
  EXPECT_EQ(c->sizes[1].width, 1920);
  EXPECT_EQ(c->sizes[1].height, 1080);
  EXPECT_EQ(c->quality, 90);
  EXPECT_EQ(c->resize.width, 224);
  EXPECT_EQ(c->modes, (std::vector<std::string>{"one_core", "all_cores"}));
  EXPECT_EQ(c->threads, 0);
  EXPECT_EQ(c->images, 4);
  EXPECT_EQ(c->repetitions, 5);
  EXPECT_DOUBLE_EQ(c->seconds, 0.4);
}

TEST(DecodeParamsTest, AcceptsGoodValues) {
  absl::StatusOr<DecodeConfig> c = ParseDecodeParams(
      {{"sizes", "16x16, 8192x4096"}, {"quality", "1"}, {"resize", "none"},
       {"modes", "all_cores"}, {"threads", "4096"}, {"images", "64"},
       {"repetitions", "1"}, {"seconds", "0.05"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->sizes[1].width, 8192);
  EXPECT_EQ(c->sizes[1].height, 4096);
  EXPECT_EQ(c->resize.width, 0);
  EXPECT_EQ(c->threads, 4096);
}

TEST(DecodeParamsTest, EveryBadValueNamesItsParameter) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"sizes", "512"},        {"sizes", "15x512"},     {"sizes", "512x8193"},
      {"sizes", "axb"},        {"sizes", "512x512,512x512"},
      {"sizes", ""},           {"quality", "0"},        {"quality", "101"},
      {"resize", "0x224"},     {"resize", "224x4097"},  {"resize", "small"},
      {"modes", "gpu"},        {"modes", "one_core,one_core"},
      {"threads", "0"},        {"threads", "4097"},     {"images", "0"},
      {"images", "65"},        {"repetitions", "0"},    {"repetitions", "1001"},
      {"seconds", "0.01"},     {"seconds", "601"},      {"seconds", "nan"},
  };
  for (const auto& [key, value] : bad) {
    absl::StatusOr<DecodeConfig> c = ParseDecodeParams({{key, value}});
    ASSERT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument)
        << key << "=" << value;
    EXPECT_THAT(c.status().message(), HasSubstr("decode: " + key))
        << key << "=" << value;
  }
  absl::StatusOr<DecodeConfig> typo = ParseDecodeParams({{"size", "512x512"}});
  EXPECT_THAT(typo.status().message(), HasSubstr("unknown parameter 'size'"));
}

TEST(UsableCoresTest, TheTightestFactWins) {
  v1::CpuFacts cpu;
  std::string why;
  cpu.set_logical_cores(16);
  EXPECT_EQ(UsableCores(cpu, &why), 16);
  EXPECT_EQ(why, "logical cores");
  cpu.set_allowed_cores(8);
  EXPECT_EQ(UsableCores(cpu, &why), 8);
  EXPECT_EQ(why, "allowed-CPU list");
  cpu.set_cgroup_limit_cores(2.5);
  cpu.set_cgroup_limit_source("/sys/fs/cgroup/cpu.max");
  EXPECT_EQ(UsableCores(cpu, &why), 3);
  EXPECT_THAT(why, HasSubstr("cgroup CPU limit 2.5"));
  cpu.set_cgroup_limit_cores(12);  // looser than the cpuset: cpuset wins
  EXPECT_EQ(UsableCores(cpu, &why), 8);
  EXPECT_EQ(UsableCores(v1::CpuFacts(), &why), 1);
}

TEST(DecodeBenchmarkTest, RunMeasuresEveryCaseWithDeclaredMetrics) {
  DecodeBenchmark benchmark;
  ASSERT_TRUE(benchmark.Probe().ok());
  const Params params = {{"sizes", "64x48,128x96"}, {"images", "2"},
                         {"repetitions", "2"},      {"seconds", "0.05"},
                         {"resize", "32x32"},       {"threads", "2"}};
  ASSERT_TRUE(benchmark.ValidateParams(params).ok());
  RunContext context("/tmp", nullptr, nullptr);
  absl::StatusOr<std::vector<v1::Sample>> samples = benchmark.Run(params, context);
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 8u);  // 2 sizes × 2 modes × 2 metrics
  for (const v1::Sample& s : *samples) {
    std::optional<MetricInfo> info = DeclaredMetric(benchmark, s.metric());
    ASSERT_TRUE(info.has_value()) << s.metric();
    EXPECT_EQ(s.unit(), info->unit);
    EXPECT_GT(s.value(), 0) << s.metric();
    EXPECT_EQ(s.params().at("resize"), "32x32");
    EXPECT_GT(std::stod(s.params().at("min_psnr_db")), 15);
  }
  EXPECT_EQ((*samples)[0].metric(), "decode.jpeg.one_core.images_per_s");
  EXPECT_EQ((*samples)[0].params().at("size"), "64x48");
  EXPECT_EQ((*samples)[0].params().at("threads"), "1");
  EXPECT_EQ((*samples)[2].metric(), "decode.jpeg.all_cores.images_per_s");
  EXPECT_EQ((*samples)[2].params().at("threads"), "2");
  EXPECT_EQ((*samples)[2].params().at("threads_from"), "threads parameter");
  // MB/s of input is images/s times the mean compressed size.
  const double images = (*samples)[0].value();
  const double mbps = (*samples)[1].value();
  const double bytes = std::stod((*samples)[0].params().at("jpeg_bytes_mean"));
  EXPECT_NEAR(mbps, images * bytes / 1e6, 0.02 * mbps);
}

TEST(DecodeBenchmarkTest, DefaultThreadsComeFromTheUsableCores) {
  DecodeBenchmark benchmark;
  RunContext context("/tmp", nullptr, nullptr);
  absl::StatusOr<std::vector<v1::Sample>> samples = benchmark.Run(
      {{"sizes", "32x32"}, {"images", "1"}, {"repetitions", "1"},
       {"seconds", "0.05"}, {"modes", "all_cores"}},
      context);
  ASSERT_TRUE(samples.ok()) << samples.status();
  const std::string from = (*samples)[0].params().at("threads_from");
  EXPECT_NE(from, "threads parameter");
  EXPECT_GE(std::stoi((*samples)[0].params().at("threads")), 1);
}

// The decode check must hold at every quality and size a user may ask for,
// with a set of one picture and of several.
TEST(DecodeBenchmarkTest, CheckHoldsAtTheExtremesOfQualityAndSize) {
  DecodeBenchmark benchmark;
  RunContext context("/tmp", nullptr, nullptr);
  for (const char* quality : {"1", "50", "100"}) {
    for (const char* images : {"1", "3"}) {
      absl::StatusOr<std::vector<v1::Sample>> samples = benchmark.Run(
          {{"sizes", "16x16,33x17,640x480"}, {"quality", quality}, {"images", images},
           {"repetitions", "1"}, {"seconds", "0.05"}, {"modes", "one_core"}},
          context);
      EXPECT_TRUE(samples.ok()) << "quality " << quality << " images " << images
                                << ": " << samples.status();
    }
  }
}

TEST(DecodeBenchmarkTest, CancelStopsTheRun) {
  DecodeBenchmark benchmark;
  std::atomic<bool> cancelled{true};
  RunContext context("/tmp", &cancelled, nullptr);
  absl::StatusOr<std::vector<v1::Sample>> samples =
      benchmark.Run({{"sizes", "32x32"}, {"images", "1"}}, context);
  EXPECT_EQ(samples.status().code(), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace fleetbench::agent
