#include "tests/cgroup_v1.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace fleetbench::testing {
namespace {

constexpr char kCgroupRoot[] = "/sys/fs/cgroup";

}  // namespace

bool CgroupV1::HasController(const std::string& controller, const std::string& file) {
  return std::filesystem::exists(absl::StrCat(kCgroupRoot, "/", controller, "/", file));
}

CgroupV1::CgroupV1(const std::string& controller, const std::string& suffix) {
  const std::string path = absl::StrCat(kCgroupRoot, "/", controller, "/fleetbench-", suffix);
  if (mkdir(path.c_str(), 0755) != 0) {
    ADD_FAILURE() << "cannot create " << path << ": " << std::strerror(errno);
    return;
  }
  path_ = path;
}

CgroupV1::~CgroupV1() {
  if (!path_.empty() && rmdir(path_.c_str()) != 0) {
    ADD_FAILURE() << "cannot remove cgroup " << path_ << ": " << std::strerror(errno);
  }
}

bool CgroupV1::Set(const std::string& file, const std::string& value) {
  bool ok = false;
  if (!path_.empty()) {
    std::ofstream out(path_ + "/" + file);
    out << value;
    out.flush();
    ok = static_cast<bool>(out);
  }
  if (!ok) ADD_FAILURE() << "cannot write '" << value << "' to " << path_ << "/" << file;
  return ok;
}

std::vector<std::string> CgroupV1::ExecPrefix() const {
  // $$ is the shell itself; exec keeps its pid, so the command starts in
  // the group. "$0" is the group's procs file, "$@" the command.
  return {"/bin/sh", "-c", "echo $$ > \"$0\" && exec \"$@\"", path_ + "/cgroup.procs"};
}

}  // namespace fleetbench::testing
