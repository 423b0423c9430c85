// The data loader's rules (disk.too_slow_to_feed, host.decode_too_slow) on
// nodes whose GPU rate comes from samples, as a stress run reports it; and
// workload.input_bound on a workload's own run.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "diagnosis/node_rules.h"
#include "diagnosis/rules_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::diagnosis {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using ParamMap = std::map<std::string, std::string>;

// `cores` logical cores, `gpus` H100s with an RDMA NIC; no GPU samples.
NodeEvidence Node(int gpus, int cores = 64) {
  NodeEvidence e;
  e.node = "gpu-1";
  e.facts.mutable_cpu()->set_logical_cores(cores);
  e.facts.set_scratch_filesystem("ext4");
  e.facts.add_rdma_devices("mlx5_0");
  for (int i = 0; i < gpus; ++i) {
    v1::GpuFacts* g = e.facts.add_gpus();
    g->set_index(i);
    g->set_name("NVIDIA H100 80GB HBM3");
    g->set_pci_bus_id(absl::StrCat("00000000:", 10 + i, ":00.0"));
  }
  if (gpus == 0) e.facts.set_gpu_unavailable_reason("libnvidia-ml.so.1: cannot open");
  return e;
}

v1::Sample Sample(const std::string& metric, double value, ParamMap params = {}) {
  v1::Sample s;
  s.set_benchmark(metric.substr(0, metric.find('.')));
  s.set_metric(metric);
  s.set_value(value);
  for (const auto& [k, v] : params) (*s.mutable_params())[k] = v;
  return s;
}

// `gpus` GPUs sustaining 700 TFLOP/s each in a stress run: 2450
// samples/s per GPU by the model.
NodeEvidence StressedNode(int gpus, int cores = 64) {
  NodeEvidence e = Node(gpus, cores);
  for (int gpu = 0; gpu < gpus; ++gpu) {
    e.samples.push_back(
        Sample("stress.gpu.sustained.tflops", 700, {{"gpu", std::to_string(gpu)}}));
  }
  return e;
}

// One smallfiles read pass as the plugin writes it: files/s and MB/s with
// the same params. A scratch pass of 20,000 files of `file_bytes`.
void AddSmallFilesPass(NodeEvidence* e, double files_per_s, int64_t file_bytes = 128 * 1024,
                       ParamMap extra = {}) {
  ParamMap p = {{"source", "scratch"},
                {"files", "20000"},
                {"file_bytes", absl::StrCat(file_bytes)},
                {"threads", "8"},
                {"direct", "0"},
                {"files_read", "20000"},
                {"bytes_read", absl::StrCat(20000 * file_bytes)},
                {"read_seconds", absl::StrCat(20000 / files_per_s)},
                {"filesystem", "ext4"},
                {"device", "nvme0n1"}};
  for (const auto& [k, v] : extra) {
    if (v.empty()) {
      p.erase(k);
    } else {
      p[k] = v;
    }
  }
  e->samples.push_back(Sample("smallfiles.files_per_s", files_per_s, p));
  e->samples.push_back(Sample("smallfiles.MBps", files_per_s * file_bytes / 1e6, p));
}

v1::Sample Decode(const std::string& mode, double images_per_s, const std::string& size,
                  const std::string& resize = "224x224") {
  return Sample(absl::StrCat("decode.jpeg.", mode, ".images_per_s"), images_per_s,
                {{"size", size},
                 {"resize", resize},
                 {"quality", "90"},
                 {"jpeg_bytes_mean", "70000"},
                 {"mode", mode},
                 {"threads", mode == "one_core" ? "1" : "64"},
                 {"threads_from", "allowed-CPU list (64)"}});
}

TEST(LoaderNodeRulesTest, SequentialReadWhenSmallFilesDidNotRun) {
  NodeEvidence e = StressedNode(2);
  // 1400 TFLOP/s x 3.5 samples/s x 110 kB = 539 MB/s.
  e.samples.push_back(Sample("disk.seq_read.MBps", 400, {{"device", "sdb"}}));
  const v1::Finding f = Only(DiagnoseNode(e));
  EXPECT_EQ(f.code(), "disk.too_slow_to_feed");
  EXPECT_EQ(f.severity(), v1::SEVERITY_WARNING);
  EXPECT_EQ(f.subject().device(), "sdb");
  EXPECT_EQ(f.summary(),
            "disk reads 400 MB/s (disk, sequential 1 MiB); a data loader feeding 2 GPUs at the "
            "measured rate needs 539 MB/s");
  ASSERT_EQ(f.evidence_size(), 1);
  EXPECT_EQ(f.evidence(0).name(), "disk.seq_read.MBps");
  EXPECT_EQ(f.evidence(0).measured(), 400);
  EXPECT_NEAR(f.evidence(0).expected(), 1400 * kSamplesPerSecondPerTflop * kBytesPerSample / 1e6,
              1e-6);
  EXPECT_THAT(f.evidence(0).expectation_source(),
              HasSubstr("110 kB/sample x 3.5 samples/s per TFLOP/s x 1400 TFLOP/s measured "
                        "(stress.gpu.sustained.tflops, 2 GPUs)"));
  EXPECT_THAT(f.context(), ElementsAre(HasSubstr("no smallfiles samples")));

  // GEMM when there is no stress run; fast enough disks say nothing.
  NodeEvidence gemm = Node(1);
  gemm.samples.push_back(Sample("gemm.gpu.bf16.tflops", 700, {{"gpu", "0"}}));
  gemm.samples.push_back(Sample("disk.seq_read.MBps", 300));
  EXPECT_THAT(Codes(DiagnoseNode(gemm)), IsEmpty());  // needs 270 MB/s
  gemm.samples.back().set_value(200);
  EXPECT_THAT(Codes(DiagnoseNode(gemm)), ElementsAre("disk.too_slow_to_feed"));
}

// A loader's shuffled small-file reads, not 1 MiB sequential ones, decide
// when smallfiles ran: a disk that streams fast can still be too slow, and
// one that streams slowly can be fast enough.
TEST(LoaderNodeRulesTest, SmallFilesDecideBeforeSequentialRead) {
  NodeEvidence e = StressedNode(2);  // needs 4900 samples/s
  e.samples.push_back(Sample("disk.seq_read.MBps", 2500, {{"device", "nvme0n1"}}));
  AddSmallFilesPass(&e, 800);
  const v1::Finding f = Only(DiagnoseNode(e));
  EXPECT_EQ(f.code(), "disk.too_slow_to_feed");
  EXPECT_EQ(f.subject().device(), "nvme0n1");
  EXPECT_EQ(f.summary(),
            "small-file reads deliver 800 files/s (smallfiles, 128 KiB files, 8 threads); a data "
            "loader feeding 2 GPUs at the measured rate needs 4900 samples/s (one file each)");
  ASSERT_EQ(f.evidence_size(), 2);
  EXPECT_EQ(f.evidence(0).name(), "smallfiles.files_per_s");
  EXPECT_EQ(f.evidence(0).measured(), 800);
  EXPECT_NEAR(f.evidence(0).expected(), 1400 * kSamplesPerSecondPerTflop * kDiskHeadroom, 1e-9);
  EXPECT_EQ(f.evidence(0).unit(), "per_s");
  EXPECT_EQ(f.evidence(0).expectation_source(),
            "data-loader model: one file per sample, 3.5 samples/s per TFLOP/s x 1400 TFLOP/s "
            "measured (stress.gpu.sustained.tflops, 2 GPUs)");
  // The bytes those files/s are at the size read.
  EXPECT_EQ(f.evidence(1).name(), "smallfiles.MBps");
  EXPECT_NEAR(f.evidence(1).measured(), 800 * 131072 / 1e6, 1e-9);
  EXPECT_NEAR(f.evidence(1).expected(), 4900 * 131072 / 1e6, 1e-9);
  EXPECT_EQ(f.evidence(1).expectation_source(), "4900 files/s of the 131 kB files read");
  EXPECT_THAT(f.context(), ElementsAre("smallfiles read 20000 of 20000 files in random order "
                                       "with 8 threads, buffered, from the page cache dropped; "
                                       "filesystem ext4"));

  // Sequential reads too slow for the model's 110 kB samples, small-file
  // reads fast enough: smallfiles decides, nothing to say.
  NodeEvidence fed = StressedNode(2);
  fed.samples.push_back(Sample("disk.seq_read.MBps", 200));
  AddSmallFilesPass(&fed, 6000);
  EXPECT_THAT(Codes(DiagnoseNode(fed)), IsEmpty());
  // Of two passes the faster one counts (a loader would use the better
  // setting): adding a slow one changes nothing.
  AddSmallFilesPass(&fed, 800, 128 * 1024, {{"threads", "1"}});
  EXPECT_THAT(Codes(DiagnoseNode(fed)), IsEmpty());
}

TEST(LoaderNodeRulesTest, SmallFilesFromADatasetSayWhichFolderAndSize) {
  NodeEvidence e = StressedNode(1);  // needs 2450 samples/s
  AddSmallFilesPass(&e, 1000, 240000,
                    {{"source", "dataset"}, {"path", "/data/train"}, {"file_bytes", ""}});
  const v1::Finding f = Only(DiagnoseNode(e));
  EXPECT_EQ(f.code(), "disk.too_slow_to_feed");
  EXPECT_EQ(f.summary(),
            "small-file reads deliver 1000 files/s (smallfiles, dataset /data/train, files of "
            "240 kB on average, 8 threads); a data loader feeding 1 GPU at the measured rate "
            "needs 2450 samples/s (one file each)");
  ASSERT_EQ(f.evidence_size(), 2);
  EXPECT_NEAR(f.evidence(1).expected(), 2450 * 0.24, 1e-9);
}

TEST(LoaderNodeRulesTest, DecodeTooSlowForTheGpus) {
  NodeEvidence e = StressedNode(8);  // 5600 TFLOP/s: 19600 samples/s
  // The case nearest a 500x375 photo resized to 224x224 is 512x512 ->
  // 224x224, not the faster 256x256 nor decode alone.
  e.samples.push_back(Decode("all_cores", 40000, "256x256"));
  e.samples.push_back(Decode("all_cores", 9000, "512x512"));
  e.samples.push_back(Decode("all_cores", 2000, "1920x1080"));
  e.samples.push_back(Decode("all_cores", 30000, "512x512", "none"));
  e.samples.push_back(Decode("one_core", 1200, "256x256"));
  e.samples.push_back(Decode("one_core", 300, "512x512"));
  const v1::Finding f = Only(DiagnoseNode(e));
  EXPECT_EQ(f.code(), "host.decode_too_slow");
  EXPECT_EQ(f.severity(), v1::SEVERITY_WARNING);
  EXPECT_EQ(f.summary(),
            "the CPU decodes 9000 JPEGs/s on 64 threads (decode, 512x512 -> 224x224); a data "
            "loader feeding 8 GPUs at the measured rate needs 19600 samples/s: the GPUs wait on "
            "JPEG decode");
  ASSERT_EQ(f.evidence_size(), 1);
  EXPECT_EQ(f.evidence(0).name(), "decode.jpeg.all_cores.images_per_s");
  EXPECT_EQ(f.evidence(0).measured(), 9000);
  EXPECT_NEAR(f.evidence(0).expected(), 5600 * kSamplesPerSecondPerTflop, 1e-9);
  EXPECT_EQ(f.evidence(0).unit(), "images_per_s");
  EXPECT_THAT(f.evidence(0).expectation_source(),
              HasSubstr("one JPEG per sample, 3.5 samples/s per TFLOP/s x 5600 TFLOP/s"));
  EXPECT_THAT(f.context(),
              ElementsAre("decode: 512x512 pictures at quality 90 (70000 bytes on average), "
                          "resize 224x224, 64 threads (allowed-CPU list (64))",
                          "one core decodes 300 JPEGs/s: the GPUs' rate takes about 66 cores "
                          "doing nothing else"));
  EXPECT_THAT(f.suggestion(), HasSubstr("DALI"));

  // Fast enough at the loader's case: quiet, whatever the 4K-class case says.
  e.samples[9].set_value(25000);  // the all-cores 512x512 -> 224x224
  ASSERT_EQ(e.samples[9].params().at("size"), "512x512");
  EXPECT_THAT(Codes(DiagnoseNode(e)), IsEmpty());
}

TEST(LoaderNodeRulesTest, DecodeAloneCountsOnlyWhenNothingElseRan) {
  NodeEvidence e = StressedNode(8);
  e.samples.push_back(Decode("all_cores", 15000, "512x512", "none"));
  const v1::Finding f = Only(DiagnoseNode(e));
  EXPECT_EQ(f.code(), "host.decode_too_slow");
  EXPECT_THAT(f.summary(), HasSubstr("(decode, 512x512, decode alone)"));
}

// Without a measured GPU rate (a CPU node, or GPUs that ran nothing) or
// without the benchmark a rule reads, the rules say nothing.
TEST(LoaderNodeRulesTest, QuietWithoutGpuRateOrInputs) {
  for (int gpus : {0, 8}) {
    NodeEvidence e = Node(gpus);
    e.samples.push_back(Sample("disk.seq_read.MBps", 10));
    AddSmallFilesPass(&e, 5);
    e.samples.push_back(Decode("all_cores", 3, "512x512"));
    EXPECT_THAT(Codes(DiagnoseNode(e)), IsEmpty()) << gpus << " GPUs";
  }
  EXPECT_THAT(Codes(DiagnoseNode(StressedNode(8))), IsEmpty());
}

TEST(LoaderNodeRulesTest, FedGpuNodeHasNoFindings) {
  NodeEvidence e = StressedNode(8);  // 19600 samples/s, 2156 MB/s
  e.samples.push_back(Sample("disk.seq_read.MBps", 6000));
  AddSmallFilesPass(&e, 30000);
  e.samples.push_back(Decode("all_cores", 25000, "512x512"));
  e.samples.push_back(Decode("one_core", 400, "512x512"));
  EXPECT_THAT(Codes(DiagnoseNode(e)), IsEmpty());
}

// A workload's run as the plugin reports it: its processes' CPU and, for
// its data disk, the read rate and busy share.
void AddWorkloadRun(NodeEvidence* e, const std::string& name, double cpu_cores,
                    double busy_pct, double read_MBps) {
  const std::string prefix = "workload." + name;
  e->samples.push_back(Sample(prefix + ".cpu_cores", cpu_cores, {{"work_unit", "images"}}));
  e->samples.push_back(Sample(prefix + ".disk_read_MBps", read_MBps, {{"device", "vdb"}}));
  e->samples.push_back(Sample(prefix + ".disk_busy_pct", busy_pct, {{"device", "vdb"}}));
}

TEST(LoaderNodeRulesTest, AWorkloadWaitingOnItsDiskIsInputBound) {
  NodeEvidence starved = Node(0, 16);
  AddWorkloadRun(&starved, "dataloader_epoch", 1.5, 99, 80);
  const v1::Finding f = Only(DiagnoseNode(starved));
  EXPECT_EQ(f.code(), "workload.input_bound");
  EXPECT_EQ(f.subject().device(), "vdb");
  EXPECT_THAT(f.summary(), HasSubstr("workload dataloader_epoch ran with its data disk vdb 99% "
                                     "busy reading 80 MB/s"));
  EXPECT_THAT(f.summary(), HasSubstr("1.5 of 16 usable cores"));

  // Busy disk, busy CPUs: the CPUs are working too, so no.
  NodeEvidence working = Node(0, 16);
  AddWorkloadRun(&working, "dataloader_epoch", 12, 99, 80);
  EXPECT_THAT(Codes(DiagnoseNode(working)), IsEmpty());
  // Idle CPUs, idle disk: something else (the GPU, a lock), not the input.
  NodeEvidence idle = Node(0, 16);
  AddWorkloadRun(&idle, "dataloader_epoch", 1.5, 40, 80);
  EXPECT_THAT(Codes(DiagnoseNode(idle)), IsEmpty());
  // A cgroup limit of 2 cores: 1.5 cores is most of what it may use.
  NodeEvidence limited = Node(0, 16);
  limited.facts.mutable_cpu()->set_cgroup_limit_cores(2);
  AddWorkloadRun(&limited, "dataloader_epoch", 1.5, 99, 80);
  EXPECT_THAT(Codes(DiagnoseNode(limited)), IsEmpty());
}

}  // namespace
}  // namespace fleetbench::diagnosis
