#include "storage/postgres_schema.h"

namespace fleetbench::storage {

// Step 1 is the whole of SQLite's schema 14 in
// PostgreSQL's terms (docs/storage.md, PostgreSQL): the same tables, with
// BIGSERIAL keys, BYTEA for messages, and samples as plain rows (the
// server's indexes do what SQLite's ranking chunks do).
const std::vector<PgMigration>& PgMigrations() {
  static const auto* const kMigrations = new std::vector<PgMigration>{
      {1, "the history: nodes, runs, tasks, samples, ranking summaries, catalog, "
          "schedules, security, reliability",
       R"sql(
CREATE TABLE nodes (
  id            BIGSERIAL PRIMARY KEY,
  name          TEXT COLLATE "C" NOT NULL UNIQUE,
  agent_version TEXT NOT NULL DEFAULT '',
  first_seen_ms BIGINT NOT NULL,
  last_seen_ms  BIGINT NOT NULL,
  -- Removed while removed_ms >= last_seen_ms (a later hello brings it back).
  removed_ms    BIGINT
);
CREATE TABLE node_labels (
  node_id BIGINT NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
  key     TEXT COLLATE "C" NOT NULL,
  value   TEXT NOT NULL,
  PRIMARY KEY (node_id, key)
);
CREATE TABLE node_facts (
  id      BIGSERIAL PRIMARY KEY,
  node_id BIGINT NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
  seen_ms BIGINT NOT NULL,
  facts   BYTEA NOT NULL            -- serialized fleetbench.v1.NodeFacts
);
CREATE INDEX node_facts_by_node ON node_facts(node_id, id);

CREATE TABLE runs (
  key           BIGSERIAL PRIMARY KEY,
  run_id        TEXT COLLATE "C" NOT NULL UNIQUE,
  state         TEXT NOT NULL,
  created_ms    BIGINT NOT NULL,
  finished_ms   BIGINT,             -- NULL while not finished
  benchmarks    BYTEA NOT NULL,     -- delimited BenchmarkSpec messages
  max_parallel  BIGINT NOT NULL DEFAULT 0,
  suite         TEXT NOT NULL DEFAULT '',
  group_options BYTEA NOT NULL DEFAULT '',
  group_nodes   TEXT NOT NULL DEFAULT ''
);
CREATE INDEX runs_by_created ON runs(created_ms, key);

CREATE TABLE tasks (
  seq           BIGSERIAL PRIMARY KEY,   -- creation order
  task_id       TEXT COLLATE "C" NOT NULL UNIQUE,
  run_key       BIGINT NOT NULL REFERENCES runs(key),
  node          TEXT COLLATE "C" NOT NULL,
  state         INTEGER NOT NULL,        -- fleetbench.v1.TaskState
  reason        TEXT NOT NULL DEFAULT '',
  outcomes      BYTEA NOT NULL,          -- delimited BenchmarkOutcome messages
  updated_ms    BIGINT NOT NULL,
  benchmarks    BYTEA NOT NULL DEFAULT '',
  peer_task_id  TEXT NOT NULL DEFAULT '',
  group_id      TEXT NOT NULL DEFAULT '',
  group_rank    INTEGER NOT NULL DEFAULT 0,
  group_members TEXT NOT NULL DEFAULT '',
  group_pass    INTEGER NOT NULL DEFAULT 0,
  group_metric  TEXT NOT NULL DEFAULT '',
  group_value   DOUBLE PRECISION NOT NULL DEFAULT 0
);
CREATE INDEX tasks_by_run ON tasks(run_key, seq);
CREATE INDEX tasks_by_state ON tasks(state, seq);
CREATE INDEX tasks_by_node ON tasks(node);
CREATE TABLE task_logs (
  task_id TEXT COLLATE "C" PRIMARY KEY REFERENCES tasks(task_id),
  time_ms BIGINT NOT NULL,
  log     TEXT NOT NULL
);
CREATE INDEX task_logs_by_time ON task_logs(time_ms);

CREATE TABLE metrics (
  id   BIGSERIAL PRIMARY KEY,
  name TEXT COLLATE "C" NOT NULL UNIQUE
);
-- One row per sample; seq is the write order (the newest runs' read).
CREATE TABLE samples (
  id        TEXT COLLATE "C" PRIMARY KEY,
  seq       BIGSERIAL NOT NULL,
  run_key   BIGINT NOT NULL,
  node_id   BIGINT NOT NULL,
  metric_id BIGINT NOT NULL,
  time_ms   BIGINT NOT NULL,
  value     DOUBLE PRECISION,          -- NULL stands for NaN
  benchmark TEXT NOT NULL,
  unit      TEXT NOT NULL,
  params    BYTEA NOT NULL DEFAULT ''  -- a serialized Sample holding only params
);
CREATE INDEX samples_by_run ON samples(run_key, node_id, metric_id, time_ms, id);
CREATE INDEX samples_by_metric_time ON samples(metric_id, time_ms);
CREATE INDEX samples_by_metric_seq ON samples(metric_id, seq);
CREATE INDEX samples_by_node ON samples(node_id, metric_id, time_ms, id);
CREATE INDEX samples_by_time ON samples(time_ms, id);
-- Each node's values of a metric per UTC day (common/value_sketch.h),
-- kept when retention removes the samples.
CREATE TABLE metric_day_summaries (
  metric_id BIGINT NOT NULL,
  day       BIGINT NOT NULL,
  node_id   BIGINT NOT NULL,
  first_ms  BIGINT NOT NULL,
  last_ms   BIGINT NOT NULL,
  sketch    BYTEA NOT NULL,
  PRIMARY KEY (metric_id, day, node_id)
);
CREATE TABLE metric_descriptors (
  metric_id   BIGINT PRIMARY KEY REFERENCES metrics(id),
  unit        TEXT NOT NULL,
  direction   INTEGER NOT NULL,
  description TEXT NOT NULL,
  benchmark   TEXT NOT NULL
);

CREATE TABLE prices (
  provider            TEXT COLLATE "C" NOT NULL,
  region              TEXT COLLATE "C" NOT NULL,
  instance_type       TEXT COLLATE "C" NOT NULL,
  effective_from_ms   BIGINT NOT NULL,
  price_per_hour      DOUBLE PRECISION NOT NULL,
  spot_price_per_hour DOUBLE PRECISION,  -- NULL: no spot offer
  currency            TEXT NOT NULL,
  imported_ms         BIGINT NOT NULL,
  PRIMARY KEY (provider, region, instance_type, effective_from_ms)
);

CREATE TABLE schedules (
  name             TEXT COLLATE "C" PRIMARY KEY,
  cron             TEXT NOT NULL,
  timezone         TEXT NOT NULL,
  run              BYTEA NOT NULL,    -- serialized fleetbench.v1.StartRunRequest
  created_ms       BIGINT NOT NULL,
  handled_until_ms BIGINT NOT NULL,
  last_run_id      TEXT NOT NULL DEFAULT ''
);
CREATE TABLE schedule_firings (
  id            BIGSERIAL PRIMARY KEY,
  schedule      TEXT COLLATE "C" NOT NULL REFERENCES schedules(name) ON DELETE CASCADE,
  slot_ms       BIGINT NOT NULL,
  fired_ms      BIGINT NOT NULL,
  outcome       INTEGER NOT NULL,
  run_id        TEXT NOT NULL DEFAULT '',
  reason        TEXT NOT NULL DEFAULT '',
  offline_nodes TEXT NOT NULL DEFAULT '',
  manual        BOOLEAN NOT NULL DEFAULT FALSE,
  slots         BIGINT NOT NULL DEFAULT 1
);
CREATE INDEX schedule_firings_by_schedule ON schedule_firings(schedule, id);
CREATE INDEX schedule_firings_by_run ON schedule_firings(run_id) WHERE run_id <> '';

CREATE TABLE node_identities (
  node         TEXT COLLATE "C" PRIMARY KEY,
  serial       TEXT NOT NULL,
  fingerprint  TEXT NOT NULL,
  not_after_ms BIGINT NOT NULL,
  enrolled_ms  BIGINT NOT NULL,
  enrolled_by  TEXT NOT NULL DEFAULT '',
  revoked_ms   BIGINT                 -- NULL while valid
);
CREATE TABLE api_tokens (
  name         TEXT COLLATE "C" PRIMARY KEY,
  token_id     TEXT NOT NULL UNIQUE,
  secret_hash  BYTEA NOT NULL,
  role         TEXT NOT NULL,
  created_ms   BIGINT NOT NULL,
  expires_ms   BIGINT,
  revoked_ms   BIGINT,
  last_used_ms BIGINT
);
CREATE TABLE settings (
  key   TEXT COLLATE "C" PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE audit (
  id        BIGSERIAL PRIMARY KEY,
  time_ms   BIGINT NOT NULL,
  principal TEXT NOT NULL,
  role      TEXT NOT NULL,
  rpc       TEXT NOT NULL,
  target    TEXT NOT NULL DEFAULT '',
  code      INTEGER NOT NULL,
  message   TEXT NOT NULL DEFAULT ''
);
CREATE INDEX audit_by_time ON audit(time_ms);

CREATE TABLE node_uptime (
  node      TEXT COLLATE "C" NOT NULL,
  day       BIGINT NOT NULL,
  online_ms BIGINT NOT NULL,
  PRIMARY KEY (node, day)
);
CREATE INDEX node_uptime_by_day ON node_uptime(day);
CREATE TABLE interruptions (
  id      BIGSERIAL PRIMARY KEY,
  node    TEXT COLLATE "C" NOT NULL,
  time_ms BIGINT NOT NULL,
  kind    TEXT COLLATE "C" NOT NULL,
  detail  TEXT NOT NULL
);
CREATE INDEX interruptions_by_time ON interruptions(time_ms);
)sql"},
  };
  return *kMigrations;
}

}  // namespace fleetbench::storage
