// controller/core/running_groups.h — the groups (docs/collectives.md) with
// a member not ended: each group's run, its members' task ids in rank
// order, whether it was dispatched and its deadline, its rendezvous relay
// (group_rendezvous.h), and once it failed, why and who was at fault.
//
// Rules it keeps:
// - A group fails once: the first failure names it; later ones change
//   nothing (Fail returns false).
// - A failed group's members end with its reason: a member at fault
//   failed (or lost), the others cancelled unless they succeeded
//   (ShapeMemberEnd).
// - A group's relay ends with the group: on Fail, its waiters are answered
//   ABORTED with the group's reason; on End, with "the group ended".
// What a group's members do (dispatch, cancel, end) is FleetCore's
// (fleet_core_groups.cc): this part knows tasks by id only.
//
// Threading: the core's actor thread only.
#ifndef FLEETBENCH_CONTROLLER_CORE_RUNNING_GROUPS_H_
#define FLEETBENCH_CONTROLLER_CORE_RUNNING_GROUPS_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "controller/core/group_rendezvous.h"
#include "storage/store.h"

namespace fleetbench::controller {

class RunningGroups {
 public:
  struct Group {
    std::string run_id;
    std::vector<std::string> task_ids;  // rank order
    bool dispatched = false;
    absl::Time deadline = absl::InfiniteFuture();
    GroupRendezvous rendezvous;
    // Set once the group failed: why (naming the members at fault), those
    // members' task ids, and when.
    std::string failure;
    std::set<std::string> at_fault;
    absl::Time failed_at = absl::InfiniteFuture();
  };

  // Adds a group task to its group (the group is made at its first task).
  // No change for a task outside a group.
  void Register(const storage::TaskRecord& task);
  Group* Find(const std::string& group_id);
  const Group* Find(const std::string& group_id) const;
  // The group ids of a run's groups.
  std::vector<std::string> OfRun(const std::string& run_id) const;

  // The group was dispatched: its deadline runs from now.
  void Dispatched(const std::string& group_id, absl::Time deadline);
  // The group failed for `reason` (the members `at_fault` by task id):
  // false when it is unknown or failed already.
  bool Fail(const std::string& group_id, const std::string& reason,
            const std::set<std::string>& at_fault, absl::Time now);
  // Before a member's end is stored: shaped by its group's failure, if any.
  void ShapeMemberEnd(storage::TaskRecord& ending) const;
  // No member is left: the group goes, its relay's waiters answered.
  void End(const std::string& group_id);

  // Group id -> group, for passes over all (the sweep, a restart).
  std::map<std::string, Group>& all() { return groups_; }

 private:
  std::map<std::string, Group> groups_;
};

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_CORE_RUNNING_GROUPS_H_
