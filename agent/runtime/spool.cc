#include "agent/runtime/spool.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/ulid.h"

namespace fleetbench::agent {
namespace {

constexpr char kSuffix[] = ".report";
constexpr char kQuarantine[] = "quarantine";
constexpr char kMagic[] = "FBSPOOL1";  // 8 bytes, no terminator written
constexpr size_t kMagicBytes = 8;
constexpr size_t kHeaderBytes = kMagicBytes + 8 + 4;

absl::Status ErrnoStatus(const std::string& what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

uint32_t Crc32(absl::string_view bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths; a report is far below 4 GiB, but feed it in
  // pieces rather than assume.
  while (!bytes.empty()) {
    const size_t n = std::min<size_t>(bytes.size(), 1 << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(n));
    bytes.remove_prefix(n);
  }
  return static_cast<uint32_t>(crc);
}

void PutLittleEndian(std::string* out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

uint64_t GetLittleEndian(absl::string_view in, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) {
    value |= static_cast<uint64_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  }
  return value;
}

absl::Status WriteFileDurably(const std::string& path, const std::string& data) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return ErrnoStatus("open " + tmp);
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      return ErrnoStatus("write " + tmp);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    return ErrnoStatus("fsync " + tmp);
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) return ErrnoStatus("rename " + tmp);
  return absl::OkStatus();
}

bool ReadWholeFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream bytes;
  bytes << in.rdbuf();
  *out = std::move(bytes).str();
  return !in.bad();
}

}  // namespace

std::string Spool::Encode(const v1::Report& report) {
  const std::string payload = report.SerializeAsString();
  std::string out(kMagic, kMagicBytes);
  PutLittleEndian(&out, payload.size(), 8);
  PutLittleEndian(&out, Crc32(payload), 4);
  out += payload;
  return out;
}

absl::StatusOr<v1::Report> Spool::Decode(const std::string& bytes) {
  v1::Report report;
  if (bytes.empty()) return absl::DataLossError("empty file");
  if (!absl::StartsWith(bytes, absl::string_view(kMagic, kMagicBytes))) {
    // An older agent's file: the bare message, which cannot be checked.
    if (!report.ParseFromString(bytes)) return absl::DataLossError("not a report");
    return report;
  }
  if (bytes.size() < kHeaderBytes) return absl::DataLossError("truncated header");
  const absl::string_view view(bytes);
  const uint64_t length = GetLittleEndian(view.substr(kMagicBytes), 8);
  const uint32_t crc = static_cast<uint32_t>(GetLittleEndian(view.substr(kMagicBytes + 8), 4));
  const absl::string_view payload = view.substr(kHeaderBytes);
  if (payload.size() != length) {
    return absl::DataLossError(absl::StrCat("holds ", payload.size(), " bytes of a ", length,
                                            "-byte report (truncated or extended)"));
  }
  if (Crc32(payload) != crc) return absl::DataLossError("checksum mismatch");
  if (!report.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    return absl::DataLossError("checksum ok but not a report");
  }
  return report;
}

absl::StatusOr<std::unique_ptr<Spool>> Spool::Open(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create spool folder ", dir, ": ", ec.message()));
  }
  if (!std::filesystem::is_directory(dir, ec)) {
    return absl::FailedPreconditionError(absl::StrCat("spool ", dir, " is not a folder"));
  }
  // Leftover temporaries are reports that were never renamed into place:
  // never acknowledged and never sent, so dropping them loses nothing sent.
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".tmp") std::filesystem::remove(entry.path(), ec);
  }
  // Prove it writable the way Put writes: create, write, fsync, rename,
  // remove. access(2) would not do: it says yes to root on a read-only
  // mount's permissions and knows nothing of a full or read-only file system.
  const std::string probe = absl::StrCat(dir, "/.write-probe");
  if (absl::Status s = WriteFileDurably(probe, "probe"); !s.ok()) {
    ::unlink((probe + ".tmp").c_str());
    return absl::FailedPreconditionError(absl::StrCat(
        "spool folder ", dir, " is not writable (", s.message(),
        "); the agent keeps unacknowledged results there and will not start without it"));
  }
  if (::unlink(probe.c_str()) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("spool folder ", dir, ": cannot remove ", probe, ": ", std::strerror(errno)));
  }
  return std::unique_ptr<Spool>(new Spool(dir));
}

std::string Spool::PathOf(const std::string& report_id) const {
  return absl::StrCat(dir_, "/", report_id, kSuffix);
}

absl::Status Spool::Put(const v1::Report& report) {
  if (!IsUlid(report.report_id())) {
    return absl::InvalidArgumentError("report id must be a ULID");
  }
  absl::MutexLock lock(&mu_);
  return WriteFileDurably(PathOf(report.report_id()), Encode(report));
}

absl::Status Spool::Remove(const std::string& report_id) {
  if (!IsUlid(report_id)) return absl::OkStatus();  // never a path we made
  absl::MutexLock lock(&mu_);
  if (::unlink(PathOf(report_id).c_str()) != 0 && errno != ENOENT) {
    return ErrnoStatus("unlink spooled report");
  }
  return absl::OkStatus();
}

std::string Spool::QuarantineLocked(const std::string& name, const std::string& why) {
  const std::string folder = absl::StrCat(dir_, "/", kQuarantine);
  ::mkdir(folder.c_str(), 0700);
  // Never overwrite an earlier quarantined file of the same name.
  std::string target = absl::StrCat(folder, "/", name);
  for (int i = 1; ::access(target.c_str(), F_OK) == 0; ++i) {
    target = absl::StrCat(folder, "/", name, ".", i);
  }
  const std::string from = absl::StrCat(dir_, "/", name);
  std::string line;
  if (::rename(from.c_str(), target.c_str()) == 0) {
    line = absl::StrCat("spool: quarantined ", name, ": ", why, "; moved to ", target);
  } else {
    line = absl::StrCat("spool: ", name, ": ", why, "; cannot move it to ", folder, ": ",
                        std::strerror(errno));
  }
  LOG(WARNING) << line;
  return line;
}

std::vector<v1::Report> Spool::Pending(std::vector<std::string>* errors) {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename();
    if (name == kQuarantine && entry.is_directory(ec) && !entry.is_symlink(ec)) continue;
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  std::vector<v1::Report> reports;
  auto quarantine = [&](const std::string& name, const std::string& why) {
    std::string line = QuarantineLocked(name, why);
    if (errors) errors->push_back(std::move(line));
  };
  for (const std::string& name : names) {
    const std::string stem =
        absl::EndsWith(name, kSuffix) ? name.substr(0, name.size() - strlen(kSuffix)) : "";
    if (!IsUlid(stem)) {
      quarantine(name, "not a <report id>.report name");
      continue;
    }
    const std::string path = absl::StrCat(dir_, "/", name);
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      quarantine(name, "not a regular file");
      continue;
    }
    std::string bytes;
    if (!ReadWholeFile(path, &bytes)) {
      quarantine(name, absl::StrCat("unreadable: ", std::strerror(errno)));
      continue;
    }
    absl::StatusOr<v1::Report> report = Decode(bytes);
    if (!report.ok()) {
      quarantine(name, std::string(report.status().message()));
      continue;
    }
    if (report->report_id() != stem) {
      quarantine(name, absl::StrCat("holds report '", report->report_id().substr(0, 64),
                                    "', not its name's"));
      continue;
    }
    reports.push_back(*std::move(report));
  }
  return reports;
}

std::set<std::string> Spool::FinishedTaskIds() {
  std::set<std::string> ids;
  for (const v1::Report& r : Pending()) {
    if (r.task_finished()) ids.insert(r.task_id());
  }
  return ids;
}

size_t Spool::size() {
  absl::MutexLock lock(&mu_);
  size_t n = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    n += entry.path().extension() == kSuffix;
  }
  return n;
}

}  // namespace fleetbench::agent
