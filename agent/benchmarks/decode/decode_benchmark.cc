#include "agent/benchmarks/decode/decode_benchmark.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "agent/benchmarks/decode/synthetic_image.h"
#include "agent/benchmarks/decode/turbo_jpeg.h"
#include "agent/benchmarks/param_reader.h"
#include "agent/benchmarks/sample_summary.h"
#include "agent/facts/facts.h"
#include "common/stats.h"
#include "common/units.h"

namespace fleetbench::agent {
namespace {

constexpr absl::string_view kAllowedKeys[] = {
    "sizes",   "quality", "resize",      "modes",
    "threads", "images",  "repetitions", "seconds"};
constexpr absl::string_view kModes[] = {"one_core", "all_cores"};
constexpr int kMinSide = 16;
constexpr int kMaxSide = 8192;
constexpr int kMaxResizeSide = 4096;
// A decoded picture must be this much closer (in PSNR) to the picture that
// was encoded than to another picture of the set (one more made for the
// check when the set has one picture). JPEG drops the per-pixel noise, so
// the absolute PSNR is low (14-32 dB from quality 1 to 90) and varies with
// size; at quality 1 on a 16×16 picture the margin is only ~0.8 dB, hence
// a small one (a decode into the wrong buffer or format has none).
constexpr double kMinPsnrMarginDb = 0.5;
// Decode buffers past this share of memory are refused up front.
constexpr double kMaxMemoryShare = 0.5;
constexpr char kMethod[] =
    "libjpeg-turbo tjDecompress2 to RGB (accurate DCT), then area resize; "
    "synthetic 4:2:0 photos, round robin; median of repetitions";

absl::StatusOr<PictureSize> ParseSize(const ParamReader& in,
                                      const std::string& key,
                                      absl::string_view text, int max_side) {
  const std::vector<std::string> parts = absl::StrSplit(text, 'x');
  if (parts.size() != 2) {
    return in.Error(key, absl::StrCat("'", text,
                                      "' is not WIDTHxHEIGHT (e.g. 1920x1080)"));
  }
  const int min_side = key == "resize" ? 1 : kMinSide;
  absl::StatusOr<int64_t> width = in.IntFrom(key, parts[0], min_side, max_side);
  if (!width.ok()) return width.status();
  absl::StatusOr<int64_t> height = in.IntFrom(key, parts[1], min_side, max_side);
  if (!height.ok()) return height.status();
  return PictureSize{static_cast<int>(*width), static_cast<int>(*height)};
}

double PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return static_cast<double>(pages) * static_cast<double>(page_size);
}

struct Picture {
  std::vector<uint8_t> jpeg;
  int width = 0;
  int height = 0;
};

// One repetition's result over all threads.
struct Tally {
  int64_t images = 0;
  int64_t jpeg_bytes = 0;
  double seconds = 0;
};

// Threads that decode and resize round robin until told to stop. Each owns
// a decoder and its buffers, made once, so the timed loop allocates
// nothing. The coordinator (Run()'s thread) meets them at `start_`, lets
// them work for the window, sets `stop_`, and meets them at `done_`.
class DecodeTeam {
 public:
  DecodeTeam(int threads, const std::vector<Picture>& pictures,
             PictureSize resize)
      : pictures_(pictures),
        resize_(resize),
        lanes_(static_cast<size_t>(threads)),
        start_(threads + 1),
        done_(threads + 1) {
    int max_w = 0, max_h = 0;
    for (const Picture& p : pictures) {
      max_w = std::max(max_w, p.width);
      max_h = std::max(max_h, p.height);
    }
    for (Lane& lane : lanes_) {
      lane.decoder = std::make_unique<JpegDecoder>();
      lane.rgb.resize(static_cast<size_t>(max_w) * max_h * 3);
      if (resize_.width > 0) {
        lane.resized.resize(static_cast<size_t>(resize_.width) *
                            resize_.height * 3);
      }
    }
    for (int i = 0; i < threads; ++i) {
      try {
        workers_.emplace_back([this, i] { Work(i); });
      } catch (const std::system_error&) {
        break;
      }
    }
    for (int i = static_cast<int>(workers_.size()); i < threads; ++i) {
      (void)start_.arrive_and_drop();
      (void)done_.arrive_and_drop();
    }
  }

  ~DecodeTeam() {
    quit_ = true;
    start_.arrive_and_wait();
    for (std::thread& t : workers_) t.join();
  }
  DecodeTeam(const DecodeTeam&) = delete;
  DecodeTeam& operator=(const DecodeTeam&) = delete;

  bool complete() const { return workers_.size() == lanes_.size(); }
  absl::Status DecoderStatus() const {
    for (const Lane& lane : lanes_) {
      if (absl::Status s = lane.decoder->status(); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  // One timed window of `seconds`; CANCELLED when the context was.
  absl::StatusOr<Tally> Run(double seconds, const RunContext& context) {
    stop_ = false;
    start_.arrive_and_wait();
    const auto begin = Clock::now();
    const auto until = begin + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(seconds));
    bool cancelled = false;
    // The window is a length of time, not a wait for another thread.
    while (Clock::now() < until) {
      if (context.cancelled()) {
        cancelled = true;
        break;
      }
      std::this_thread::sleep_until(
          std::min(until, Clock::now() + std::chrono::milliseconds(50)));
    }
    stop_ = true;
    done_.arrive_and_wait();
    if (cancelled) return absl::CancelledError("decode: cancelled");
    Tally tally;
    Clock::time_point last = begin;
    for (const Lane& lane : lanes_) {
      if (!lane.error.ok()) return lane.error;
      tally.images += lane.images;
      tally.jpeg_bytes += lane.jpeg_bytes;
      last = std::max(last, lane.end);
    }
    tally.seconds = std::chrono::duration<double>(last - begin).count();
    return tally;
  }

 private:
  using Clock = std::chrono::steady_clock;
  struct Lane {
    std::unique_ptr<JpegDecoder> decoder;
    std::vector<uint8_t> rgb;
    std::vector<uint8_t> resized;
    std::vector<float> scratch;
    int64_t images = 0;
    int64_t jpeg_bytes = 0;
    Clock::time_point end;
    absl::Status error;
  };

  void Work(int index) {
    Lane& lane = lanes_[static_cast<size_t>(index)];
    // Threads start on different pictures so they do not all read the
    // same compressed bytes at once.
    size_t next = static_cast<size_t>(index) % pictures_.size();
    while (true) {
      start_.arrive_and_wait();
      if (quit_) return;
      lane.images = 0;
      lane.jpeg_bytes = 0;
      lane.error = absl::OkStatus();
      while (!stop_.load(std::memory_order_relaxed)) {
        const Picture& p = pictures_[next];
        next = (next + 1) % pictures_.size();
        lane.error = lane.decoder->Decode(p.jpeg, p.width, p.height,
                                          lane.rgb.data());
        if (!lane.error.ok()) break;
        if (resize_.width > 0) {
          AreaResize(lane.rgb.data(), p.width, p.height, lane.resized.data(),
                     resize_.width, resize_.height, &lane.scratch);
        }
        ++lane.images;
        lane.jpeg_bytes += static_cast<int64_t>(p.jpeg.size());
      }
      lane.end = Clock::now();
      done_.arrive_and_wait();
    }
  }

  const std::vector<Picture>& pictures_;
  const PictureSize resize_;
  std::vector<Lane> lanes_;
  // Written by the coordinator before the barrier the workers pass next.
  bool quit_ = false;
  std::atomic<bool> stop_{false};
  std::barrier<> start_;
  std::barrier<> done_;
  std::vector<std::thread> workers_;
};

// Encodes the pictures of one size and checks that each decodes back to
// itself; the mean bits per pixel and the worst PSNR come back for params.
struct PictureSet {
  std::vector<Picture> pictures;
  double bits_per_pixel = 0;
  double min_psnr_db = 0;
  double mean_jpeg_bytes = 0;
};

absl::StatusOr<PictureSet> MakePictures(PictureSize size,
                                        const DecodeConfig& config) {
  PictureSet set;
  JpegDecoder decoder;
  if (absl::Status s = decoder.status(); !s.ok()) return s;
  double total_bytes = 0;
  set.min_psnr_db = std::numeric_limits<double>::infinity();
  std::vector<uint8_t> rgb(static_cast<size_t>(size.width) * size.height * 3);
  std::vector<RgbImage> originals;
  for (int i = 0; i < config.images; ++i) {
    originals.push_back(SyntheticPhoto(size.width, size.height,
                                       static_cast<uint64_t>(i) + 1));
  }
  // The "other picture" of the check: the next one of the set, or, with a
  // set of one, one more made for the check.
  RgbImage spare;
  if (config.images == 1) {
    spare = SyntheticPhoto(size.width, size.height, 1000003);
  }
  for (int i = 0; i < config.images; ++i) {
    const RgbImage& image = originals[static_cast<size_t>(i)];
    absl::StatusOr<std::vector<uint8_t>> jpeg =
        EncodeJpeg(image, config.quality);
    if (!jpeg.ok()) return jpeg.status();
    Picture p;
    p.jpeg = *std::move(jpeg);
    if (absl::Status s = decoder.Header(p.jpeg, &p.width, &p.height); !s.ok()) {
      return s;
    }
    if (p.width != size.width || p.height != size.height) {
      return absl::InternalError(absl::StrFormat(
          "decode: a %dx%d picture decodes as %dx%d", size.width, size.height,
          p.width, p.height));
    }
    if (absl::Status s = decoder.Decode(p.jpeg, p.width, p.height, rgb.data());
        !s.ok()) {
      return s;
    }
    const double psnr = PsnrDb(rgb.data(), image.pixels.data(),
                               static_cast<int64_t>(rgb.size()));
    const RgbImage& other =
        config.images == 1
            ? spare
            : originals[static_cast<size_t>((i + 1) % config.images)];
    const double psnr_other = PsnrDb(rgb.data(), other.pixels.data(),
                                     static_cast<int64_t>(rgb.size()));
    if (!(psnr >= psnr_other + kMinPsnrMarginDb)) {
      return absl::InternalError(absl::StrFormat(
          "decode: picture %d (%dx%d) decodes with PSNR %.1f dB against the "
          "original and %.1f dB against another picture: the decoder "
          "returned something else",
          i, size.width, size.height, psnr, psnr_other));
    }
    set.min_psnr_db = std::min(set.min_psnr_db, psnr);
    total_bytes += static_cast<double>(p.jpeg.size());
    set.pictures.push_back(std::move(p));
  }
  set.mean_jpeg_bytes = total_bytes / config.images;
  set.bits_per_pixel =
      8 * set.mean_jpeg_bytes / (static_cast<double>(size.width) * size.height);
  return set;
}

std::string SizeText(PictureSize size) {
  return absl::StrCat(size.width, "x", size.height);
}

}  // namespace

int UsableCores(const v1::CpuFacts& cpu, std::string* why) {
  double cores = cpu.logical_cores();
  *why = "logical cores";
  if (cpu.allowed_cores() > 0 && (cores == 0 || cpu.allowed_cores() < cores)) {
    cores = cpu.allowed_cores();
    *why = "allowed-CPU list";
  }
  if (cpu.cgroup_limit_cores() > 0 &&
      (cores == 0 || cpu.cgroup_limit_cores() < cores)) {
    cores = std::ceil(cpu.cgroup_limit_cores());
    *why = absl::StrCat("cgroup CPU limit ",
                        FormatNumber(cpu.cgroup_limit_cores()), " (",
                        cpu.cgroup_limit_source(), "), rounded up");
  }
  if (cores < 1) {
    *why = "no CPU facts; 1";
    return 1;
  }
  return static_cast<int>(std::min(cores, 4096.0));
}

absl::StatusOr<DecodeConfig> ParseDecodeParams(const Params& params) {
  const ParamReader in("decode", params);
  if (absl::Status s = in.CheckKeys(kAllowedKeys); !s.ok()) return s;
  DecodeConfig config;

  absl::StatusOr<std::vector<std::string>> sizes =
      in.List("sizes", "512x512,1920x1080");
  if (!sizes.ok()) return sizes.status();
  for (const std::string& text : *sizes) {
    absl::StatusOr<PictureSize> size = ParseSize(in, "sizes", text, kMaxSide);
    if (!size.ok()) return size.status();
    config.sizes.push_back(*size);
  }

  absl::StatusOr<int64_t> quality = in.Int("quality", 90, 1, 100);
  if (!quality.ok()) return quality.status();
  config.quality = static_cast<int>(*quality);

  const std::string resize = in.Get("resize", "224x224");
  if (resize == "none") {
    config.resize = PictureSize{0, 0};
  } else {
    absl::StatusOr<PictureSize> size =
        ParseSize(in, "resize", resize, kMaxResizeSide);
    if (!size.ok()) {
      return in.Error("resize", absl::StrCat("'", resize,
                                             "' is not WIDTHxHEIGHT with "
                                             "sides 1..4096, nor none"));
    }
    config.resize = *size;
  }

  absl::StatusOr<std::vector<std::string>> modes =
      in.List("modes", "one_core,all_cores", kModes);
  if (!modes.ok()) return modes.status();
  config.modes = *std::move(modes);

  if (in.Has("threads")) {
    absl::StatusOr<int64_t> threads = in.Int("threads", 0, 1, 4096);
    if (!threads.ok()) return threads.status();
    config.threads = static_cast<int>(*threads);
  }
  absl::StatusOr<int64_t> images = in.Int("images", 4, 1, 64);
  if (!images.ok()) return images.status();
  config.images = static_cast<int>(*images);
  absl::StatusOr<int64_t> repetitions = in.Int("repetitions", 5, 1, 1000);
  if (!repetitions.ok()) return repetitions.status();
  config.repetitions = static_cast<int>(*repetitions);
  absl::StatusOr<double> seconds = in.Double("seconds", 0.4, 0.05, 600);
  if (!seconds.ok()) return seconds.status();
  config.seconds = *seconds;
  return config;
}

std::vector<MetricInfo> DecodeBenchmark::metrics() const {
  return {
      {"decode.jpeg.one_core.images_per_s", "images_per_s", kHigherIsBetter,
       "JPEG pictures decoded and resized per second, 1 thread (libjpeg-turbo)"},
      {"decode.jpeg.one_core.input_MBps", "MBps", kHigherIsBetter,
       "compressed JPEG bytes decoded per second, 1 thread"},
      {"decode.jpeg.all_cores.images_per_s", "images_per_s", kHigherIsBetter,
       "JPEG pictures decoded and resized per second, every usable core"},
      {"decode.jpeg.all_cores.input_MBps", "MBps", kHigherIsBetter,
       "compressed JPEG bytes decoded per second, every usable core"},
  };
}

absl::Status DecodeBenchmark::Probe() const {
  JpegDecoder decoder;
  return decoder.status();
}

absl::Status DecodeBenchmark::ValidateParams(const Params& params) const {
  return ParseDecodeParams(params).status();
}

absl::StatusOr<std::vector<v1::Sample>> DecodeBenchmark::Run(
    const Params& params, const RunContext& context) {
  absl::StatusOr<DecodeConfig> config = ParseDecodeParams(params);
  if (!config.ok()) return config.status();

  std::string threads_from = "threads parameter";
  int all_threads = config->threads;
  if (all_threads == 0) {
    const v1::NodeFacts facts = ReadNodeFacts(FactsOptions{});
    all_threads = UsableCores(facts.cpu(), &threads_from);
  }

  const double memory = PhysicalMemoryBytes();
  for (PictureSize size : config->sizes) {
    const double needed = static_cast<double>(all_threads) * size.width *
                          size.height * 3 * 2.5;  // RGB + resize rows
    if (memory > 0 && needed > kMaxMemoryShare * memory) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "decode: %d threads decoding %s pictures need %.1f GiB of buffers; "
          "this node has %.1f GiB (at most %.0f%% is used); lower threads or "
          "sizes",
          all_threads, SizeText(size), needed / kGiB, memory / kGiB,
          kMaxMemoryShare * 100));
    }
  }

  const int cases = static_cast<int>(config->sizes.size() * config->modes.size());
  int case_index = 0;
  std::vector<v1::Sample> samples;
  for (PictureSize size : config->sizes) {
    if (context.cancelled()) return absl::CancelledError("decode: cancelled");
    context.ReportProgress(static_cast<double>(case_index) / cases,
                           absl::StrCat("decode: encoding ", config->images,
                                        " pictures of ", SizeText(size)));
    absl::StatusOr<PictureSet> set = MakePictures(size, *config);
    if (!set.ok()) return set.status();

    for (const std::string& mode : config->modes) {
      const int threads = mode == "one_core" ? 1 : all_threads;
      DecodeTeam team(threads, set->pictures, config->resize);
      if (!team.complete()) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "decode: cannot start ", threads, " threads; lower threads"));
      }
      if (absl::Status s = team.DecoderStatus(); !s.ok()) return s;
      // One untimed window warms caches and the CPU's clock.
      if (absl::StatusOr<Tally> warm = team.Run(
              std::min(config->seconds, 0.2), context);
          !warm.ok()) {
        return warm.status();
      }
      std::vector<double> images_per_s;
      std::vector<double> mbps;
      for (int rep = 0; rep < config->repetitions; ++rep) {
        absl::StatusOr<Tally> tally = team.Run(config->seconds, context);
        if (!tally.ok()) return tally.status();
        const double seconds = std::max(tally->seconds, 1e-9);
        images_per_s.push_back(static_cast<double>(tally->images) / seconds);
        mbps.push_back(static_cast<double>(tally->jpeg_bytes) / seconds / 1e6);
        context.ReportProgress(
            (case_index + static_cast<double>(rep + 1) / config->repetitions) /
                cases,
            absl::StrCat("decode: ", SizeText(size), " ", mode, " repetition ",
                         rep + 1, " of ", config->repetitions));
      }
      const Summary rate = Summarize(images_per_s);
      const Summary input = Summarize(mbps);
      for (const auto& [unit, summary] :
           {std::pair{"images_per_s", rate}, std::pair{"MBps", input}}) {
        v1::Sample& sample = samples.emplace_back();
        const bool is_rate = std::string(unit) == "images_per_s";
        sample.set_metric(absl::StrCat("decode.jpeg.", mode,
                                       is_rate ? ".images_per_s" : ".input_MBps"));
        sample.set_unit(unit);
        sample.set_value(summary.median);
        auto& p = *sample.mutable_params();
        p["size"] = SizeText(size);
        p["quality"] = absl::StrCat(config->quality);
        p["subsampling"] = "4:2:0";
        p["resize"] = config->resize.width > 0 ? SizeText(config->resize) : "none";
        if (config->resize.width > 0) p["resize_method"] = "area";
        p["mode"] = mode;
        p["threads"] = absl::StrCat(threads);
        if (mode == "all_cores") {
          p["threads_from"] = threads_from;
          p["images_per_s_per_thread"] =
              FormatNumber(rate.median / std::max(threads, 1));
        }
        p["images"] = absl::StrCat(config->images);
        p["jpeg_bytes_mean"] = FormatNumber(set->mean_jpeg_bytes);
        p["bits_per_pixel"] = FormatNumber(set->bits_per_pixel);
        p["min_psnr_db"] = FormatNumber(set->min_psnr_db);
        p["seconds"] = FormatNumber(config->seconds);
        AddSummaryParams(summary, unit, &p);
        p["method"] = kMethod;
      }
      ++case_index;
    }
  }
  return samples;
}

}  // namespace fleetbench::agent
