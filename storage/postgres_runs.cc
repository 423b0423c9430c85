// The PostgreSQL store's runs, their tasks and the tasks' logs.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/reason.h"
#include "common/status_macros.h"
#include "storage/postgres_store_impl.h"
#include "storage/stored_messages.h"

namespace fleetbench::storage {
namespace {

PgParam FinishedMillis(absl::Time finished) {
  if (finished == absl::InfinitePast()) return std::nullopt;
  return PgInt(PgMillis(finished));
}

constexpr char kSelectRun[] =
    "SELECT run_id, state, created_ms, finished_ms, benchmarks, max_parallel, suite, "
    "group_options, group_nodes FROM runs ";

absl::StatusOr<RunRecord> ReadRun(const PgRows& rows, int i) {
  RunRecord run;
  run.run_id = rows.Text(i, 0);
  run.state = rows.Text(i, 1);
  run.created = PgTime(rows.Int(i, 2));
  run.finished = rows.IsNull(i, 3) ? absl::InfinitePast() : PgTime(rows.Int(i, 3));
  FLEETBENCH_ASSIGN_OR_RETURN(
      run.benchmarks, ParseDelimited<v1::BenchmarkSpec>(rows.Bytes(i, 4), "benchmarks of a run"));
  run.max_parallel = static_cast<uint32_t>(rows.Int(i, 5));
  run.suite = rows.Text(i, 6);
  if (!run.group.ParseFromString(rows.Bytes(i, 7))) {
    return absl::DataLossError("cannot parse the stored group options of a run");
  }
  run.group_nodes = SplitNames(rows.Text(i, 8));
  return run;
}

constexpr char kSelectTask[] =
    "SELECT t.task_id, r.run_id, t.node, t.state, t.reason, t.outcomes, t.updated_ms, "
    "t.benchmarks, t.peer_task_id, t.group_id, t.group_rank, t.group_members, t.group_pass, "
    "t.group_metric, t.group_value FROM tasks t JOIN runs r ON r.key = t.run_key ";

absl::StatusOr<std::vector<TaskRecord>> ReadTasks(const PgRows& rows) {
  std::vector<TaskRecord> tasks;
  for (int i = 0; i < rows.size(); ++i) {
    TaskRecord& task = tasks.emplace_back();
    task.task_id = rows.Text(i, 0);
    task.run_id = rows.Text(i, 1);
    task.node = rows.Text(i, 2);
    task.state = static_cast<v1::TaskState>(rows.Int(i, 3));
    task.reason = rows.Text(i, 4);
    FLEETBENCH_ASSIGN_OR_RETURN(
        task.outcomes,
        ParseDelimited<v1::BenchmarkOutcome>(rows.Bytes(i, 5), "outcomes of a task"));
    task.updated = PgTime(rows.Int(i, 6));
    FLEETBENCH_ASSIGN_OR_RETURN(
        task.benchmarks,
        ParseDelimited<v1::BenchmarkSpec>(rows.Bytes(i, 7), "benchmarks of a task"));
    task.peer_task_id = rows.Text(i, 8);
    task.group_id = rows.Text(i, 9);
    task.group_rank = static_cast<int>(rows.Int(i, 10));
    task.group_members = SplitNames(rows.Text(i, 11));
    task.group_pass = static_cast<int>(rows.Int(i, 12));
    task.group_metric = rows.Text(i, 13);
    task.group_value = rows.Double(i, 14);
  }
  return tasks;
}

absl::Status CheckTasksOfRun(const std::string& run_id, const std::vector<TaskRecord>& tasks) {
  for (const TaskRecord& task : tasks) {
    if (task.task_id.empty()) return absl::InvalidArgumentError("task id is empty");
    if (!task.run_id.empty() && task.run_id != run_id) {
      return absl::InvalidArgumentError(
          absl::StrCat("task ", task.task_id, " names run ", task.run_id, ", not ", run_id));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status PostgresStore::CreateRun(const RunRecord& run, const std::vector<TaskRecord>& tasks) {
  if (run.run_id.empty()) return absl::InvalidArgumentError("run id is empty");
  FLEETBENCH_RETURN_IF_ERROR(CheckTasksOfRun(run.run_id, tasks));
  std::string group_options;
  run.group.SerializeToString(&group_options);
  absl::MutexLock lock(&mu_);
  return InTransaction("creating a run", [&]() -> absl::Status {
    absl::StatusOr<PgRows> created =
        Exec("INSERT INTO runs(run_id, state, created_ms, finished_ms, benchmarks, max_parallel, "
             "suite, group_options, group_nodes) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) "
             "RETURNING key",
             {PgText(run.run_id), PgText(run.state), PgInt(PgMillis(run.created)),
              FinishedMillis(run.finished), PgBytes{SerializeDelimited(run.benchmarks)},
              PgInt(run.max_parallel), PgText(run.suite), PgBytes{group_options},
              PgText(JoinNames(run.group_nodes))},
             absl::StrCat("creating run ", run.run_id));
    if (absl::IsAlreadyExists(created.status())) {
      return absl::AlreadyExistsError(absl::StrCat("run ", run.run_id, " already exists"));
    }
    if (!created.ok()) return created.status();
    return InsertTasksLocked(created->Int(0, 0), tasks);
  });
}

absl::Status PostgresStore::InsertTasksLocked(int64_t run_key,
                                              const std::vector<TaskRecord>& tasks) {
  for (const TaskRecord& task : tasks) {
    absl::Status status =
        Exec("INSERT INTO tasks(task_id, run_key, node, state, reason, outcomes, updated_ms, "
             "benchmarks, peer_task_id, group_id, group_rank, group_members, group_pass, "
             "group_metric, group_value) "
             "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
             {PgText(task.task_id), PgInt(run_key), PgText(task.node), PgInt(task.state),
              PgText(task.reason), PgBytes{SerializeDelimited(task.outcomes)},
              PgInt(PgMillis(task.updated)), PgBytes{SerializeDelimited(task.benchmarks)},
              PgText(task.peer_task_id), PgText(task.group_id), PgInt(task.group_rank),
              PgText(JoinNames(task.group_members)), PgInt(task.group_pass),
              PgText(task.group_metric), PgDouble(task.group_value)},
             absl::StrCat("creating task ", task.task_id))
            .status();
    if (absl::IsAlreadyExists(status)) {
      return absl::AlreadyExistsError(absl::StrCat("task ", task.task_id, " already exists"));
    }
    FLEETBENCH_RETURN_IF_ERROR(status);
  }
  return absl::OkStatus();
}

absl::Status PostgresStore::AddTasks(const std::string& run_id,
                                     const std::vector<TaskRecord>& tasks) {
  FLEETBENCH_RETURN_IF_ERROR(CheckTasksOfRun(run_id, tasks));
  absl::MutexLock lock(&mu_);
  return InTransaction("adding tasks", [&]() -> absl::Status {
    FLEETBENCH_ASSIGN_OR_RETURN(int64_t key, RunKeyLocked(run_id));
    return InsertTasksLocked(key, tasks);
  });
}

absl::StatusOr<RunRecord> PostgresStore::GetRun(const std::string& run_id) {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows,
      Exec(absl::StrCat(kSelectRun, "WHERE run_id = $1"), {PgText(run_id)}, "reading run"));
  if (rows.size() == 0) {
    return absl::NotFoundError(absl::StrCat("run ", ClipInput(run_id), " not found"));
  }
  return ReadRun(rows, 0);
}

absl::StatusOr<std::vector<RunRecord>> PostgresStore::ListRuns(int limit,
                                                               const std::string& after_run_id) {
  absl::MutexLock lock(&mu_);
  if (!after_run_id.empty()) {
    FLEETBENCH_ASSIGN_OR_RETURN(PgRows known,
                                Exec("SELECT 1 FROM runs WHERE run_id = $1",
                                     {PgText(after_run_id)}, "finding the page's run"));
    if (known.size() == 0) {
      return absl::NotFoundError(absl::StrCat("run ", ClipInput(after_run_id), " not found"));
    }
  }
  // Strictly after the given run in (created, key) order, so runs created
  // in the same millisecond are neither lost nor repeated.
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows,
      Exec(absl::StrCat(kSelectRun,
                        after_run_id.empty()
                            ? "WHERE $2::TEXT IS NULL "
                            : "WHERE (created_ms, key) < (SELECT created_ms, key FROM runs "
                              "WHERE run_id = $2) ",
                        "ORDER BY created_ms DESC, key DESC LIMIT $1"),
           {limit > 0 ? PgInt(limit) : PgParam(std::nullopt),
            after_run_id.empty() ? PgParam(std::nullopt) : PgText(after_run_id)},
           "listing runs"));
  std::vector<RunRecord> runs;
  for (int i = 0; i < rows.size(); ++i) {
    FLEETBENCH_ASSIGN_OR_RETURN(RunRecord run, ReadRun(rows, i));
    runs.push_back(std::move(run));
  }
  return runs;
}

absl::Status PostgresStore::SetRunState(const std::string& run_id, const std::string& state,
                                        absl::Time finished) {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows, Exec("UPDATE runs SET state = $1, finished_ms = $2 WHERE run_id = $3",
                        {PgText(state), FinishedMillis(finished), PgText(run_id)},
                        "setting run state"));
  if (rows.affected() == 0) {
    return absl::NotFoundError(absl::StrCat("run ", ClipInput(run_id), " not found"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TaskRecord>> PostgresStore::ListTasks(const std::string& run_id) {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(int64_t key, RunKeyLocked(run_id));
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows, Exec(absl::StrCat(kSelectTask, "WHERE t.run_key = $1 ORDER BY t.seq"),
                        {PgInt(key)}, "listing tasks"));
  return ReadTasks(rows);
}

absl::StatusOr<std::map<std::string, int64_t>> PostgresStore::TaskLogSizesOfRun(
    const std::string& run_id) {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(int64_t key, RunKeyLocked(run_id));
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows,
      Exec("SELECT l.task_id, octet_length(l.log) FROM tasks t JOIN task_logs l "
           "ON l.task_id = t.task_id WHERE t.run_key = $1",
           {PgInt(key)}, "listing task log sizes"));
  std::map<std::string, int64_t> sizes;
  for (int i = 0; i < rows.size(); ++i) sizes[rows.Text(i, 0)] = rows.Int(i, 1);
  return sizes;
}

absl::StatusOr<std::map<std::string, std::string>> PostgresStore::TaskLogs(
    const std::vector<std::string>& task_ids) {
  absl::MutexLock lock(&mu_);
  std::map<std::string, std::string> logs;
  for (const std::string& id : task_ids) {
    FLEETBENCH_ASSIGN_OR_RETURN(PgRows rows, Exec("SELECT log FROM task_logs WHERE task_id = $1",
                                                  {PgText(id)}, "reading a task log"));
    if (rows.size() > 0) logs[id] = rows.Text(0, 0);
  }
  return logs;
}

absl::StatusOr<TaskRecord> PostgresStore::GetTask(const std::string& task_id) {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(PgRows rows, Exec(absl::StrCat(kSelectTask, "WHERE t.task_id = $1"),
                                                {PgText(task_id)}, "reading task"));
  FLEETBENCH_ASSIGN_OR_RETURN(std::vector<TaskRecord> tasks, ReadTasks(rows));
  if (tasks.empty()) return absl::NotFoundError(absl::StrCat("task ", task_id, " not found"));
  return std::move(tasks.front());
}

absl::StatusOr<std::vector<TaskRecord>> PostgresStore::ListTasksInStates(
    const std::vector<v1::TaskState>& states) {
  if (states.empty()) return std::vector<TaskRecord>{};
  // An array literal of integers: {1,2,3}.
  std::string array = "{";
  for (size_t i = 0; i < states.size(); ++i) {
    absl::StrAppend(&array, i == 0 ? "" : ",", static_cast<int>(states[i]));
  }
  array += "}";
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows,
      Exec(absl::StrCat(kSelectTask, "WHERE t.state = ANY($1::INTEGER[]) ORDER BY t.seq"),
           {PgText(array)}, "listing tasks by state"));
  return ReadTasks(rows);
}

absl::Status PostgresStore::UpdateTaskLocked(const TaskRecord& task) {
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows,
      Exec("UPDATE tasks SET state = $1, reason = $2, outcomes = $3, updated_ms = $4, "
           "benchmarks = $6, group_metric = $7, group_value = $8 WHERE task_id = $5",
           {PgInt(task.state), PgText(task.reason), PgBytes{SerializeDelimited(task.outcomes)},
            PgInt(PgMillis(task.updated)), PgText(task.task_id),
            PgBytes{SerializeDelimited(task.benchmarks)}, PgText(task.group_metric),
            PgDouble(task.group_value)},
           "updating task"));
  if (rows.affected() == 0) {
    return absl::NotFoundError(absl::StrCat("task ", task.task_id, " not found"));
  }
  return absl::OkStatus();
}

absl::Status PostgresStore::UpdateTask(const TaskRecord& task) {
  absl::MutexLock lock(&mu_);
  return UpdateTaskLocked(task);
}

}  // namespace fleetbench::storage
