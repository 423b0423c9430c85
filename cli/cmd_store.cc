// `fleetbench store copy --from FILE --to postgresql://...`: moves a
// controller's SQLite history into an empty PostgreSQL database
// (docs/operations.md, "Moving a SQLite history into PostgreSQL"), offline:
// the file's controller must be stopped (its history lock is taken here)
// and no controller may lead the database (its lease is taken here), so
// nothing is written to either side meanwhile. The copy is one transaction
// on the server: stopped or failed, it leaves the database empty. Then
// each table's rows and the samples are counted on both sides.
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cli/args.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "common/reason.h"
#include "controller/history_lock.h"
#include "storage/history_rows.h"
#include "storage/postgres_store.h"
#include "storage/sqlite_store.h"
#include "storage/store.h"

namespace fleetbench::cli {
namespace {

// Rows per statement on the server: large enough that a round trip is a
// small part of its time, small enough that a batch is a few MiB.
constexpr int kBatchRows = 5000;
// A progress line each time this many more samples are copied.
constexpr int64_t kProgressSamples = 500'000;

int CopyCommand(const Argv& argv) {
  const std::vector<FlagSpec> flags = {
      {"from", true, false, "the SQLite history (its controller stopped)"},
      {"to", true, false, "an empty PostgreSQL database: postgresql://USER@HOST[:PORT]/DB"},
      {"to-password-file", true, false,
       "the file holding the database's password (default: libpq's PGPASSFILE)"},
      kJsonFlag};
  auto args = ParseArgs(argv, flags);
  if (!args.ok()) return Usage("store copy", std::string(args.status().message()), flags);
  if (!args->positional.empty()) {
    return Usage("store copy", "unexpected argument " + ClipInput(args->positional[0]), flags);
  }
  const std::string from = args->Get("from");
  const std::string to = args->Get("to");
  if (from.empty() || to.empty()) {
    return Usage("store copy", "--from FILE and --to postgresql://... are required", flags);
  }
  std::error_code error;
  if (!std::filesystem::is_regular_file(from, error)) {
    return Usage("store copy", absl::StrCat("--from ", ClipInput(from), ": no such history file"),
                 flags);
  }
  if (!storage::IsPostgresUrl(to)) {
    return Usage("store copy",
                 absl::StrCat("--to ", ClipInput(to),
                              ": wants a PostgreSQL database, postgresql://USER@HOST[:PORT]/DB"),
                 flags);
  }

  absl::StatusOr<controller::HistoryLock> lock = controller::HistoryLock::Take(from);
  if (!lock.ok()) {
    if (lock.status().code() == absl::StatusCode::kFailedPrecondition) {
      return Fail("store copy", absl::StrCat("a controller runs on ", from,
                                             ": stop it before copying its history (",
                                             lock.status().message(), ")"));
    }
    return Fail("store copy", std::string(lock.status().message()));
  }
  storage::SqliteOptions sqlite;
  sqlite.path = from;
  sqlite.verify_on_open = true;  // a damaged file is not copied as a smaller history
  absl::StatusOr<std::unique_ptr<storage::Store>> source = storage::OpenSqliteStore(sqlite);
  if (!source.ok()) {
    return Fail("store copy", absl::StrCat(from, ": ", source.status().message()));
  }
  std::cerr << "fleetbench store copy: taking the database's leader lease (no controller may "
               "lead it during the copy)\n";
  storage::PostgresOptions postgres;
  postgres.url = to;
  postgres.password_file = args->Get("to-password-file");
  postgres.lead = true;
  absl::StatusOr<std::unique_ptr<storage::Store>> target = storage::OpenPostgresStore(postgres);
  if (!target.ok()) {
    if (target.status().code() == absl::StatusCode::kFailedPrecondition) {
      return Fail("store copy",
                  absl::StrCat(ClipInput(to), ": a controller leads this database, or its schema "
                               "is newer than this build: stop its controllers before copying (",
                               target.status().message(), ")"));
    }
    return Fail("store copy", absl::StrCat(ClipInput(to), ": ", target.status().message()));
  }

  const absl::Time start = absl::Now();
  std::map<std::string, int64_t> exported;
  int64_t next_progress = kProgressSamples;
  std::string table_now;
  absl::StatusOr<std::map<std::string, int64_t>> stored =
      (*target)->ImportHistory([&](const storage::HistorySink& sink) {
        return (*source)->ExportHistory(
            [&](const storage::HistoryBatch& batch) -> absl::Status {
              const std::string table = batch.table->name;
              if (table != table_now) {
                table_now = table;
                std::cerr << "fleetbench store copy: copying " << table << "\n";
              }
              int64_t& rows = exported[table];
              rows += static_cast<int64_t>(batch.rows.size());
              if (table == "samples" && rows >= next_progress) {
                const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
                std::cerr << absl::StrFormat("fleetbench store copy: %d samples (%.0f s)\n", rows,
                                             seconds);
                next_progress += kProgressSamples;
              }
              return sink(batch);
            },
            kBatchRows);
      });
  if (!stored.ok()) {
    if (stored.status().code() == absl::StatusCode::kUnavailable) {
      // A connection that went at the commit may have committed.
      return Fail("store copy",
                  absl::StrCat("the database went away: ", stored.status().message(),
                               "; nothing was copied unless it went at the very end (then the "
                               "database holds the whole copy: a second copy is refused)"));
    }
    return Fail("store copy", absl::StrCat("nothing copied: ", stored.status().message()));
  }
  const absl::Duration took = absl::Now() - start;

  // What arrived is what left, table by table, and the samples both
  // stores count.
  for (const storage::HistoryTable& table : storage::HistoryTables()) {
    const int64_t out = exported[table.name];
    const int64_t in = (*stored)[table.name];
    if (out != in) {
      return Fail("store copy", absl::StrCat(table.name, ": ", out, " rows sent, ", in,
                                             " stored; the database holds the copy, check it"));
    }
  }
  absl::StatusOr<int64_t> samples_from = (*source)->CountSamples();
  absl::StatusOr<int64_t> samples_to = (*target)->CountSamples();
  if (!samples_from.ok() || !samples_to.ok() || *samples_from != *samples_to) {
    return Fail("store copy",
                absl::StrCat("the samples do not match: ",
                             samples_from.ok() ? absl::StrCat(*samples_from)
                                               : std::string(samples_from.status().message()),
                             " in ", from, ", ",
                             samples_to.ok() ? absl::StrCat(*samples_to)
                                             : std::string(samples_to.status().message()),
                             " in the database, which holds the copy: check it"));
  }
  const double seconds = absl::ToDoubleSeconds(took);
  const double rate = seconds > 0 ? static_cast<double>(*samples_to) / seconds : 0;
  if (args->Has("json")) {
    std::string tables;
    for (const auto& [table, rows] : *stored) {
      absl::StrAppend(&tables, tables.empty() ? "" : ", ", "\"", table, "\": ", rows);
    }
    std::cout << absl::StrFormat(
        "{\"tables\": {%s}, \"samples\": %d, \"seconds\": %.3f, \"samples_per_s\": %.0f}\n",
        tables, *samples_to, seconds, rate);
    return kExitOk;
  }
  std::cout << absl::StrFormat("%-22s %12s\n", "TABLE", "ROWS");
  for (const storage::HistoryTable& table : storage::HistoryTables()) {
    std::cout << absl::StrFormat("%-22s %12d\n", table.name, (*stored)[table.name]);
  }
  std::cout << absl::StrFormat(
      "copied %d samples in %.1f s (%.0f samples/s); every table's rows counted on both sides\n",
      *samples_to, seconds, rate);
  return kExitOk;
}

}  // namespace

int StoreCommand(const Argv& argv) {
  const std::vector<FlagSpec> none;
  constexpr char kUsage[] =
      "usage: fleetbench store copy --from FILE --to postgresql://USER@HOST[:PORT]/DB\n"
      "  copy: move a SQLite history into an empty PostgreSQL database\n";
  if (argv.empty()) {
    std::cerr << kUsage;
    return kExitUsage;
  }
  if (argv[0] == "--help" || argv[0] == "-h") {
    std::cout << kUsage << "\n";
    return CopyCommand({"--help"});
  }
  if (argv[0] == "copy") return CopyCommand(Argv(argv.begin() + 1, argv.end()));
  return Usage("store", absl::StrCat("unknown subcommand ", ClipInput(argv[0]), "; try copy"),
               none);
}

}  // namespace fleetbench::cli
