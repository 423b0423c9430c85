// tests/cgroup_v1.h — a cgroup v1 group of a test's own, to make a slow node
// for real (a CPU quota, a blkio throttle): made under one controller's
// hierarchy at /sys/fs/cgroup/CONTROLLER, removed when the object goes.
// Needs root. The processes put in it must have exited and been reaped
// before it is destroyed, or the removal fails (and says so).
#ifndef FLEETBENCH_TESTS_CGROUP_V1_H_
#define FLEETBENCH_TESTS_CGROUP_V1_H_

#include <string>
#include <vector>

namespace fleetbench::testing {

class CgroupV1 {
 public:
  // Whether CONTROLLER is mounted with FILE (e.g. "cpu", "cpu.cfs_quota_us").
  static bool HasController(const std::string& controller, const std::string& file);

  // /sys/fs/cgroup/CONTROLLER/fleetbench-SUFFIX; a test failure and an empty
  // path() when it cannot be made.
  CgroupV1(const std::string& controller, const std::string& suffix);
  ~CgroupV1();
  CgroupV1(const CgroupV1&) = delete;
  CgroupV1& operator=(const CgroupV1&) = delete;

  const std::string& path() const { return path_; }
  // Writes VALUE to the group's FILE; a test failure when it cannot.
  bool Set(const std::string& file, const std::string& value);
  // Moves a running process (all its threads) into the group.
  bool Add(int pid) { return Set("cgroup.procs", std::to_string(pid)); }
  // An argv prefix that runs the command after it inside the group from its
  // first instruction (a shell that moves itself in, then execs it): for
  // what must happen under the limit from the start, an enrollment say.
  std::vector<std::string> ExecPrefix() const;

 private:
  std::string path_;
};

}  // namespace fleetbench::testing

#endif  // FLEETBENCH_TESTS_CGROUP_V1_H_
