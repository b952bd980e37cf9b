//! The SQLite schema as forward-only migrations. Migration N brings a database from
//! version N-1 to N inside one transaction and records itself in `schema_version`.
//! Never edit a released migration: add the next one.
//!
//! The tables mirror the result model so a PostgreSQL backend can use the same shape:
//! `hosts` (the machine), `runs` (one command invocation) with `labels` and
//! `run_problems` (the steps of `run` that did not give their result), `outcomes`
//! (one per measurement), `metrics`, `histograms` + `histogram_buckets` (the sparse
//! latency histogram) and `series` (one row per sample and value name); `soaks` and
//! `soak_slices` for `hostbench soak`.

/// The newest schema this build knows. A database at a higher version was written by a
/// newer hostbench and is refused untouched.
pub const LATEST_VERSION: u32 = MIGRATIONS.len() as u32;

/// SQLite's `application_id` header field: marks the file as ours, so a database of
/// another program is never mistaken for an empty one. ("HBen")
pub const APPLICATION_ID: i32 = 0x4842_656e;

pub const MIGRATIONS: &[&str] = &[
    // 1: the result model.
    "
    CREATE TABLE schema_version (
        version      INTEGER PRIMARY KEY,
        applied_at   TEXT NOT NULL,
        tool_version TEXT NOT NULL
    );
    CREATE TABLE hosts (
        id             INTEGER PRIMARY KEY,
        -- the static facts below as JSON: equal machines share a row
        fingerprint    TEXT NOT NULL UNIQUE,
        hostname       TEXT NOT NULL,
        cpu_model      TEXT NOT NULL,
        logical_cpus   INTEGER NOT NULL,
        memory_bytes   INTEGER NOT NULL,
        kernel         TEXT NOT NULL,
        os             TEXT NOT NULL,
        arch           TEXT NOT NULL,
        virtualization TEXT,
        cloud          TEXT,
        clocksource    TEXT,
        caches         TEXT NOT NULL,
        first_seen     TEXT NOT NULL
    );
    CREATE TABLE runs (
        id             INTEGER PRIMARY KEY,
        started_at     TEXT NOT NULL,
        saved_at       TEXT NOT NULL,
        command        TEXT NOT NULL,
        host_id        INTEGER NOT NULL REFERENCES hosts(id),
        profile        TEXT,
        interrupted    INTEGER NOT NULL,
        schema_version INTEGER NOT NULL,
        tool_version   TEXT NOT NULL
    );
    CREATE TABLE labels (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        key    TEXT NOT NULL,
        value  TEXT NOT NULL,
        PRIMARY KEY (run_id, key)
    );
    CREATE TABLE outcomes (
        id              INTEGER PRIMARY KEY,
        run_id          INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        seq             INTEGER NOT NULL,
        workload        TEXT NOT NULL,
        test            TEXT,
        spec            TEXT NOT NULL,
        started_at      TEXT NOT NULL,
        elapsed_s       REAL,
        interrupted     INTEGER NOT NULL,
        schema_version  INTEGER NOT NULL,
        tool            TEXT NOT NULL,
        tool_version    TEXT NOT NULL,
        cpu_user_s      REAL,
        cpu_system_s    REAL,
        cpu_utilisation REAL,
        notes           TEXT NOT NULL,
        threads         TEXT NOT NULL,
        host_id         INTEGER NOT NULL REFERENCES hosts(id),
        load_1          REAL,
        load_5          REAL,
        load_15         REAL,
        steal_s         REAL,
        UNIQUE (run_id, seq)
    );
    CREATE TABLE metrics (
        outcome_id INTEGER NOT NULL REFERENCES outcomes(id) ON DELETE CASCADE,
        seq        INTEGER NOT NULL,
        name       TEXT NOT NULL,
        value      REAL,
        unit       TEXT NOT NULL,
        better     TEXT NOT NULL,
        threads    INTEGER,
        variant    TEXT,
        ws_bytes   INTEGER,
        ws_tier    TEXT,
        PRIMARY KEY (outcome_id, seq)
    );
    CREATE TABLE histograms (
        outcome_id     INTEGER PRIMARY KEY REFERENCES outcomes(id) ON DELETE CASCADE,
        count          INTEGER NOT NULL,
        min_ns         REAL,
        mean_ns        REAL,
        max_ns         REAL,
        sum_ns         REAL,
        percentiles    TEXT NOT NULL,
        layout_min_ns  REAL NOT NULL,
        layout_max_ns  REAL NOT NULL,
        layout_buckets INTEGER NOT NULL
    );
    CREATE TABLE histogram_buckets (
        outcome_id INTEGER NOT NULL REFERENCES histograms(outcome_id) ON DELETE CASCADE,
        value_ns   REAL NOT NULL,
        count      INTEGER NOT NULL
    );
    CREATE TABLE series (
        outcome_id INTEGER NOT NULL REFERENCES outcomes(id) ON DELETE CASCADE,
        seq        INTEGER NOT NULL,
        at_s       REAL NOT NULL,
        span_s     REAL NOT NULL,
        name       TEXT NOT NULL,
        value      REAL
    );
    CREATE INDEX outcomes_by_run ON outcomes(run_id);
    CREATE INDEX buckets_by_outcome ON histogram_buckets(outcome_id);
    CREATE INDEX series_by_outcome ON series(outcome_id, seq);
    ",
    // 2: indexes for history's filters (host, label, workload, date).
    "
    CREATE INDEX runs_by_time ON runs(started_at);
    CREATE INDEX runs_by_host ON runs(host_id);
    CREATE INDEX labels_by_pair ON labels(key, value);
    CREATE INDEX outcomes_by_workload ON outcomes(workload, run_id);
    CREATE INDEX hosts_by_name ON hosts(hostname);
    ",
    // 3: soaks (`hostbench soak`): the plan, its state, and one row per slice, linked
    // to the run that holds the slice's outcomes. Times of the schedule in Unix ms.
    "
    CREATE TABLE soaks (
        id            INTEGER PRIMARY KEY,
        created_at    TEXT NOT NULL,
        updated_at    TEXT NOT NULL,
        -- running, stopped (Ctrl-C), finished, failed (the workload was refused)
        state         TEXT NOT NULL,
        pid           INTEGER,
        -- the workload's native command line, a JSON array of words
        workload      TEXT NOT NULL,
        start_ms      INTEGER NOT NULL,
        every_ms      INTEGER NOT NULL,
        for_ms        INTEGER NOT NULL,
        duration_ms   INTEGER NOT NULL,
        threshold_pct REAL NOT NULL,
        -- labels given to every slice's run, a JSON object
        labels        TEXT NOT NULL
    );
    CREATE TABLE soak_slices (
        soak_id    INTEGER NOT NULL REFERENCES soaks(id) ON DELETE CASCADE,
        seq        INTEGER NOT NULL,
        due_ms     INTEGER NOT NULL,
        -- done, missed, failed
        status     TEXT NOT NULL,
        run_id     INTEGER REFERENCES runs(id) ON DELETE SET NULL,
        started_at TEXT,
        metric     TEXT,
        value      REAL,
        unit       TEXT,
        better     TEXT,
        note       TEXT,
        PRIMARY KEY (soak_id, seq)
    );
    CREATE INDEX soak_slices_by_run ON soak_slices(run_id);
    ",
    // 4: one result model under every front end. A run keeps its exact command line
    // (a JSON array of words: `["sysbench","cpu","--cpu-max-prime=20000","run"]`;
    // NULL for runs saved before), an outcome the settings that identify what it
    // measured (`Outcome::params`, a JSON object; '{}' for outcomes saved before).
    "
    ALTER TABLE runs ADD COLUMN command_line TEXT;
    ALTER TABLE outcomes ADD COLUMN params TEXT NOT NULL DEFAULT '{}';
    ",
    // 5: the steps of `hostbench run` that did not give their result (skipped,
    // failed, interrupted) with the reason the run printed, so that `show` prints the
    // summary the run printed. Runs saved before have none: their summary is the
    // outcomes' alone, as it always was.
    "
    CREATE TABLE run_problems (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        seq    INTEGER NOT NULL,
        -- the step's name (redis, bandwidth, disk, ...) and its summary area
        step   TEXT NOT NULL,
        area   TEXT NOT NULL,
        -- failed, skipped, interrupted
        status TEXT NOT NULL,
        reason TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
    );
    ",
];
