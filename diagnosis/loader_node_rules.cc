// The data loader's rules: can this node's disk and CPU deliver the samples
// its GPUs train per second? One model (node_rules.h: kSamplesPerSecondPerTflop
// of the measured GPU rate, one file and one JPEG per sample) asked of the
// disk (disk.too_slow_to_feed) and of the CPU's JPEG decode
// (host.decode_too_slow), so a starved node's findings say which of the two
// holds the GPUs back. Both say nothing without a measured GPU rate or
// without the benchmark they judge.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/units.h"
#include "common/workload_params.h"
#include "diagnosis/node_rule_support.h"

namespace fleetbench::diagnosis::node_rules {
namespace {

// The measured GPU rate the loader model scales with: per GPU, the stress
// run's sustained TFLOP/s, else the best bf16 (then fp16) GEMM.
struct GpuRate {
  double tflops = 0;
  int gpus = 0;
  std::string metric;

  // Samples per second all GPUs train, by the model.
  double SamplesPerSecond() const { return tflops * kSamplesPerSecondPerTflop; }
  // "3.5 samples/s per TFLOP/s x 1400 TFLOP/s measured (metric, 2 GPUs)".
  std::string Model() const {
    return absl::StrCat(FormatNumber(kSamplesPerSecondPerTflop),
                        " samples/s per TFLOP/s x ", FormatNumber(tflops),
                        " TFLOP/s measured (", metric, ", ", gpus, " GPU",
                        gpus == 1 ? "" : "s", ")");
  }
  std::string Feeding() const {
    return absl::StrCat("a data loader feeding ", gpus, " GPU",
                        gpus == 1 ? "" : "s", " at the measured rate needs ");
  }
};

GpuRate MeasuredGpuRate(const NodeEvidence& e) {
  for (const char* metric : {"stress.gpu.sustained.tflops",
                             "gemm.gpu.bf16.tflops", "gemm.gpu.fp16.tflops"}) {
    std::map<std::string, double> per_gpu;  // the best sample per GPU
    for (const v1::Sample* s : SamplesOf(e, metric)) {
      std::string key = Param(*s, "gpu_pci_bus_id");
      if (key.empty()) key = Param(*s, "gpu");
      double& best = per_gpu[key];
      best = std::max(best, s->value());
    }
    if (per_gpu.empty()) continue;
    GpuRate rate;
    rate.metric = metric;
    rate.gpus = static_cast<int>(per_gpu.size());
    for (const auto& [key, tflops] : per_gpu) rate.tflops += tflops;
    return rate;
  }
  return {};
}

// The sample of `metric` with the highest value; nullptr when none.
const v1::Sample* BestSample(const NodeEvidence& e, absl::string_view metric) {
  const v1::Sample* best = nullptr;
  for (const v1::Sample* s : SamplesOf(e, metric)) {
    if (best == nullptr || s->value() > best->value()) best = s;
  }
  return best;
}

bool SameParams(const v1::Sample& a, const v1::Sample& b) {
  if (a.params_size() != b.params_size()) return false;
  for (const auto& [key, value] : a.params()) {
    auto it = b.params().find(key);
    if (it == b.params().end() || it->second != value) return false;
  }
  return true;
}

// The `metric` sample of the same pass as `of` (one pass writes all its
// samples with the same params); nullptr when there is none.
const v1::Sample* SamePass(const NodeEvidence& e, absl::string_view metric,
                           const v1::Sample& of) {
  for (const v1::Sample* s : SamplesOf(e, metric)) {
    if (SameParams(*s, of)) return s;
  }
  return nullptr;
}

// Bytes per file of a smallfiles pass: what it made (scratch), else the
// mean of what it read (a dataset); nullopt when neither is known.
std::optional<double> FileBytes(const v1::Sample& s) {
  if (std::optional<double> made = NumberParam(s, "file_bytes");
      made && *made > 0) {
    return made;
  }
  const std::optional<double> bytes = NumberParam(s, "bytes_read");
  const std::optional<double> files = NumberParam(s, "files_read");
  if (bytes && files && *files > 0) return *bytes / *files;
  return std::nullopt;
}

// "128 KiB files" for a scratch pass, "dataset /data/train, mean 240 kB a
// file" for a dataset.
std::string FilesText(const v1::Sample& s) {
  const std::optional<double> bytes = FileBytes(s);
  std::string size = "files of unknown size";
  if (bytes) {
    const int64_t whole = static_cast<int64_t>(*bytes);
    size = Param(s, "source") != "dataset" && whole % 1024 == 0
               ? absl::StrCat(whole / 1024, " KiB files")
               : absl::StrFormat("files of %.3g kB on average", *bytes / 1e3);
  }
  if (Param(s, "source") == "dataset") {
    return absl::StrCat("dataset ", Param(s, "path"), ", ", size);
  }
  return size;
}

// ---- disk.too_slow_to_feed -----------------------------------------------
// A loader opens one file per sample in a shuffled order with several
// workers: smallfiles measures exactly that, so its files/s decides when
// the node ran it. Its files stand for the dataset's samples (a dataset
// folder is the dataset; scratch files are what the user chose to
// resemble it), so the model's 110 kB is not applied to them. The 1 MiB
// sequential read, which flatters a disk for small files, is the fallback.
void SmallFilesTooSlow(const NodeEvidence& e, const RuleInfo& rule,
                       const GpuRate& rate, const v1::Sample& files,
                       std::vector<v1::Finding>* out) {
  const double need = rate.SamplesPerSecond() * kDiskHeadroom;
  if (files.value() >= need) return;
  v1::Finding f = NewFinding(e, rule);
  if (!Param(files, "device").empty()) {
    f.mutable_subject()->set_device(Param(files, "device"));
  }
  const std::string threads = Param(files, "threads");
  f.set_summary(absl::StrCat(
      "small-file reads deliver ", WithUnit(files.value(), "files/s"),
      " (smallfiles, ", FilesText(files), ", ", threads, " threads); ",
      rate.Feeding(), WithUnit(need, "samples/s"), " (one file each)"));
  AddEvidence(&f, "smallfiles.files_per_s", files.value(), need, "per_s",
              absl::StrCat("data-loader model: one file per sample, ",
                           rate.Model()));
  const std::optional<double> file_bytes = FileBytes(files);
  if (const v1::Sample* mbps = SamePass(e, "smallfiles.MBps", files);
      mbps != nullptr && file_bytes) {
    AddEvidence(&f, "smallfiles.MBps", mbps->value(), need * *file_bytes / 1e6,
                "MBps",
                absl::StrFormat("%s files/s of the %.3g kB files read",
                                FormatNumber(need), *file_bytes / 1e3));
  }
  f.add_context(absl::StrCat(
      "smallfiles read ", Param(files, "files_read"), " of ",
      Param(files, "files"), " files in random order with ", threads,
      " threads, ", Param(files, "direct") == "1" ? "O_DIRECT" : "buffered",
      ", from the page cache dropped; filesystem ", Param(files, "filesystem")));
  f.set_effect(
      "a loader reading this dataset layout (one file per sample, shuffled) "
      "cannot deliver what the GPUs train once the page cache is exhausted "
      "(the first epoch, or a dataset larger than RAM): the GPUs wait on I/O");
  f.set_suggestion(
      "stage the dataset in RAM or on local NVMe, give the loader more "
      "workers (smallfiles threads=N measures that), or pack samples into "
      "large shards read sequentially (WebDataset, TFRecord)");
  out->push_back(std::move(f));
}

void SequentialTooSlow(const NodeEvidence& e, const RuleInfo& rule,
                       const GpuRate& rate, const v1::Sample& read,
                       std::vector<v1::Finding>* out) {
  const double need_MBps =
      rate.SamplesPerSecond() * kBytesPerSample * kDiskHeadroom / 1e6;
  if (read.value() >= need_MBps) return;
  v1::Finding f = NewFinding(e, rule);
  if (!Param(read, "device").empty()) {
    f.mutable_subject()->set_device(Param(read, "device"));
  }
  f.set_summary(absl::StrCat("disk reads ", WithUnit(read.value(), "MB/s"),
                             " (disk, sequential 1 MiB); ", rate.Feeding(),
                             WithUnit(need_MBps, "MB/s")));
  AddEvidence(&f, "disk.seq_read.MBps", read.value(), need_MBps, "MBps",
              absl::StrCat("data-loader model: ",
                           FormatNumber(kBytesPerSample / 1e3),
                           " kB/sample x ", rate.Model()));
  f.add_context(
      "judged from sequential reads: no smallfiles samples; a loader's "
      "random small-file reads are slower");
  f.set_effect(
      "an image-style training job reading its dataset from this disk waits "
      "on I/O once the page cache is exhausted (the first epoch, or a "
      "dataset larger than RAM); token datasets need far less");
  f.set_suggestion(
      "stage the dataset in RAM or on local NVMe, use a faster volume, or "
      "pre-pack samples into large shards read sequentially");
  out->push_back(std::move(f));
}

void TooSlowToFeed(const NodeEvidence& e, const RuleInfo& rule,
                   std::vector<v1::Finding>* out) {
  const GpuRate rate = MeasuredGpuRate(e);
  if (rate.gpus == 0) return;
  if (const v1::Sample* files = BestSample(e, "smallfiles.files_per_s")) {
    SmallFilesTooSlow(e, rule, rate, *files, out);
  } else if (const v1::Sample* read = BestSample(e, "disk.seq_read.MBps")) {
    SequentialTooSlow(e, rule, rate, *read, out);
  }
}

// "512x512" -> pixels; nullopt for "none" or anything else.
std::optional<double> Pixels(const std::string& size) {
  std::vector<std::string> sides = absl::StrSplit(size, 'x');
  int width = 0, height = 0;
  if (sides.size() != 2 || !absl::SimpleAtoi(sides[0], &width) ||
      !absl::SimpleAtoi(sides[1], &height) || width <= 0 || height <= 0) {
    return std::nullopt;
  }
  return static_cast<double>(width) * height;
}

// How far a decode case is from the loader's work, smaller is nearer: the
// resize first (decode alone, resize=none, only when nothing else ran),
// then the picture size, each as |log| of the pixel ratio.
std::pair<double, double> DistanceFromLoader(const v1::Sample& s) {
  constexpr double kFar = std::numeric_limits<double>::max();
  const std::optional<double> resize = Pixels(Param(s, "resize"));
  const std::optional<double> picture = Pixels(Param(s, "size"));
  return {resize ? std::abs(std::log(*resize / (kLoaderResizeSide *
                                                kLoaderResizeSide)))
                 : kFar,
          picture ? std::abs(std::log(*picture / kLoaderPicturePixels)) : kFar};
}

// The decode sample of `metric` nearest the loader's work; the faster one
// of equally near cases (a repeated run).
const v1::Sample* NearestDecode(const NodeEvidence& e,
                                absl::string_view metric) {
  const v1::Sample* best = nullptr;
  for (const v1::Sample* s : SamplesOf(e, metric)) {
    if (best == nullptr) {
      best = s;
      continue;
    }
    const auto d = DistanceFromLoader(*s), b = DistanceFromLoader(*best);
    if (d < b || (d == b && s->value() > best->value())) best = s;
  }
  return best;
}

// ---- host.decode_too_slow ------------------------------------------------
// The same loader decodes one JPEG per sample on the CPU and resizes it to
// the network's input. decode's all-cores rate is an upper bound on what
// its workers get (every usable core decoding, nothing else running).
void DecodeTooSlow(const NodeEvidence& e, const RuleInfo& rule,
                   std::vector<v1::Finding>* out) {
  const GpuRate rate = MeasuredGpuRate(e);
  const v1::Sample* all =
      NearestDecode(e, "decode.jpeg.all_cores.images_per_s");
  if (rate.gpus == 0 || all == nullptr) return;
  const double need = rate.SamplesPerSecond();
  if (all->value() >= need) return;
  v1::Finding f = NewFinding(e, rule);
  const std::string resize = Param(*all, "resize");
  const std::string work =
      resize == "none" ? absl::StrCat(Param(*all, "size"), ", decode alone")
                       : absl::StrCat(Param(*all, "size"), " -> ", resize);
  f.set_summary(absl::StrCat(
      "the CPU decodes ", WithUnit(all->value(), "JPEGs/s"), " on ",
      Param(*all, "threads"), " threads (decode, ", work, "); ", rate.Feeding(),
      WithUnit(need, "samples/s"), ": the GPUs wait on JPEG decode"));
  AddEvidence(&f, "decode.jpeg.all_cores.images_per_s", all->value(), need,
              "images_per_s",
              absl::StrCat("data-loader model: one JPEG per sample, ",
                           rate.Model()));
  f.add_context(absl::StrCat(
      "decode: ", Param(*all, "size"), " pictures at quality ",
      Param(*all, "quality"), " (", Param(*all, "jpeg_bytes_mean"),
      " bytes on average), resize ", resize, ", ", Param(*all, "threads"),
      " threads (", Param(*all, "threads_from"), ")"));
  // The same case on one core says how many cores the GPUs would need.
  for (const v1::Sample* one : SamplesOf(e, "decode.jpeg.one_core.images_per_s")) {
    if (Param(*one, "size") != Param(*all, "size") ||
        Param(*one, "resize") != resize || !(one->value() > 0)) {
      continue;
    }
    f.add_context(absl::StrCat(
        "one core decodes ", WithUnit(one->value(), "JPEGs/s"),
        ": the GPUs' rate takes about ", std::ceil(need / one->value()),
        " cores doing nothing else"));
    break;
  }
  f.set_effect(
      "a loader decoding JPEGs on the CPU (PIL, torchvision, OpenCV) cannot "
      "deliver what the GPUs train, even with every usable core decoding and "
      "nothing else running: the GPUs wait on JPEG decode");
  f.set_suggestion(
      "decode on the GPU (NVIDIA DALI, nvJPEG, torchvision.io.decode_jpeg on "
      "cuda), store the dataset pre-resized, or choose an offer with more "
      "vCPUs per GPU");
  out->push_back(std::move(f));
}

}  // namespace

// ---- workload.input_bound -------------------------------------------------
// What the team's own loader did, not the model: a workload's run on this
// node (docs/workloads.md) with its data disk busy nearly all the time while
// its processes left most cores idle was waiting on its input. Each
// workload sample names its workload in its metric (workload.NAME.X) and the
// disk in `device`.
void InputBound(const NodeEvidence& e, const RuleInfo& rule, std::vector<v1::Finding>* out) {
  std::string limited_by;
  const double cores = UsableCores(e.facts.cpu(), &limited_by);
  if (cores <= 0) return;
  for (const v1::Sample& busy : e.samples) {
    const absl::string_view metric = busy.metric();
    if (!absl::StartsWith(metric, kWorkloadMetricPrefix) ||
        !absl::EndsWith(metric, ".disk_busy_pct")) {
      continue;
    }
    if (busy.value() < kInputBoundBusyPct) continue;
    const std::string workload(metric.substr(0, metric.size() - strlen(".disk_busy_pct")));
    const std::vector<const v1::Sample*> cpu = SamplesOf(e, workload + ".cpu_cores");
    if (cpu.empty()) continue;  // without its CPU, input-bound cannot be told from busy
    const double used = cpu.back()->value();
    if (used >= kInputBoundCpuShare * cores) continue;
    const std::string device = Param(busy, "device");
    double read_MBps = -1;
    for (const v1::Sample* r : SamplesOf(e, workload + ".disk_read_MBps")) {
      if (Param(*r, "device") == device) read_MBps = r->value();
    }
    const std::string name(absl::StripPrefix(workload, kWorkloadMetricPrefix));
    v1::Finding f = NewFinding(e, rule);
    if (!device.empty()) f.mutable_subject()->set_device(device);
    f.set_summary(absl::StrCat(
        "workload ", name, " ran with its data disk", device.empty() ? "" : " " + device, " ",
        FormatNumber(busy.value()), "% busy",
        read_MBps >= 0 ? absl::StrCat(" reading ", WithUnit(read_MBps, "MB/s")) : "",
        " while its processes kept ", FormatNumber(used), " of ", FormatNumber(cores),
        " usable cores busy: input-bound"));
    AddEvidence(&f, absl::StrCat(workload, ".disk_busy_pct"), busy.value(), kInputBoundBusyPct,
                "%", "block device counters over the workload's run (io_ticks)");
    AddEvidence(&f, absl::StrCat(workload, ".cpu_cores"), used, kInputBoundCpuShare * cores,
                "cores",
                absl::StrCat("its processes' CPU time over wall; ", FormatNumber(cores),
                             " usable cores",
                             limited_by.empty() ? "" : absl::StrCat(" (", limited_by, ")")));
    f.set_effect(
        "the workload's rate measures this disk, not the node's CPUs or GPUs: a faster "
        "instance of the same disk would not train faster");
    f.set_suggestion(
        "put the dataset on local NVMe or in memory, pack small files into shards "
        "(WebDataset, TFRecord), or add loader workers if the disk has headroom at a deeper "
        "queue");
    out->push_back(std::move(f));
  }
}

const std::vector<NodeRule>& LoaderNodeRules() {
  static const std::vector<NodeRule>* rules = new std::vector<NodeRule>{
      {{"disk.too_slow_to_feed", v1::SEVERITY_WARNING,
        "data-loader model (one file or 110 kB per sample, 3.5 samples/s per "
        "measured TFLOP/s)",
        "smallfiles files/s < the samples/s the GPUs train; without "
        "smallfiles, sequential read < 110 kB x those samples/s"},
       TooSlowToFeed},
      {{"host.decode_too_slow", v1::SEVERITY_WARNING,
        "data-loader model (one JPEG per sample, 3.5 samples/s per measured "
        "TFLOP/s)",
        "all-core JPEG decode+resize (the case nearest 500x375 -> 224x224) < "
        "the samples/s the GPUs train"},
       DecodeTooSlow},
      {{"workload.input_bound", v1::SEVERITY_WARNING,
        "the workload's own run: block device counters and its processes' CPU time",
        "its data disk busy >= 90% of the run while its processes used < 50% of the usable "
        "cores"},
       InputBound},
  };
  return *rules;
}

}  // namespace fleetbench::diagnosis::node_rules
