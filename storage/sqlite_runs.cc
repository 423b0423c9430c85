// The SQLite store's runs and their tasks.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/reason.h"
#include "common/status_macros.h"
#include "storage/sqlite_statement.h"
#include "storage/sqlite_store_impl.h"
#include "storage/stored_messages.h"
#include "storage/store.h"

namespace fleetbench::storage {
namespace {

// NULL for a run that has not finished.
std::optional<int64_t> FinishedMillis(absl::Time finished) {
  if (finished == absl::InfinitePast()) return std::nullopt;
  return ToMillis(finished);
}

constexpr char kSelectRun[] =
    "SELECT run_id, state, created_ms, finished_ms, benchmarks, max_parallel, "
    "suite, group_options, group_nodes FROM runs ";

absl::StatusOr<RunRecord> ReadRun(const Statement& s) {
  RunRecord run;
  run.run_id = s.Text(0);
  run.state = s.Text(1);
  run.created = FromMillis(s.Int(2));
  run.finished = s.IsNull(3) ? absl::InfinitePast() : FromMillis(s.Int(3));
  FLEETBENCH_ASSIGN_OR_RETURN(
      run.benchmarks,
      ParseDelimited<v1::BenchmarkSpec>(s.Blob(4), "benchmarks of a run"));
  run.max_parallel = static_cast<uint32_t>(s.Int(5));
  run.suite = s.Text(6);
  const absl::string_view group = s.Blob(7);
  if (!run.group.ParseFromArray(group.data(), static_cast<int>(group.size()))) {
    return absl::DataLossError("cannot parse the stored group options of a run");
  }
  run.group_nodes = SplitNames(s.Text(8));
  return run;
}

// Columns: task_id, run_id, node, state, reason, outcomes, updated_ms,
// benchmarks, peer_task_id, then the group's: id, rank, members, pass,
// metric, value.
constexpr char kSelectTask[] =
    "SELECT t.task_id, r.run_id, t.node, t.state, t.reason, t.outcomes, "
    "t.updated_ms, t.benchmarks, t.peer_task_id, t.group_id, t.group_rank, "
    "t.group_members, t.group_pass, t.group_metric, t.group_value "
    "FROM tasks t CROSS JOIN runs r ON r.key = t.run_key ";

}  // namespace

absl::Status SqliteStore::CreateRun(const RunRecord& run,
                                    const std::vector<TaskRecord>& tasks) {
  if (run.run_id.empty()) return absl::InvalidArgumentError("run id is empty");
  for (const TaskRecord& task : tasks) {
    if (task.task_id.empty()) {
      return absl::InvalidArgumentError("task id is empty");
    }
    if (!task.run_id.empty() && task.run_id != run.run_id) {
      return absl::InvalidArgumentError(
          absl::StrCat("task ", task.task_id, " names run ", task.run_id,
                       ", not ", run.run_id));
    }
  }
  const std::string benchmarks = SerializeDelimited(run.benchmarks);
  std::string group_options;
  run.group.SerializeToString(&group_options);
  absl::MutexLock lock(&mu_);
  return InTransaction(TxnKind::kWrite, [&]() -> absl::Status {
    int64_t key = 0;
    {
      // A run that is not a group run writes no group column: what it
      // writes is what every older schema holds (the migration tests write
      // files at old versions with today's code).
      const bool grouped = run.group.mode() != v1::GROUP_MODE_UNSPECIFIED ||
                           !run.group_nodes.empty();
      FLEETBENCH_ASSIGN_OR_RETURN(
          Statement s,
          Prepare(grouped ? "INSERT INTO runs(run_id, state, created_ms, finished_ms, "
                            "benchmarks, max_parallel, suite, group_options, group_nodes) "
                            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) RETURNING key"
                          : "INSERT INTO runs(run_id, state, created_ms, finished_ms, "
                            "benchmarks, max_parallel, suite) "
                            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING key"));
      s.BindAll(run.run_id, run.state, ToMillis(run.created),
                FinishedMillis(run.finished), SqlBlob{benchmarks},
                run.max_parallel, run.suite);
      const std::string group_nodes = JoinNames(run.group_nodes);  // bound until the Step
      if (grouped) {
        s.Bind(8, SqlBlob{group_options});
        s.Bind(9, group_nodes);
      }
      absl::StatusOr<bool> row = s.Step(absl::StrCat("creating run ", run.run_id));
      if (absl::IsAlreadyExists(row.status())) {
        return absl::AlreadyExistsError(
            absl::StrCat("run ", run.run_id, " already exists"));
      }
      if (!row.ok()) return row.status();
      if (!*row) return absl::InternalError("creating run returned no key");
      key = s.Int(0);
    }
    FLEETBENCH_RETURN_IF_ERROR(InsertTasksLocked(key, tasks));
    run_keys_[run.run_id] = key;
    return absl::OkStatus();
  });
}

absl::Status SqliteStore::InsertTasksLocked(int64_t run_key,
                                            const std::vector<TaskRecord>& tasks) {
  // As for runs: a task outside any group writes no group column.
  FLEETBENCH_ASSIGN_OR_RETURN(
      Statement plain,
      Prepare("INSERT INTO tasks(task_id, run_key, node, state, reason, "
              "outcomes, updated_ms, benchmarks, peer_task_id) "
              "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"));
  std::optional<Statement> grouped;
  for (const TaskRecord& task : tasks) {
    Statement* s = &plain;
    if (!task.group_id.empty()) {
      if (!grouped) {
        absl::StatusOr<Statement> prepared =
            Prepare("INSERT INTO tasks(task_id, run_key, node, state, reason, "
                    "outcomes, updated_ms, benchmarks, peer_task_id, group_id, "
                    "group_rank, group_members, group_pass, group_metric, group_value) "
                    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, "
                    "?14, ?15)");
        if (!prepared.ok()) return prepared.status();
        grouped.emplace(*std::move(prepared));
      }
      s = &*grouped;
    }
    const std::string outcomes = SerializeDelimited(task.outcomes);
    const std::string task_benchmarks = SerializeDelimited(task.benchmarks);
    s->BindAll(task.task_id, run_key, task.node, task.state, task.reason,
               SqlBlob{outcomes}, ToMillis(task.updated),
               SqlBlob{task_benchmarks}, task.peer_task_id);
    const std::string members = JoinNames(task.group_members);  // bound until the Run
    if (!task.group_id.empty()) {
      s->Bind(10, task.group_id);
      s->Bind(11, task.group_rank);
      s->Bind(12, members);
      s->Bind(13, task.group_pass);
      s->Bind(14, task.group_metric);
      s->Bind(15, task.group_value);
    }
    absl::Status status = s->Run(absl::StrCat("creating task ", task.task_id));
    if (absl::IsAlreadyExists(status)) {
      return absl::AlreadyExistsError(
          absl::StrCat("task ", task.task_id, " already exists"));
    }
    FLEETBENCH_RETURN_IF_ERROR(status);
    s->Reset();
  }
  return absl::OkStatus();
}

absl::Status SqliteStore::AddTasks(const std::string& run_id,
                                   const std::vector<TaskRecord>& tasks) {
  for (const TaskRecord& task : tasks) {
    if (task.task_id.empty()) return absl::InvalidArgumentError("task id is empty");
    if (!task.run_id.empty() && task.run_id != run_id) {
      return absl::InvalidArgumentError(absl::StrCat(
          "task ", task.task_id, " names run ", task.run_id, ", not ", run_id));
    }
  }
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(int64_t key, RunKeyLocked(run_id));
  return InTransaction(TxnKind::kWrite,
                       [&]() -> absl::Status { return InsertTasksLocked(key, tasks); });
}

absl::StatusOr<RunRecord> SqliteStore::GetRun(const std::string& run_id) {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      Statement s, Prepare(absl::StrCat(kSelectRun, "WHERE run_id = ?1")));
  s.Bind(1, run_id);
  FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("reading run"));
  if (!row) return absl::NotFoundError(absl::StrCat("run ", ClipInput(run_id), " not found"));
  return ReadRun(s);
}

absl::StatusOr<std::vector<RunRecord>> SqliteStore::ListRuns(
    int limit, const std::string& after_run_id) {
  absl::MutexLock lock(&mu_);
  if (!after_run_id.empty()) {
    FLEETBENCH_ASSIGN_OR_RETURN(Statement known,
                        Prepare("SELECT 1 FROM runs WHERE run_id = ?1"));
    known.Bind(1, after_run_id);
    FLEETBENCH_ASSIGN_OR_RETURN(bool found, known.Step("finding the page's run"));
    if (!found) {
      return absl::NotFoundError(absl::StrCat("run ", ClipInput(after_run_id), " not found"));
    }
  }
  // The page starts strictly after the given run in (created, key) order,
  // so runs created in the same millisecond are neither lost nor repeated.
  FLEETBENCH_ASSIGN_OR_RETURN(
      Statement s,
      Prepare(absl::StrCat(
          kSelectRun,
          after_run_id.empty()
              ? ""
              : "WHERE (created_ms, key) < (SELECT created_ms, key FROM runs "
                "WHERE run_id = ?2) ",
          "ORDER BY created_ms DESC, key DESC LIMIT ?1")));
  s.Bind(1, limit > 0 ? limit : -1);  // SQLite: a negative LIMIT is none
  if (!after_run_id.empty()) s.Bind(2, after_run_id);
  std::vector<RunRecord> runs;
  while (true) {
    FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("listing runs"));
    if (!row) break;
    FLEETBENCH_ASSIGN_OR_RETURN(RunRecord run, ReadRun(s));
    runs.push_back(std::move(run));
  }
  return runs;
}

absl::Status SqliteStore::SetRunState(const std::string& run_id,
                                      const std::string& state,
                                      absl::Time finished) {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      int changed,
      RowsChangedBy(
          "UPDATE runs SET state = ?1, finished_ms = ?2 WHERE run_id = ?3",
          "setting run state", state, FinishedMillis(finished), run_id));
  if (changed == 0) {
    return absl::NotFoundError(absl::StrCat("run ", ClipInput(run_id), " not found"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TaskRecord>> SqliteStore::ReadTasks(Statement& s) {
  std::vector<TaskRecord> tasks;
  while (true) {
    FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("listing tasks"));
    if (!row) break;
    TaskRecord& task = tasks.emplace_back();
    task.task_id = s.Text(0);
    task.run_id = s.Text(1);
    task.node = s.Text(2);
    task.state = static_cast<v1::TaskState>(s.Int(3));
    task.reason = s.Text(4);
    FLEETBENCH_ASSIGN_OR_RETURN(
        task.outcomes,
        ParseDelimited<v1::BenchmarkOutcome>(s.Blob(5), "outcomes of a task"));
    task.updated = FromMillis(s.Int(6));
    FLEETBENCH_ASSIGN_OR_RETURN(
        task.benchmarks,
        ParseDelimited<v1::BenchmarkSpec>(s.Blob(7), "benchmarks of a task"));
    task.peer_task_id = s.Text(8);
    task.group_id = s.Text(9);
    task.group_rank = static_cast<int>(s.Int(10));
    task.group_members = SplitNames(s.Text(11));
    task.group_pass = static_cast<int>(s.Int(12));
    task.group_metric = s.Text(13);
    task.group_value = s.Double(14);
  }
  return tasks;
}

absl::StatusOr<std::vector<TaskRecord>> SqliteStore::ListTasks(
    const std::string& run_id) {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(int64_t key, RunKeyLocked(run_id));
  FLEETBENCH_ASSIGN_OR_RETURN(
      Statement s, Prepare(absl::StrCat(
                       kSelectTask, "WHERE t.run_key = ?1 ORDER BY t.seq")));
  s.Bind(1, key);
  return ReadTasks(s);
}

absl::StatusOr<std::map<std::string, int64_t>> SqliteStore::TaskLogSizesOfRun(
    const std::string& run_id) {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(int64_t key, RunKeyLocked(run_id));
  // length() of a BLOB counts bytes (of TEXT, characters).
  FLEETBENCH_ASSIGN_OR_RETURN(
      Statement s,
      Prepare("SELECT l.task_id, length(CAST(l.log AS BLOB)) FROM tasks t CROSS JOIN task_logs l "
              "ON l.task_id = t.task_id WHERE t.run_key = ?1"));
  s.Bind(1, key);
  std::map<std::string, int64_t> sizes;
  while (true) {
    FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("listing task log sizes"));
    if (!row) break;
    sizes[s.Text(0)] = s.Int(1);
  }
  return sizes;
}

absl::StatusOr<std::map<std::string, std::string>> SqliteStore::TaskLogs(
    const std::vector<std::string>& task_ids) {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(Statement s,
                              Prepare("SELECT log FROM task_logs WHERE task_id = ?1"));
  std::map<std::string, std::string> logs;
  for (const std::string& id : task_ids) {
    s.Bind(1, id);
    FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("reading a task log"));
    if (row) logs[id] = s.Text(0);
    s.Reset();
  }
  return logs;
}

absl::StatusOr<TaskRecord> SqliteStore::GetTask(const std::string& task_id) {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      Statement s, Prepare(absl::StrCat(kSelectTask, "WHERE t.task_id = ?1")));
  s.Bind(1, task_id);
  FLEETBENCH_ASSIGN_OR_RETURN(std::vector<TaskRecord> tasks, ReadTasks(s));
  if (tasks.empty()) {
    return absl::NotFoundError(absl::StrCat("task ", task_id, " not found"));
  }
  return std::move(tasks.front());
}

absl::StatusOr<std::vector<TaskRecord>> SqliteStore::ListTasksInStates(
    const std::vector<v1::TaskState>& states) {
  if (states.empty()) return std::vector<TaskRecord>{};
  std::vector<std::string> placeholders;
  for (size_t i = 1; i <= states.size(); ++i) {
    placeholders.push_back(absl::StrCat("?", i));
  }
  absl::MutexLock lock(&mu_);
  // Creation order (seq) is the order the controller queued them.
  FLEETBENCH_ASSIGN_OR_RETURN(
      Statement s, Prepare(absl::StrCat(kSelectTask, "WHERE t.state IN (",
                                        absl::StrJoin(placeholders, ", "),
                                        ") ORDER BY t.seq")));
  for (size_t i = 0; i < states.size(); ++i) {
    s.Bind(static_cast<int>(i + 1), states[i]);
  }
  return ReadTasks(s);
}

absl::Status SqliteStore::UpdateTaskLocked(const TaskRecord& task) {
  const std::string outcomes = SerializeDelimited(task.outcomes);
  // A pair's client learns its peer's address only once the server
  // listens, so a task's benchmarks can change after it was created.
  const std::string task_benchmarks = SerializeDelimited(task.benchmarks);
  FLEETBENCH_ASSIGN_OR_RETURN(
      int changed,
      RowsChangedBy("UPDATE tasks SET state = ?1, reason = ?2, outcomes = ?3, "
                    "updated_ms = ?4, benchmarks = ?6, group_metric = ?7, "
                    "group_value = ?8 WHERE task_id = ?5",
                    "updating task", task.state, task.reason, SqlBlob{outcomes},
                    ToMillis(task.updated), task.task_id,
                    SqlBlob{task_benchmarks}, task.group_metric, task.group_value));
  if (changed == 0) {
    return absl::NotFoundError(absl::StrCat("task ", task.task_id, " not found"));
  }
  return absl::OkStatus();
}

absl::Status SqliteStore::UpdateTask(const TaskRecord& task) {
  absl::MutexLock lock(&mu_);
  return UpdateTaskLocked(task);
}

}  // namespace fleetbench::storage
