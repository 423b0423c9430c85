#include "agent/runtime/spool.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "common/ulid.h"

namespace fleetbench::agent {
namespace {

constexpr char kSuffix[] = ".report";

absl::Status ErrnoStatus(const std::string& what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
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

}  // namespace

absl::StatusOr<std::unique_ptr<Spool>> Spool::Open(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create spool folder ", dir, ": ", ec.message()));
  }
  // Leftover temporaries are reports that were never renamed into place:
  // never acknowledged and never sent, so dropping them loses nothing sent.
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".tmp") std::filesystem::remove(entry.path(), ec);
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
  return WriteFileDurably(PathOf(report.report_id()), report.SerializeAsString());
}

absl::Status Spool::Remove(const std::string& report_id) {
  if (!IsUlid(report_id)) return absl::OkStatus();  // never a path we made
  absl::MutexLock lock(&mu_);
  if (::unlink(PathOf(report_id).c_str()) != 0 && errno != ENOENT) {
    return ErrnoStatus("unlink spooled report");
  }
  return absl::OkStatus();
}

std::vector<v1::Report> Spool::Pending(std::vector<std::string>* errors) {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> paths;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    if (entry.path().extension() == kSuffix) paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  std::vector<v1::Report> reports;
  for (const std::string& path : paths) {
    std::ifstream in(path, std::ios::binary);
    v1::Report report;
    if (!in || !report.ParseFromIstream(&in)) {
      if (errors) errors->push_back(absl::StrCat(path, ": unreadable report"));
      continue;
    }
    reports.push_back(std::move(report));
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
