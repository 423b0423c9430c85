// fsync_ab: the disk plugin's depth-1 write+fsync loop, alone, with one
// variable changed at a time, for A/B against fio (fsync=1;
// docs/results-log.md, "fsync'd 4 KiB writes: where the thread runs").
// Build: g++ -O2 -std=c++20 fsync_ab.cc -o fsync_ab -luring -lpthread
#include <fcntl.h>
#include <liburing.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using Clock = std::chrono::steady_clock;
static uint64_t st = 0x1234567;
static uint64_t Next() {
  uint64_t z = (st += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

int main(int argc, char** argv) {
  std::string path;
  bool create = false, defer = true, coop = true, ticker = false,
       scramble = true, second_fd = false, flock_it = false, stat_each = false;
  double ramp = 1, runtime = 5;
  long file_mib = 512;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto v = [&](const char* k) { return a.rfind(k, 0) == 0 ? a.substr(strlen(k)) : std::string(); };
    if (a.rfind("--file=", 0) == 0) path = v("--file=");
    else if (a == "--create") create = true;            // make the file as the plugin does
    else if (a == "--nodefer") defer = false;
    else if (a == "--nocoop") coop = false;
    else if (a == "--ticker") ticker = true;             // a thread waking every 20 ms
    else if (a == "--noscramble") scramble = false;
    else if (a == "--secondfd") second_fd = true;        // keep a buffered fd open too
    else if (a == "--flock") flock_it = true;
    else if (a == "--stat") stat_each = true;            // fstat after each fsync
    else if (a.rfind("--mib=", 0) == 0) file_mib = atol(v("--mib=").c_str());
    else if (a.rfind("--runtime=", 0) == 0) runtime = atof(v("--runtime=").c_str());
    else { fprintf(stderr, "bad arg %s\n", a.c_str()); return 2; }
  }
  const long bytes = file_mib << 20;
  int fd0 = -1, fd;
  char* buf = static_cast<char*>(aligned_alloc(4096, 1 << 20));
  for (int i = 0; i < (1 << 20); i += 8) { uint64_t w = Next(); memcpy(buf + i, &w, 8); }
  if (create) {
    unlink(path.c_str());
    fd0 = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (flock_it) flock(fd0, LOCK_EX | LOCK_NB);
    fd = open(path.c_str(), O_RDWR | O_CLOEXEC | O_DIRECT);
    if (pwrite(fd, buf, 4096, 0) != 4096) { perror("probe"); return 1; }
    if (fallocate(fd, 0, 0, bytes)) { perror("fallocate"); return 1; }
    for (long off = 0; off < bytes; off += 1 << 20) {
      for (int i = 0; i < (1 << 20); i += 8) { uint64_t w = Next(); memcpy(buf + i, &w, 8); }
      if (pwrite(fd, buf, 1 << 20, off) != (1 << 20)) { perror("fill"); return 1; }
    }
    fsync(fd);
    syncfs(fd);
    usleep(200000);
    if (!second_fd) { close(fd0); fd0 = -1; }
  } else {
    fd = open(path.c_str(), O_RDWR | O_DIRECT);
    if (second_fd) fd0 = open(path.c_str(), O_RDWR);
  }
  if (fd < 0) { perror("open"); return 1; }

  io_uring ring;
  io_uring_params p{};
  if (coop) p.flags |= IORING_SETUP_COOP_TASKRUN;
  if (defer) p.flags |= IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
  if (int r = io_uring_queue_init_params(1, &ring, &p)) { fprintf(stderr, "init %d\n", r); return 1; }

  std::atomic<bool> done{false};
  std::thread tick;
  if (ticker) tick = std::thread([&] { while (!done) std::this_thread::sleep_for(std::chrono::milliseconds(20)); });

  const auto start = Clock::now();
  const auto from = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(ramp));
  const auto until = from + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(runtime));
  std::vector<uint32_t> wl, fl;
  wl.reserve(1 << 20); fl.reserve(1 << 20);
  long off = 0, writes = 0;
  while (true) {
    for (int kind = 0; kind < 2; ++kind) {
      io_uring_sqe* sqe = io_uring_get_sqe(&ring);
      if (kind == 0) {
        if (scramble) for (int s = 0; s < 4096; s += 512) { uint64_t w = Next(); memcpy(buf + s, &w, 8); }
        io_uring_prep_write(sqe, fd, buf, 4096, off);
        off += 4096; if (off >= bytes) off = 0;
      } else {
        io_uring_prep_fsync(sqe, fd, 0);
      }
      io_uring_submit_and_get_events(&ring);
      const auto t0 = Clock::now();
      io_uring_cqe* cqe;
      int r = io_uring_wait_cqe(&ring, &cqe);
      const auto now = Clock::now();
      if (r < 0 || cqe->res < 0 || (kind == 0 && cqe->res != 4096)) { fprintf(stderr, "io err %d %d\n", r, cqe ? cqe->res : 0); return 1; }
      io_uring_cqe_seen(&ring, cqe);
      if (now >= from && now < until) {
        (kind ? fl : wl).push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(now - t0).count());
        if (kind == 0) ++writes;
      }
      if (stat_each && kind == 1) { struct stat sb; fstat(fd, &sb); }
      if (now >= until) goto out;
    }
  }
out:
  done = true;
  if (tick.joinable()) tick.join();
  auto p50 = [](std::vector<uint32_t>& v) { std::sort(v.begin(), v.end()); return v.empty() ? 0.0 : v[v.size() / 2] / 1e3; };
  auto mean = [](std::vector<uint32_t>& v) { double s = 0; for (auto x : v) s += x; return v.empty() ? 0.0 : s / v.size() / 1e3; };
  printf("iops %.0f write_p50 %.1f fsync_p50 %.1f write_mean %.1f fsync_mean %.1f\n", writes / runtime, p50(wl), p50(fl), mean(wl), mean(fl));
  io_uring_queue_exit(&ring);
  if (create) unlink(path.c_str());
  return 0;
}
