// controller/core/fleet_options.h — what a controller's core is configured
// with: timeouts, windows, retention, schedules, backups, and the checks the
// binary that links the plugins passes in. One struct, filled by the
// controller's main and handed to FleetCore, which gives each of its parts
// the fields it uses. Plain data; copied, never shared.
#ifndef FLEETBENCH_CONTROLLER_CORE_FLEET_OPTIONS_H_
#define FLEETBENCH_CONTROLLER_CORE_FLEET_OPTIONS_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "controller/core/group_plan.h"
#include "diagnosis/fleet_rules.h"
#include "fleetbench/v1/run.pb.h"

namespace fleetbench::controller {

// Checks one benchmark spec's parameters (see FleetOptions::validate_spec).
using SpecValidator = std::function<absl::Status(const v1::BenchmarkSpec&)>;
// A spec's default timeout for its parameters (see FleetOptions::spec_timeout).
using SpecTimeout = std::function<absl::Duration(const v1::BenchmarkSpec&)>;

struct FleetOptions {
  // A node silent for this long is offline, and its running task is lost.
  absl::Duration heartbeat_timeout = absl::Seconds(15);
  // What agents are told to use; a third of the timeout by default.
  absl::Duration heartbeat_interval = absl::Seconds(5);
  // The longest an agent waits between dials (AgentOptions::max_backoff).
  // After a restart a node whose task was in flight gets a heartbeat
  // timeout plus this to come back: its backoff grew while the controller
  // was away, and a task lost to that would fail its run for nothing.
  absl::Duration agent_max_backoff = absl::Seconds(30);
  // How often expiry is checked.
  absl::Duration sweep_interval = absl::Milliseconds(250);
  absl::Duration rank_window = absl::Hours(24 * 7);
  // How far back ListFindings and Variance read peers and history, unless a
  // request says otherwise; and the fleet rules' thresholds
  // (docs/findings.md).
  absl::Duration findings_window = absl::Hours(24 * 14);
  diagnosis::FleetRuleOptions fleet_rules;
  // Checks one benchmark's parameters before StartRun stores anything (the
  // binary that links the plugins passes their ValidateParams); an error
  // refuses the run with INVALID_ARGUMENT. It sees each spec as an agent
  // will: a pairwise one as its server half, with the role the core adds.
  // Null: nothing is checked here and each agent refuses bad parameters.
  SpecValidator validate_spec;
  // A group's deadline is the sum of its benchmarks' timeouts: the spec's
  // own, else this (the binary passes the plugins' DefaultTimeout(params),
  // so a collective's deadline follows its sweep), else the default the
  // member's agent declared for the benchmark (DefaultTimeout of no
  // parameters). Zero or null: not known here.
  SpecTimeout spec_timeout;
  // After a store write failed (a full disk), what could not be written is
  // held and retried: first after store_retry_initial, doubling up to
  // store_retry_max, until a retry succeeds.
  absl::Duration store_retry_initial = absl::Milliseconds(100);
  absl::Duration store_retry_max = absl::Seconds(2);
  // Samples dated further ahead of the controller's clock are refused (an
  // agent's clock that far off makes every time-based view wrong).
  absl::Duration max_sample_clock_skew = absl::Hours(24);
  // A node offline and not seen for longer than this, with no task queued or
  // in flight, is removed as `fleetbench nodes rm` removes it. Zero: never
  // (the default). Checked every expiry_check_interval (or a tenth of the
  // expiry when that is shorter), first at start.
  absl::Duration node_expiry = absl::ZeroDuration();
  absl::Duration expiry_check_interval = absl::Minutes(1);
  // The next pass of a group run's groups (controller/core/group_plan.h); null:
  // PlanNextGroups. Tests pass a planner of their own to drive passes.
  std::function<std::vector<GroupPlan>(const v1::GroupOptions&, const std::vector<std::string>&,
                                       const std::vector<v1::GroupResult>&)>
      plan_next_groups;
  // Retention (docs/operations.md): samples dated more than retain_samples
  // before the clock are removed with their ranking points. Zero: kept
  // forever (the default). A pass starts every retention_interval (first
  // at start) and removes at most retention_batch samples per sweep, each
  // batch one short store transaction on the actor, until none is older.
  absl::Duration retain_samples = absl::ZeroDuration();
  absl::Duration retention_interval = absl::Hours(1);
  int retention_batch = 5000;
  // Where BackupHistory writes its temporary copy (the controller sets the
  // history file's folder, which it alone writes). "": no backups.
  std::string backup_dir;
  // A schedule's cron time missed while the controller was down still runs
  // (once, however many were missed) when it is at most this old.
  absl::Duration schedule_grace = absl::Hours(1);
  // After Start, schedules wait this long before firing, so agents
  // reconnecting to a restarted controller are online for the catch-up.
  absl::Duration schedule_settle = absl::Seconds(15);
  // Time online is written at most this often (docs/reliability.md): a
  // controller killed loses at most this much of it. Interruptions are
  // written at the next sweep.
  absl::Duration uptime_flush_interval = absl::Minutes(1);
};

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_CORE_FLEET_OPTIONS_H_
