#include "storage/migrations.h"
#include "storage/sqlite_store.h"

namespace fleetbench::storage {

const std::vector<SchemaMigration>& SchemaMigrations() {
  static const auto* const kMigrations = new std::vector<SchemaMigration>{
      {1, "nodes, facts history, runs, tasks, metrics, samples",
       R"sql(
CREATE TABLE nodes (
  id            INTEGER PRIMARY KEY,
  name          TEXT NOT NULL UNIQUE,
  agent_version TEXT NOT NULL DEFAULT '',
  first_seen_ms INTEGER NOT NULL,
  last_seen_ms  INTEGER NOT NULL
);
CREATE TABLE node_labels (
  node_id INTEGER NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
  key     TEXT NOT NULL,
  value   TEXT NOT NULL,
  PRIMARY KEY (node_id, key)
) WITHOUT ROWID;
-- One row per distinct facts version: a row is appended only when a node's
-- facts differ from its newest row.
CREATE TABLE node_facts (
  id      INTEGER PRIMARY KEY,
  node_id INTEGER NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
  seen_ms INTEGER NOT NULL,
  facts   BLOB NOT NULL            -- serialized fleetbench.v1.NodeFacts
);
CREATE INDEX node_facts_by_node ON node_facts(node_id, id);

CREATE TABLE runs (
  key          INTEGER PRIMARY KEY,  -- compact id used by samples
  run_id       TEXT NOT NULL UNIQUE,
  state        TEXT NOT NULL,
  created_ms   INTEGER NOT NULL,
  finished_ms  INTEGER,              -- NULL while not finished
  benchmarks   BLOB NOT NULL,        -- length-delimited BenchmarkSpec messages
  max_parallel INTEGER NOT NULL DEFAULT 0,
  suite        TEXT NOT NULL DEFAULT ''
);
CREATE INDEX runs_by_created ON runs(created_ms);

CREATE TABLE tasks (
  seq        INTEGER PRIMARY KEY,    -- creation order
  task_id    TEXT NOT NULL UNIQUE,
  run_key    INTEGER NOT NULL REFERENCES runs(key),
  node       TEXT NOT NULL,
  state      INTEGER NOT NULL,       -- fleetbench.v1.TaskState
  reason     TEXT NOT NULL DEFAULT '',
  outcomes   BLOB NOT NULL,          -- length-delimited BenchmarkOutcome messages
  updated_ms INTEGER NOT NULL
);
CREATE INDEX tasks_by_run ON tasks(run_key);
CREATE INDEX tasks_by_state ON tasks(state);

CREATE TABLE metrics (
  id   INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE
);

-- Clustered on the agent-made ULID: a resent sample hits the primary key and
-- is ignored, and time-ordered ids make inserts append. run, node and metric
-- are stored as integer keys to keep rows and index entries small; the store
-- resolves them itself, so no foreign-key lookups slow the insert path.
CREATE TABLE samples (
  id        TEXT PRIMARY KEY,
  run_key   INTEGER NOT NULL,
  node_id   INTEGER NOT NULL,
  metric_id INTEGER NOT NULL,
  benchmark TEXT NOT NULL,
  value     REAL,                    -- NULL stands for NaN
  unit      TEXT NOT NULL,
  params    BLOB,                    -- a serialized Sample holding only params
  time_ms   INTEGER NOT NULL
) WITHOUT ROWID;
-- Run-major, so a commit touches only the few pages of the runs in flight
-- (a node-major index would touch one page per node per commit). Serves
-- ListSamplesForRun and History's row lookups.
CREATE INDEX samples_by_run
  ON samples(run_key, node_id, metric_id, time_ms);

-- Ranking points: (metric, node, run, value, time) of every stored sample,
-- packed 40 bytes each (layout in sqlite_store.cc), written in the same
-- transaction as the samples. A commit appends its points as one row of
-- recent_points; once those add up to a few ten thousand points (or a few
-- hundred rows) one commit folds them into per-metric chunks. Ranking a
-- million points reads a few dozen chunk rows instead of a million index
-- entries.
CREATE TABLE metric_points (
  id          INTEGER PRIMARY KEY,   -- write order
  metric_id   INTEGER NOT NULL REFERENCES metrics(id),
  min_time_ms INTEGER NOT NULL,
  max_time_ms INTEGER NOT NULL,
  n_points    INTEGER NOT NULL,
  points      BLOB NOT NULL
);
CREATE INDEX metric_points_by_metric ON metric_points(metric_id);
CREATE TABLE recent_points (
  id       INTEGER PRIMARY KEY,
  n_points INTEGER NOT NULL,
  points   BLOB NOT NULL             -- any metrics, in commit order
);
)sql"},
      {2, "tasks carry their own benchmarks and their pair partner",
       R"sql(
-- The two halves of a pairwise benchmark (net) have their own specs
-- (role=server / role=client) and name each other. Empty: the run's list.
ALTER TABLE tasks ADD COLUMN benchmarks BLOB NOT NULL DEFAULT x'';
ALTER TABLE tasks ADD COLUMN peer_task_id TEXT NOT NULL DEFAULT '';
)sql"},
      {3, "metric descriptors declared by the agents' plugins",
       R"sql(
-- What a plugin says one of its metrics is (v1.MetricDescriptor), as the
-- newest hello that declared it said. A row exists only for a declared
-- metric; a metric with samples but no row was never declared. Ranking reads
-- the unit and direction from here.
CREATE TABLE metric_descriptors (
  metric_id   INTEGER PRIMARY KEY REFERENCES metrics(id),
  unit        TEXT NOT NULL,
  direction   INTEGER NOT NULL,      -- fleetbench.v1.MetricDirection
  description TEXT NOT NULL,
  benchmark   TEXT NOT NULL          -- the plugin that produces it
);
)sql"},
      {4, "the price catalog, rows with the date they take effect",
       R"sql(
-- One row per offer and date (docs/ranking.md, Price catalog): the price
-- in force from effective_from_ms until the offer's next row. A ranking
-- costs each sample at the row in force at the sample's time.
CREATE TABLE prices (
  provider            TEXT NOT NULL,
  region              TEXT NOT NULL,
  instance_type       TEXT NOT NULL,
  effective_from_ms   INTEGER NOT NULL,
  price_per_hour      REAL NOT NULL,
  spot_price_per_hour REAL,          -- NULL: no spot offer
  currency            TEXT NOT NULL,
  imported_ms         INTEGER NOT NULL,
  PRIMARY KEY (provider, region, instance_type, effective_from_ms)
) WITHOUT ROWID;
)sql"},
      {5, "nodes taken out of the fleet keep their row while they have history",
       R"sql(
-- Set by `fleetbench nodes rm` and node expiry for a node that has tasks
-- (and so maybe samples): it leaves the node list, its results stay
-- readable under its name. The node is removed while removed_ms >=
-- last_seen_ms: a later hello (which moves last_seen_ms) brings it back
-- without UpsertNode knowing the column.
ALTER TABLE nodes ADD COLUMN removed_ms INTEGER;
)sql"},
      {6, "group tasks: group, rank, members and pass; group runs' options and nodes",
       R"sql(
-- A member of a group task (docs/collectives.md) keeps what a
-- restarted controller needs to dispatch its group again: the group, its
-- rank, the member nodes in rank order (one name per line) and the pass
-- that planned it; rank 0 also keeps the group's headline sample. A run
-- keeps its group options (v1.GroupOptions) and its nodes (one per line),
-- over which the next pass is planned. Empty: not a group task / run.
ALTER TABLE tasks ADD COLUMN group_id TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN group_rank INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN group_members TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN group_pass INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN group_metric TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN group_value REAL NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN group_options BLOB NOT NULL DEFAULT x'';
ALTER TABLE runs ADD COLUMN group_nodes TEXT NOT NULL DEFAULT '';
)sql"},
      {7, "schedules and their firings",
       R"sql(
-- A run the controller starts on a cron expression (docs/schedules.md).
-- handled_until_ms is the newest cron time the controller has handled
-- (fired, skipped or recorded missed), so a restart knows what it missed;
-- last_run_id is the run of the newest firing that started one, so a
-- firing while it is still going is skipped.
CREATE TABLE schedules (
  name             TEXT PRIMARY KEY,
  cron             TEXT NOT NULL,
  timezone         TEXT NOT NULL,
  run              BLOB NOT NULL,    -- serialized fleetbench.v1.StartRunRequest
  created_ms       INTEGER NOT NULL,
  handled_until_ms INTEGER NOT NULL,
  last_run_id      TEXT NOT NULL DEFAULT ''
) WITHOUT ROWID;
-- One row per firing, in firing order; removing a schedule removes them.
CREATE TABLE schedule_firings (
  id            INTEGER PRIMARY KEY,
  schedule      TEXT NOT NULL REFERENCES schedules(name) ON DELETE CASCADE,
  slot_ms       INTEGER NOT NULL,
  fired_ms      INTEGER NOT NULL,
  outcome       INTEGER NOT NULL,    -- fleetbench.v1.FiringOutcome
  run_id        TEXT NOT NULL DEFAULT '',
  reason        TEXT NOT NULL DEFAULT '',
  offline_nodes TEXT NOT NULL DEFAULT '',  -- names, space-separated
  manual        INTEGER NOT NULL DEFAULT 0,
  slots         INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX schedule_firings_by_schedule ON schedule_firings(schedule, id);
-- A run's page names the schedule that started it and the nodes offline.
CREATE INDEX schedule_firings_by_run ON schedule_firings(run_id) WHERE run_id != '';
)sql"},
      {8, "node identities: one client certificate per enrolled node",
       R"sql(
-- The certificate the controller's CA issued to a node. One row per node
-- name: re-enrolling after a revocation replaces it. A row whose
-- revoked_ms is NULL is the node's live identity; while it lives, no
-- enrollment can take the name and no stream without the certificate may
-- speak as it.
CREATE TABLE node_identities (
  node          TEXT PRIMARY KEY,
  serial        TEXT NOT NULL,      -- hex
  fingerprint   TEXT NOT NULL,      -- sha256:HEX of the certificate's DER
  not_after_ms  INTEGER NOT NULL,
  enrolled_ms   INTEGER NOT NULL,
  enrolled_by   TEXT NOT NULL DEFAULT '',  -- the enrollment token's name
  revoked_ms    INTEGER                   -- NULL while valid
) WITHOUT ROWID;
)sql"},
      {9, "API tokens with roles, controller settings, the audit of mutating calls",
       R"sql(
-- A person's or a script's token (docs/security.md): its name, role and
-- life. Only a SHA-256 of the secret is kept; token_id is the public part
-- of the token text (fbt1.<token_id>.<secret>) that finds the row.
-- Revoked and expired rows stay listed until their name is taken again.
CREATE TABLE api_tokens (
  name         TEXT PRIMARY KEY,
  token_id     TEXT NOT NULL UNIQUE,
  secret_hash  BLOB NOT NULL,        -- SHA-256 of the secret
  role         TEXT NOT NULL,        -- enroll, viewer, operator, admin
  created_ms   INTEGER NOT NULL,
  expires_ms   INTEGER,              -- NULL: never
  revoked_ms   INTEGER,              -- NULL: not revoked
  last_used_ms INTEGER               -- NULL: never used
) WITHOUT ROWID;
-- Small controller-wide switches (shared_token: on/off).
CREATE TABLE settings (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
-- One row per mutating call of the user API, in call order; the oldest
-- rows go once the table passes its bound (docs/security.md, Audit).
CREATE TABLE audit (
  id        INTEGER PRIMARY KEY,
  time_ms   INTEGER NOT NULL,
  principal TEXT NOT NULL,
  role      TEXT NOT NULL,
  rpc       TEXT NOT NULL,
  target    TEXT NOT NULL DEFAULT '',
  code      INTEGER NOT NULL,        -- google.rpc code, 0 for OK
  message   TEXT NOT NULL DEFAULT ''
);
CREATE INDEX audit_by_time ON audit(time_ms);
)sql"},
      {10, "day summaries: each node's values of a metric per UTC day, for ranking",
       R"sql(
-- One row per (metric, UTC day, node) with a value in metric_points: a
-- ValueSketch of the day's values (common/value_sketch.h) and when the
-- first and last were measured. Rows are kept when retention removes the
-- samples. Points still in recent_points are not in them yet (they join
-- when folded). The store fills the table from the existing chunks right
-- after this step (the setting below says it must), in C++: SQL cannot
-- build a sketch.
CREATE TABLE metric_day_summaries (
  metric_id INTEGER NOT NULL,
  day       INTEGER NOT NULL,   -- days since 1970-01-01 UTC
  node_id   INTEGER NOT NULL,
  first_ms  INTEGER NOT NULL,
  last_ms   INTEGER NOT NULL,
  sketch    BLOB NOT NULL,
  PRIMARY KEY (metric_id, day, node_id)
) WITHOUT ROWID;
INSERT INTO settings(key, value) VALUES ('day_summaries', 'to build');
)sql"},
      {11, "compact samples: clustered by run, node, metric and time; ids as 16 bytes; kinds interned",
       R"sql(
-- What samples repeat (benchmark, unit and params: the same few per
-- plugin and node) is stored once per distinct combination.
CREATE TABLE sample_kinds (
  id        INTEGER PRIMARY KEY,
  benchmark TEXT NOT NULL,
  unit      TEXT NOT NULL,
  params    BLOB NOT NULL,           -- a serialized Sample holding only params; x'' for none
  UNIQUE (benchmark, unit, params)
);
INSERT INTO sample_kinds(benchmark, unit, params)
  SELECT DISTINCT benchmark, unit, coalesce(params, x'') FROM samples;
-- Clustered in the order of the old samples_by_run index, which goes: the
-- table is the index. A resent sample has the same five key columns (the
-- agent resends it unchanged) and is ignored, as before. The id is a
-- ULID's 16 bytes (storage/sqlite_sample_ids.h), or its text otherwise.
CREATE TABLE compact_samples (
  run_key   INTEGER NOT NULL,
  node_id   INTEGER NOT NULL,
  metric_id INTEGER NOT NULL,
  time_ms   INTEGER NOT NULL,
  id        NOT NULL,
  kind      INTEGER NOT NULL,        -- sample_kinds.id
  value     REAL,                    -- NULL stands for NaN
  PRIMARY KEY (run_key, node_id, metric_id, time_ms, id)
) WITHOUT ROWID;
INSERT INTO compact_samples(run_key, node_id, metric_id, time_ms, id, kind, value)
  SELECT s.run_key, s.node_id, s.metric_id, s.time_ms, fleetbench_sample_id(s.id), k.id, s.value
  FROM samples s INDEXED BY samples_by_run
  CROSS JOIN sample_kinds k
    ON k.benchmark = s.benchmark AND k.unit = s.unit AND k.params = coalesce(s.params, x'')
  ORDER BY s.run_key, s.node_id, s.metric_id, s.time_ms;
DROP TABLE samples;
ALTER TABLE compact_samples RENAME TO samples;
)sql"},
      {12, "measured params stored with the sample, not in its kind",
       R"sql(
-- A plugin's params that are numbers (runs, min_/max_/p10_/p90_<unit>,
-- spread ...) change with every sample: kept in samples.measured, their
-- keys in the kind (storage/sample_params.h), so a kind is what repeats.
-- A kind keeps its first sample's values as measured_default and a sample
-- only the fields that differ (NULL: none does). Existing kinds keep all
-- their params, and their samples read them back as before.
CREATE TABLE sample_kinds_12 (
  id            INTEGER PRIMARY KEY,
  benchmark     TEXT NOT NULL,
  unit          TEXT NOT NULL,
  params        BLOB NOT NULL,           -- the text params; x'' for none
  measured_keys BLOB NOT NULL DEFAULT x'', -- the measured params' keys
  measured_default TEXT NOT NULL DEFAULT '', -- its first sample's measured values
  UNIQUE (benchmark, unit, params, measured_keys)
);
INSERT INTO sample_kinds_12(id, benchmark, unit, params)
  SELECT id, benchmark, unit, params FROM sample_kinds;
DROP TABLE sample_kinds;
ALTER TABLE sample_kinds_12 RENAME TO sample_kinds;
-- The measured values in the kind's key order, joined by ',', a field
-- left empty where it is the default's; NULL: all the default's.
ALTER TABLE samples ADD COLUMN measured TEXT;
)sql"},
      {13, "task logs",
       R"sql(
-- The end of what a task's benchmarks printed (a workload's output), stored
-- with its final report; apart from tasks so that listing a run's tasks
-- never reads them. Retention removes them by time_ms, the task's end.
CREATE TABLE task_logs (
  task_id TEXT PRIMARY KEY REFERENCES tasks(task_id),
  time_ms INTEGER NOT NULL,
  log     TEXT NOT NULL
);
CREATE INDEX task_logs_by_time ON task_logs(time_ms);
)sql"},
      {14, "reliability: time online and interruptions",
       R"sql(
-- Each node's time online per UTC day (rates are per node-hour) and every
-- interruption with its kind. By node name, not key: a node taken out of
-- the fleet keeps its record, and these rows never hold up its removal.
CREATE TABLE node_uptime (
  node      TEXT NOT NULL,
  day       INTEGER NOT NULL,
  online_ms INTEGER NOT NULL,
  PRIMARY KEY (node, day)
) WITHOUT ROWID;
CREATE INDEX node_uptime_by_day ON node_uptime(day);
CREATE TABLE interruptions (
  id      INTEGER PRIMARY KEY,
  node    TEXT NOT NULL,
  time_ms INTEGER NOT NULL,
  kind    TEXT NOT NULL,
  detail  TEXT NOT NULL
);
CREATE INDEX interruptions_by_time ON interruptions(time_ms);
)sql"},
  };
  return *kMigrations;
}

int LatestSchemaVersion() { return SchemaMigrations().back().version; }

}  // namespace fleetbench::storage
