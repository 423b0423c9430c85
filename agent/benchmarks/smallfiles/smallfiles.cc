#include "agent/benchmarks/smallfiles/smallfiles.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/benchmarks/disk_common/disk_math.h"
#include "agent/benchmarks/disk_common/scratch_path.h"
#include "agent/benchmarks/param_reader.h"
#include "agent/benchmarks/smallfiles/smallfiles_paths.h"
#include "agent/facts/facts.h"
#include "common/units.h"

namespace fleetbench::agent {
namespace {

using Clock = std::chrono::steady_clock;

constexpr absl::string_view kAllowedKeys[] = {
    "files", "file_kib", "threads", "path", "direct", "runtime_seconds"};
constexpr int64_t kMaxFiles = 10'000'000;
constexpr int64_t kMaxFileKib = 64 * 1024;
constexpr size_t kAlignment = 4096;
// The readdir test lists the folder for at least this long.
constexpr double kReaddirSeconds = 0.2;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

uint64_t RandomSeed() {
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<char[], FreeDeleter>;

Buffer AlignedBuffer(size_t bytes) {
  const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  return Buffer(static_cast<char*>(std::aligned_alloc(kAlignment, rounded)));
}

// A closing file descriptor.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      if (fd_ >= 0) close(fd_);
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// Runs fn(thread, i) for i in [0, n) on `threads` threads (0..threads-1) that take the next i from
// one shared counter, until all are done, fn fails, or stop() turns true
// (checked before each i). The first error, or OK.
absl::Status ParallelFor(int threads, int64_t n,
                         const std::function<absl::Status(int, int64_t)>& fn,
                         const std::function<bool()>& stop) {
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  absl::Status first;
  auto worker = [&](int thread) {
    while (!failed.load(std::memory_order_relaxed) && !stop()) {
      const int64_t i = next.fetch_add(1);
      if (i >= n) return;
      absl::Status s = fn(thread, i);
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (first.ok()) first = std::move(s);
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  try {
    for (int t = 0; t < threads; ++t) pool.emplace_back(worker, t);
  } catch (const std::system_error& e) {
    failed = true;
    for (std::thread& t : pool) t.join();
    return absl::ResourceExhaustedError(
        absl::StrCat("smallfiles: cannot start a thread: ", e.what()));
  }
  for (std::thread& t : pool) t.join();
  return first;
}

// The folder a scratch run makes, locked while it lives (so that a sweep by
// a later run can tell it from a killed run's); destroying it removes the
// files it made and the folder.
class MadeFolder {
 public:
  static absl::StatusOr<std::unique_ptr<MadeFolder>> Create(
      const ScratchDir& scratch) {
    const std::string name = RandomSmallFilesDirName();
    if (mkdirat(scratch.fd(), name.c_str(), 0700) != 0) {
      return absl::ErrnoToStatus(
          errno, absl::StrCat("smallfiles: mkdir ", scratch.Join(name)));
    }
    const int fd = openat(scratch.fd(), name.c_str(),
                          O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      const int e = errno;
      unlinkat(scratch.fd(), name.c_str(), AT_REMOVEDIR);
      return absl::ErrnoToStatus(e, "smallfiles: open the new folder");
    }
    auto folder = std::unique_ptr<MadeFolder>(
        new MadeFolder(scratch.fd(), fd, name, scratch.Join(name)));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      return absl::ErrnoToStatus(errno, "smallfiles: lock the new folder");
    }
    return folder;
  }
  ~MadeFolder() {
    for (int64_t i = 0; i < made_; ++i) {
      unlinkat(fd_, SmallFileName(i).c_str(), 0);
    }
    close(fd_);
    unlinkat(scratch_fd_, name_.c_str(), AT_REMOVEDIR);
  }
  MadeFolder(const MadeFolder&) = delete;
  MadeFolder& operator=(const MadeFolder&) = delete;

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  // Files 0..made-1 may exist and are removed at the end.
  void set_made(int64_t made) { made_ = made; }

 private:
  MadeFolder(int scratch_fd, int fd, std::string name, std::string path)
      : scratch_fd_(scratch_fd),
        fd_(fd),
        name_(std::move(name)),
        path_(std::move(path)) {}
  int scratch_fd_;
  int fd_;
  std::string name_;
  std::string path_;
  int64_t made_ = 0;
};

// Folders of earlier runs that no live process holds locked: removed with
// the files in them. Nothing else is touched; returns how many.
absl::StatusOr<int> RemoveStaleFolders(const ScratchDir& scratch) {
  const int dup_fd = fcntl(scratch.fd(), F_DUPFD_CLOEXEC, 0);
  if (dup_fd < 0) return absl::ErrnoToStatus(errno, "smallfiles: dup");
  DIR* dir = fdopendir(dup_fd);
  if (dir == nullptr) {
    close(dup_fd);
    return absl::ErrnoToStatus(errno, "smallfiles: list the scratch folder");
  }
  std::vector<std::string> stale;
  while (dirent* e = readdir(dir)) {
    if (IsSmallFilesDirName(e->d_name)) stale.push_back(e->d_name);
  }
  closedir(dir);
  int removed = 0;
  for (const std::string& name : stale) {
    Fd fd(openat(scratch.fd(), name.c_str(),
                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (fd.get() < 0 || flock(fd.get(), LOCK_EX | LOCK_NB) != 0) continue;
    const int list_fd = fcntl(fd.get(), F_DUPFD_CLOEXEC, 0);
    DIR* inner = list_fd >= 0 ? fdopendir(list_fd) : nullptr;
    if (inner == nullptr) {
      if (list_fd >= 0) close(list_fd);
      continue;
    }
    std::vector<std::string> files;
    while (dirent* e = readdir(inner)) {
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
        files.push_back(e->d_name);
      }
    }
    closedir(inner);
    // unlinkat without AT_REMOVEDIR never follows a symlink.
    for (const std::string& f : files) unlinkat(fd.get(), f.c_str(), 0);
    if (unlinkat(scratch.fd(), name.c_str(), AT_REMOVEDIR) == 0) ++removed;
  }
  return removed;
}

// Regular files directly in the folder (symlinks and folders skipped).
absl::StatusOr<std::vector<std::string>> ListRegularFiles(int dir_fd) {
  const int dup_fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
  if (dup_fd < 0) return absl::ErrnoToStatus(errno, "smallfiles: dup");
  DIR* dir = fdopendir(dup_fd);
  if (dir == nullptr) {
    close(dup_fd);
    return absl::ErrnoToStatus(errno, "smallfiles: list the folder");
  }
  std::vector<std::string> names;
  while (dirent* e = readdir(dir)) {
    if (e->d_type == DT_REG) {
      names.push_back(e->d_name);
    } else if (e->d_type == DT_UNKNOWN) {
      struct stat st;
      if (fstatat(dir_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISREG(st.st_mode)) {
        names.push_back(e->d_name);
      }
    }
  }
  closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

// Creates files 0..n-1 of `bytes` random bytes each (fresh data in every
// file: storage that deduplicates must not see copies).
absl::Status MakeFiles(MadeFolder& folder, int64_t n, int64_t bytes,
                       int threads, const RunContext& context) {
  std::atomic<int64_t> done{0};
  folder.set_made(n);  // whatever exists of them is removed at the end
  const Clock::time_point start = Clock::now();
  std::atomic<int64_t> last_report_ms{0};
  std::vector<std::vector<uint64_t>> buffers(static_cast<size_t>(threads));
  std::vector<uint64_t> seeds(static_cast<size_t>(threads));
  for (uint64_t& seed : seeds) seed = RandomSeed();
  return ParallelFor(
      threads, n,
      [&](int thread, int64_t i) -> absl::Status {
        std::vector<uint64_t>& data = buffers[static_cast<size_t>(thread)];
        uint64_t& state = seeds[static_cast<size_t>(thread)];
        data.resize(static_cast<size_t>((bytes + 7) / 8));
        for (uint64_t& word : data) {
          uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
          z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
          z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
          word = z ^ (z >> 31);
        }
        const std::string name = SmallFileName(i);
        Fd fd(openat(folder.fd(), name.c_str(),
                     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                     0600));
        if (fd.get() < 0) {
          return absl::ErrnoToStatus(
              errno, absl::StrCat("smallfiles: create ", folder.path(), "/", name));
        }
        const char* p = reinterpret_cast<const char*>(data.data());
        int64_t left = bytes;
        while (left > 0) {
          const ssize_t w = write(fd.get(), p, static_cast<size_t>(left));
          if (w < 0 && errno == EINTR) continue;
          if (w <= 0) {
            if (w < 0 && errno == ENOSPC) {
              return absl::ResourceExhaustedError(
                  "smallfiles: no space left in the scratch folder; lower files "
                  "or file_kib");
            }
            return absl::ErrnoToStatus(errno, "smallfiles: write");
          }
          p += w;
          left -= w;
        }
        const int64_t made = ++done;
        const int64_t ms = static_cast<int64_t>(SecondsSince(start) * 1000);
        int64_t last = last_report_ms.load();
        if (ms - last >= 1000 && last_report_ms.compare_exchange_strong(last, ms)) {
          context.ReportProgress(0.3 * static_cast<double>(made) / static_cast<double>(n),
                                 absl::StrCat("smallfiles: made ", made, " of ", n, " files"));
        }
        return absl::OkStatus();
      },
      [&context] { return context.cancelled(); });
}

// posix_fadvise(DONTNEED) on each file: clean pages leave the page cache.
absl::Status DropFromCache(int dir_fd, const std::vector<std::string>& names,
                           int threads, const RunContext& context) {
  return ParallelFor(
      threads, static_cast<int64_t>(names.size()),
      [&](int, int64_t i) -> absl::Status {
        Fd fd(openat(dir_fd, names[static_cast<size_t>(i)].c_str(),
                     O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
        if (fd.get() < 0) {
          return absl::ErrnoToStatus(errno, "smallfiles: open to drop the cache");
        }
        posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED);
        return absl::OkStatus();
      },
      [&context] { return context.cancelled(); });
}

struct ReadResult {
  int64_t files = 0;
  int64_t bytes = 0;
  double seconds = 0;
  LatencyHistogram open_latency;
  LatencyHistogram read_latency;
};

absl::StatusOr<ReadResult> ReadPass(int dir_fd,
                                    const std::vector<std::string>& names,
                                    const SmallFilesConfig& config,
                                    const RunContext& context) {
  const std::vector<int64_t> order =
      ShuffledOrder(static_cast<int64_t>(names.size()), RandomSeed());
  struct PerThread {
    ReadResult result;
    Buffer buffer;
    size_t capacity = 0;
  };
  std::vector<PerThread> all(static_cast<size_t>(config.threads));
  const int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (config.direct ? O_DIRECT : 0);
  const Clock::time_point start = Clock::now();
  const Clock::time_point until =
      start + std::chrono::duration_cast<Clock::duration>(
                  std::chrono::duration<double>(config.runtime_seconds));
  std::atomic<int64_t> done{0};
  std::atomic<int64_t> last_report_ms{0};
  absl::Status status = ParallelFor(
      config.threads, static_cast<int64_t>(order.size()),
      [&](int thread, int64_t k) -> absl::Status {
        PerThread* mine = &all[static_cast<size_t>(thread)];
        const std::string& name = names[static_cast<size_t>(order[static_cast<size_t>(k)])];
        const Clock::time_point t0 = Clock::now();
        Fd fd(openat(dir_fd, name.c_str(), flags));
        const Clock::time_point t1 = Clock::now();
        if (fd.get() < 0) {
          if (errno == EINVAL && config.direct) {
            return absl::FailedPreconditionError(
                "smallfiles: the filesystem refuses O_DIRECT; use direct=0");
          }
          return absl::ErrnoToStatus(errno, absl::StrCat("smallfiles: open ", name));
        }
        struct stat st;
        if (fstat(fd.get(), &st) != 0) {
          return absl::ErrnoToStatus(errno, "smallfiles: fstat");
        }
        // One read of the whole file (rounded up to the alignment direct
        // I/O needs), then reads until EOF: what read() of a whole file does.
        const size_t want =
            (static_cast<size_t>(st.st_size) + kAlignment) / kAlignment * kAlignment;
        if (mine->capacity < want) {
          mine->buffer = AlignedBuffer(want);
          if (!mine->buffer) {
            return absl::ResourceExhaustedError("smallfiles: read buffer");
          }
          mine->capacity = want;
        }
        int64_t got = 0;
        while (true) {
          const ssize_t r = read(fd.get(), mine->buffer.get(), mine->capacity);
          if (r < 0 && errno == EINTR) continue;
          if (r < 0) return absl::ErrnoToStatus(errno, absl::StrCat("smallfiles: read ", name));
          if (r == 0) break;
          got += r;
        }
        const Clock::time_point t2 = Clock::now();
        mine->result.open_latency.Add(static_cast<uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()));
        mine->result.read_latency.Add(static_cast<uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(t2 - t1).count()));
        ++mine->result.files;
        mine->result.bytes += got;
        const int64_t n = ++done;
        const int64_t ms = static_cast<int64_t>(SecondsSince(start) * 1000);
        int64_t last = last_report_ms.load();
        if (ms - last >= 1000 && last_report_ms.compare_exchange_strong(last, ms)) {
          context.ReportProgress(
              0.4 + 0.6 * static_cast<double>(n) / static_cast<double>(order.size()),
              absl::StrCat("smallfiles: read ", n, " of ", order.size(), " files"));
        }
        return absl::OkStatus();
      },
      [&context, until] { return context.cancelled() || Clock::now() >= until; });
  ReadResult total;
  total.seconds = SecondsSince(start);
  if (!status.ok()) return status;
  for (const PerThread& t : all) {
    total.files += t.result.files;
    total.bytes += t.result.bytes;
    total.open_latency.Merge(t.result.open_latency);
    total.read_latency.Merge(t.result.read_latency);
  }
  return total;
}

// fstatat of every file in random order: stats per second.
absl::StatusOr<double> StatPass(int dir_fd, const std::vector<std::string>& names,
                                int threads, const RunContext& context) {
  const std::vector<int64_t> order =
      ShuffledOrder(static_cast<int64_t>(names.size()), RandomSeed());
  const Clock::time_point start = Clock::now();
  absl::Status s = ParallelFor(
      threads, static_cast<int64_t>(order.size()),
      [&](int, int64_t k) -> absl::Status {
        struct stat st;
        if (fstatat(dir_fd, names[static_cast<size_t>(order[static_cast<size_t>(k)])].c_str(),
                    &st, AT_SYMLINK_NOFOLLOW) != 0) {
          return absl::ErrnoToStatus(errno, "smallfiles: stat");
        }
        return absl::OkStatus();
      },
      [&context] { return context.cancelled(); });
  if (!s.ok()) return s;
  const double seconds = SecondsSince(start);
  return seconds > 0 ? static_cast<double>(order.size()) / seconds : 0;
}

// The folder listed from the start, again and again for kReaddirSeconds:
// entries per second.
absl::StatusOr<double> ReaddirPass(int dir_fd, const RunContext& context) {
  const Clock::time_point start = Clock::now();
  int64_t entries = 0;
  do {
    const int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return absl::ErrnoToStatus(errno, "smallfiles: reopen the folder");
    DIR* dir = fdopendir(fd);
    if (dir == nullptr) {
      close(fd);
      return absl::ErrnoToStatus(errno, "smallfiles: readdir");
    }
    while (readdir(dir) != nullptr) ++entries;
    closedir(dir);
  } while (SecondsSince(start) < kReaddirSeconds && !context.cancelled());
  const double seconds = SecondsSince(start);
  return seconds > 0 ? static_cast<double>(entries) / seconds : 0;
}

}  // namespace

absl::StatusOr<SmallFilesConfig> ParseSmallFilesParams(const Params& params) {
  ParamReader reader("smallfiles", params);
  if (absl::Status s = reader.CheckKeys(kAllowedKeys); !s.ok()) return s;
  SmallFilesConfig config;
  absl::StatusOr<int64_t> files = reader.Int("files", config.files, 1, kMaxFiles);
  if (!files.ok()) return files.status();
  config.files = *files;
  config.files_given = reader.Has("files");
  if (reader.Has("path")) {
    config.path = reader.Get("path", "");
    if (absl::Status s = CheckAbsoluteFolder("smallfiles: path", config.path);
        !s.ok()) {
      return s;
    }
    config.path = CollapseSlashes(config.path);
    if (reader.Has("file_kib")) {
      return reader.Error("file_kib", "applies to files this benchmark makes; "
                                      "a dataset path's files have their own sizes");
    }
  }
  absl::StatusOr<int64_t> kib = reader.Int("file_kib", 128, 1, kMaxFileKib);
  if (!kib.ok()) return kib.status();
  config.file_bytes = *kib * 1024;
  absl::StatusOr<int64_t> threads = reader.Int("threads", config.threads, 1, 256);
  if (!threads.ok()) return threads.status();
  config.threads = static_cast<int>(*threads);
  absl::StatusOr<bool> direct = reader.Bool("direct", config.direct);
  if (!direct.ok()) return direct.status();
  config.direct = *direct;
  absl::StatusOr<double> runtime =
      reader.Double("runtime_seconds", config.runtime_seconds, 0.1, 3600);
  if (!runtime.ok()) return runtime.status();
  config.runtime_seconds = *runtime;
  if (config.path.empty() && config.files * config.file_bytes > (int64_t{1} << 40)) {
    return reader.Error("files", "files × file_kib is over 1 TiB; lower one");
  }
  return config;
}

std::vector<MetricInfo> SmallFilesBenchmark::metrics() const {
  return {
      {"smallfiles.files_per_s", "per_s", kHigherIsBetter,
       "small files read per second, random order, cold page cache"},
      {"smallfiles.MBps", "MBps", kHigherIsBetter,
       "small-file read throughput, random order, cold page cache"},
      {"smallfiles.open_p50_us", "us", kLowerIsBetter, "small-file open latency, median"},
      {"smallfiles.open_p99_us", "us", kLowerIsBetter, "small-file open latency, p99"},
      {"smallfiles.open_p999_us", "us", kLowerIsBetter, "small-file open latency, p99.9"},
      {"smallfiles.read_p50_us", "us", kLowerIsBetter,
       "whole-file read latency (fstat + reads to EOF), median"},
      {"smallfiles.read_p99_us", "us", kLowerIsBetter, "whole-file read latency, p99"},
      {"smallfiles.read_p999_us", "us", kLowerIsBetter, "whole-file read latency, p99.9"},
      {"smallfiles.stat_per_s", "per_s", kHigherIsBetter,
       "fstatat calls per second over the folder's files, random order"},
      {"smallfiles.readdir_entries_per_s", "per_s", kHigherIsBetter,
       "folder entries listed per second (readdir)"},
  };
}

absl::Status SmallFilesBenchmark::ValidateParams(const Params& params) const {
  return ParseSmallFilesParams(params).status();
}

absl::Duration SmallFilesBenchmark::DefaultTimeout(const Params& params) const {
  const absl::Duration base = Benchmark::DefaultTimeout(params);
  absl::StatusOr<SmallFilesConfig> config = ParseSmallFilesParams(params);
  if (!config.ok()) return base;
  const double make_s = config->path.empty()
                            ? static_cast<double>(config->files * config->file_bytes) /
                                  (20.0 * kMiB)
                            : 0;
  return std::max(base, absl::Seconds(config->runtime_seconds + make_s) +
                            absl::Minutes(10));
}

absl::StatusOr<std::vector<v1::Sample>> SmallFilesBenchmark::Run(
    const Params& params, const RunContext& context) {
  absl::StatusOr<SmallFilesConfig> config = ParseSmallFilesParams(params);
  if (!config.ok()) return config.status();

  // The folder read: one this run makes in the scratch folder, or a dataset
  // folder the agent's own configuration allows.
  std::unique_ptr<ScratchDir> scratch;
  std::unique_ptr<MadeFolder> made;
  std::unique_ptr<ScratchDir> dataset;
  int dir_fd = -1;
  std::string folder_path;
  std::vector<std::string> names;
  int stale = 0;
  double make_seconds = 0;
  if (config->path.empty()) {
    absl::StatusOr<std::unique_ptr<ScratchDir>> opened =
        ScratchDir::Open(context.scratch_dir());
    if (!opened.ok()) return opened.status();
    scratch = *std::move(opened);
    absl::StatusOr<int> removed = RemoveStaleFolders(*scratch);
    if (!removed.ok()) return removed.status();
    stale = *removed;
    absl::StatusOr<uint64_t> available = AvailableBytes(*scratch);
    if (!available.ok()) return available.status();
    if (absl::Status s = CheckFreeSpace(
            scratch->path(), *available,
            static_cast<uint64_t>(config->files * config->file_bytes));
        !s.ok()) {
      return s;
    }
    absl::StatusOr<std::unique_ptr<MadeFolder>> folder = MadeFolder::Create(*scratch);
    if (!folder.ok()) return folder.status();
    made = *std::move(folder);
    dir_fd = made->fd();
    folder_path = made->path();
    const Clock::time_point start = Clock::now();
    if (absl::Status s =
            MakeFiles(*made, config->files, config->file_bytes, config->threads, context);
        !s.ok()) {
      return s;
    }
    if (context.cancelled()) return absl::CancelledError("smallfiles: cancelled");
    // Written back before the cache is dropped: DONTNEED skips dirty pages.
    if (syncfs(dir_fd) != 0) return absl::ErrnoToStatus(errno, "smallfiles: syncfs");
    make_seconds = SecondsSince(start);
    names.reserve(static_cast<size_t>(config->files));
    for (int64_t i = 0; i < config->files; ++i) names.push_back(SmallFileName(i));
  } else {
    if (RootHolding(config->path, context.dataset_roots()).empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "smallfiles: path ", config->path,
          " is not under a folder this agent may read; its operator allows "
          "one with agent --dataset-root (a run's parameters cannot)"));
    }
    absl::StatusOr<std::unique_ptr<ScratchDir>> opened = ScratchDir::Open(config->path);
    if (!opened.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("smallfiles: dataset ", opened.status().message()));
    }
    dataset = *std::move(opened);
    dir_fd = dataset->fd();
    folder_path = dataset->path();
    absl::StatusOr<std::vector<std::string>> listed = ListRegularFiles(dir_fd);
    if (!listed.ok()) return listed.status();
    names = *std::move(listed);
    if (names.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("smallfiles: no regular files in ", folder_path));
    }
    if (config->files_given && static_cast<int64_t>(names.size()) > config->files) {
      const std::vector<int64_t> order =
          ShuffledOrder(static_cast<int64_t>(names.size()), RandomSeed());
      std::vector<std::string> subset;
      for (int64_t i = 0; i < config->files; ++i) {
        subset.push_back(names[static_cast<size_t>(order[static_cast<size_t>(i)])]);
      }
      names = std::move(subset);
    }
  }

  context.ReportProgress(0.3, "smallfiles: dropping the files from the page cache");
  if (absl::Status s = DropFromCache(dir_fd, names, config->threads, context); !s.ok()) {
    return s;
  }
  if (context.cancelled()) return absl::CancelledError("smallfiles: cancelled");
  absl::StatusOr<double> readdir_rate = ReaddirPass(dir_fd, context);
  if (!readdir_rate.ok()) return readdir_rate.status();
  absl::StatusOr<double> stat_rate = StatPass(dir_fd, names, config->threads, context);
  if (!stat_rate.ok()) return stat_rate.status();
  context.ReportProgress(0.4, "smallfiles: reading");
  absl::StatusOr<ReadResult> read = ReadPass(dir_fd, names, *config, context);
  if (!read.ok()) return read.status();
  if (context.cancelled()) return absl::CancelledError("smallfiles: cancelled");

  struct stat st;
  unsigned device_major = 0, device_minor = 0;
  if (fstat(dir_fd, &st) == 0) {
    device_major = major(st.st_dev);
    device_minor = minor(st.st_dev);
  }
  const StorageFacts storage =
      ReadStorageFacts("/", folder_path, device_major, device_minor);

  std::vector<v1::Sample> samples;
  auto add = [&](const std::string& suffix, double value, const std::string& unit) {
    v1::Sample& sample = samples.emplace_back();
    sample.set_metric(absl::StrCat("smallfiles.", suffix));
    sample.set_value(value);
    sample.set_unit(unit);
    auto& p = *sample.mutable_params();
    p["source"] = config->path.empty() ? "scratch" : "dataset";
    if (!config->path.empty()) p["path"] = config->path;
    p["files"] = absl::StrCat(names.size());
    if (config->path.empty()) p["file_bytes"] = absl::StrCat(config->file_bytes);
    p["threads"] = absl::StrCat(config->threads);
    p["direct"] = config->direct ? "1" : "0";
    p["files_read"] = absl::StrCat(read->files);
    p["bytes_read"] = absl::StrCat(read->bytes);
    p["read_seconds"] = FormatNumber(read->seconds);
    p["complete_pass"] = read->files == static_cast<int64_t>(names.size()) ? "1" : "0";
    p["runtime_seconds"] = FormatNumber(config->runtime_seconds);
    if (make_seconds > 0) p["make_seconds"] = FormatNumber(make_seconds);
    if (stale > 0) p["stale_folders_removed"] = absl::StrCat(stale);
    p["cache"] = "page cache dropped (fadvise DONTNEED); inode and dentry caches kept";
    p["filesystem"] = storage.filesystem.empty() ? "unknown" : storage.filesystem;
    p["mount_source"] = storage.mount_source.empty() ? "unknown" : storage.mount_source;
    if (!storage.device.name().empty()) {
      p["device"] = storage.device.name();
      p["rotational"] = storage.device.rotational() ? "1" : "0";
      p["virtual_device"] = storage.device.virtual_device() ? "1" : "0";
    }
    p["network_storage"] = storage.network_reason.empty() ? "0" : "1";
    if (!storage.network_reason.empty()) {
      p["network_storage_reason"] = storage.network_reason;
    }
  };
  add("files_per_s", read->seconds > 0 ? static_cast<double>(read->files) / read->seconds : 0,
      "per_s");
  add("MBps", MegabytesPerSecond(static_cast<double>(read->bytes), read->seconds), "MBps");
  add("open_p50_us", read->open_latency.PercentileNanos(0.50) / 1e3, "us");
  add("open_p99_us", read->open_latency.PercentileNanos(0.99) / 1e3, "us");
  add("open_p999_us", read->open_latency.PercentileNanos(0.999) / 1e3, "us");
  add("read_p50_us", read->read_latency.PercentileNanos(0.50) / 1e3, "us");
  add("read_p99_us", read->read_latency.PercentileNanos(0.99) / 1e3, "us");
  add("read_p999_us", read->read_latency.PercentileNanos(0.999) / 1e3, "us");
  add("stat_per_s", *stat_rate, "per_s");
  add("readdir_entries_per_s", *readdir_rate, "per_s");
  context.ReportProgress(1, "smallfiles: done");
  return samples;
}

}  // namespace fleetbench::agent
