//! The SQLite store: one file, WAL journal, forward-only migrations (`schema.rs`).
//!
//! Opening is careful with files that are not ours: the header is read before SQLite
//! touches the file, and only an empty file, an empty SQLite database or one carrying
//! our `application_id` is ever written to.

use super::schema::{APPLICATION_ID, LATEST_VERSION, MIGRATIONS};
use super::{
    NewRun, RunFilter, RunInfo, StepProblem, StepStatus, Store, StoreError, StoredRun, outcome_test,
};
use crate::host::{Cache, HostInfo};
use crate::measure::histogram::Layout;
use crate::model::{
    Better, CpuUse, Latency, Metric, Outcome, Percentile, Sample, ThreadStat, Tier, Unit,
    WorkingSet,
};
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OpenFlags, OptionalExtension, Row, TransactionBehavior, params};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

mod soak;

/// How long a writer waits for another process's transaction before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

pub struct SqliteStore {
    conn: Connection,
    path: PathBuf,
    /// What the user may want to know about the file (not in WAL mode), for the
    /// command to print or not: a personality's output must stay the peer's.
    notes: Vec<String>,
}

impl SqliteStore {
    /// Opens (and with `create`, creates) the database at `path`, migrating it to the
    /// latest schema. Refuses, without writing, a file that is not ours or is newer.
    pub fn open(path: &Path, create: bool) -> Result<Self, StoreError> {
        check_file(path)?;
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if create {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        }
        let conn = Connection::open_with_flags(path, flags)
            .map_err(|e| StoreError::sql(path, "open", e))?;
        let mut store = SqliteStore {
            conn,
            path: path.to_path_buf(),
            notes: Vec::new(),
        };
        store
            .conn
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| store.err("open", e))?;
        store
            .conn
            .execute_batch("PRAGMA foreign_keys = ON")
            .map_err(|e| store.err("open", e))?;
        store.migrate(LATEST_VERSION)?;
        let mode: String = match store
            .conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        {
            Ok(mode) => mode,
            // Another process holds the file while it switches it to WAL itself (the
            // mode is kept in the file): this connection works either way.
            Err(e) if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy) => {
                "wal".into()
            }
            Err(e) => return Err(store.err("switch to WAL", e)),
        };
        if !mode.eq_ignore_ascii_case("wal") {
            // A read-only directory or a file system without shared memory: still
            // usable, only without concurrent readers during a write.
            store
                .notes
                .push(format!("{} stays in {mode} journal mode", path.display()));
        }
        Ok(store)
    }

    fn err(&self, what: &str, e: rusqlite::Error) -> StoreError {
        StoreError::sql(&self.path, what, e)
    }

    fn decode(&self, what: impl Into<String>) -> StoreError {
        StoreError::Decode {
            path: self.path.clone(),
            what: what.into(),
        }
    }

    /// Applies the migrations after the current version up to `target`, each in its own
    /// transaction. Public to the crate so tests can build an old-schema database.
    pub(crate) fn migrate(&mut self, target: u32) -> Result<(), StoreError> {
        let current = schema_version(&self.conn, &self.path)?;
        if current > LATEST_VERSION {
            return Err(StoreError::Newer {
                path: self.path.clone(),
                found: current,
                known: LATEST_VERSION,
            });
        }
        if current >= target {
            return Ok(());
        }
        let path = self.path.clone();
        let sql_err = |what: &str, e| StoreError::sql(&path, what, e);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| sql_err("start a migration", e))?;
        // Another process may have migrated while we waited for the write lock.
        let current = schema_version(&tx, &path)?;
        for version in current + 1..=target {
            tx.execute_batch(MIGRATIONS[version as usize - 1])
                .map_err(|e| sql_err(&format!("migrate to schema {version}"), e))?;
            tx.execute(
                "INSERT INTO schema_version (version, applied_at, tool_version) VALUES (?1, ?2, ?3)",
                params![version, crate::host::now_rfc3339(), env!("CARGO_PKG_VERSION")],
            )
            .map_err(|e| sql_err("record the migration", e))?;
        }
        if current == 0 {
            tx.execute_batch(&format!("PRAGMA application_id = {APPLICATION_ID}"))
                .map_err(|e| sql_err("mark the database", e))?;
        }
        tx.commit().map_err(|e| sql_err("commit the migration", e))
    }

    fn host_id(tx: &Connection, host: &HostInfo, now: &str) -> rusqlite::Result<i64> {
        let fixed = static_host(host);
        let fingerprint = serde_json::to_string(&fixed).unwrap_or_default();
        tx.execute(
            "INSERT OR IGNORE INTO hosts (fingerprint, hostname, cpu_model, logical_cpus,
                memory_bytes, kernel, os, arch, virtualization, cloud, clocksource, caches,
                first_seen)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            params![
                fingerprint,
                fixed.hostname,
                fixed.cpu_model,
                fixed.logical_cpus as i64,
                fixed.memory_bytes as i64,
                fixed.kernel,
                fixed.os,
                fixed.arch,
                fixed.virtualization,
                fixed.cloud,
                fixed.clocksource,
                to_json(&fixed.caches),
                now,
            ],
        )?;
        tx.query_row(
            "SELECT id FROM hosts WHERE fingerprint = ?1",
            [&fingerprint],
            |r| r.get(0),
        )
    }

    fn insert_outcome(
        tx: &Connection,
        run_id: i64,
        seq: usize,
        o: &Outcome,
        host_id: i64,
    ) -> rusqlite::Result<()> {
        tx.execute(
            "INSERT INTO outcomes (run_id, seq, workload, test, spec, started_at, elapsed_s,
                interrupted, schema_version, tool, tool_version, cpu_user_s, cpu_system_s,
                cpu_utilisation, notes, threads, host_id, load_1, load_5, load_15, steal_s,
                params)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                ?17, ?18, ?19, ?20, ?21, ?22)",
            params![
                run_id,
                seq as i64,
                o.workload,
                outcome_test(o),
                to_json(&o.spec),
                o.started_at,
                o.elapsed_s,
                o.interrupted,
                o.schema_version,
                o.tool,
                o.tool_version,
                o.cpu_time.user_s,
                o.cpu_time.system_s,
                o.cpu_time.utilisation,
                to_json(&o.notes),
                to_json(&o.threads),
                host_id,
                o.host.load_average[0],
                o.host.load_average[1],
                o.host.load_average[2],
                o.host.steal_s,
                to_json(&o.params),
            ],
        )?;
        let outcome_id = tx.last_insert_rowid();
        let mut metric = tx.prepare_cached(
            "INSERT INTO metrics (outcome_id, seq, name, value, unit, better, threads, variant,
                ws_bytes, ws_tier) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )?;
        for (i, m) in o.metrics.iter().enumerate() {
            metric.execute(params![
                outcome_id,
                i as i64,
                m.name,
                m.value,
                enum_name(&m.unit),
                enum_name(&m.better),
                m.threads.map(|t| t as i64),
                m.variant,
                m.working_set.map(|w| w.bytes as i64),
                m.working_set.map(|w| enum_name(&w.tier)),
            ])?;
        }
        if let Some(l) = &o.latency {
            tx.execute(
                "INSERT INTO histograms (outcome_id, count, min_ns, mean_ns, max_ns, sum_ns,
                    percentiles, layout_min_ns, layout_max_ns, layout_buckets)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![
                    outcome_id,
                    l.count as i64,
                    l.min_ns,
                    l.mean_ns,
                    l.max_ns,
                    l.sum_ns,
                    to_json(&l.percentiles),
                    l.layout.min_ns,
                    l.layout.max_ns,
                    l.layout.buckets as i64,
                ],
            )?;
            let mut bucket = tx.prepare_cached(
                "INSERT INTO histogram_buckets (outcome_id, value_ns, count) VALUES (?1, ?2, ?3)",
            )?;
            for &(ns, count) in &l.buckets {
                bucket.execute(params![outcome_id, ns, count as i64])?;
            }
        }
        let mut series = tx.prepare_cached(
            "INSERT INTO series (outcome_id, seq, at_s, span_s, name, value)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        for (i, s) in o.series.iter().enumerate() {
            if s.values.is_empty() {
                // Keeps the sample's place and time; '' is never a value name.
                series.execute(params![
                    outcome_id,
                    i as i64,
                    s.at_s,
                    s.span_s,
                    "",
                    None::<f64>
                ])?;
            }
            for (name, value) in &s.values {
                series.execute(params![outcome_id, i as i64, s.at_s, s.span_s, name, value])?;
            }
        }
        Ok(())
    }

    /// Inserts one run with its outcomes inside the caller's transaction (a soak saves
    /// a slice's run and the slice in one).
    fn insert_run(tx: &Connection, run: &NewRun) -> rusqlite::Result<i64> {
        let now = crate::host::now_rfc3339();
        let detected;
        let first_host = match run.outcomes.first() {
            Some(o) => &o.host,
            None => {
                detected = HostInfo::detect();
                &detected
            }
        };
        let host_id = Self::host_id(tx, first_host, &now)?;
        let started_at = run
            .outcomes
            .iter()
            .map(|o| o.started_at.as_str())
            .min()
            .unwrap_or(&now)
            .to_string();
        let schema_version = run
            .outcomes
            .first()
            .map_or(crate::model::SCHEMA_VERSION, |o| o.schema_version);
        tx.execute(
            "INSERT INTO runs (started_at, saved_at, command, host_id, profile, interrupted,
                schema_version, tool_version, command_line)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                started_at,
                now,
                run.command,
                host_id,
                run.profile,
                run.outcomes.iter().any(|o| o.interrupted),
                schema_version,
                env!("CARGO_PKG_VERSION"),
                (!run.command_line.is_empty()).then(|| to_json(run.command_line)),
            ],
        )?;
        let run_id = tx.last_insert_rowid();
        for (k, v) in run.labels {
            tx.execute(
                "INSERT INTO labels (run_id, key, value) VALUES (?1, ?2, ?3)",
                params![run_id, k, v],
            )?;
        }
        for (seq, o) in run.outcomes.iter().enumerate() {
            let host_id =
                if o.host == *first_host || static_host(&o.host) == static_host(first_host) {
                    host_id
                } else {
                    Self::host_id(tx, &o.host, &now)?
                };
            Self::insert_outcome(tx, run_id, seq, o, host_id)?;
        }
        Ok(run_id)
    }

    fn insert_problems(
        tx: &Connection,
        run_id: i64,
        problems: &[StepProblem],
    ) -> rusqlite::Result<()> {
        for (seq, p) in problems.iter().enumerate() {
            tx.execute(
                "INSERT INTO run_problems (run_id, seq, step, area, status, reason)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    run_id,
                    seq as i64,
                    p.step,
                    p.area,
                    p.status.as_str(),
                    p.reason
                ],
            )?;
        }
        Ok(())
    }

    fn load_problems(&self, run_id: i64) -> Result<Vec<StepProblem>, StoreError> {
        let read = |e| self.err("read the run's steps", e);
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT step, area, status, reason FROM run_problems WHERE run_id = ?1
                 ORDER BY seq",
            )
            .map_err(read)?;
        let rows: Vec<(String, String, String, String)> = stmt
            .query_map([run_id], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })
            .and_then(|rows| rows.collect())
            .map_err(read)?;
        rows.into_iter()
            .map(|(step, area, status, reason)| {
                let status = StepStatus::parse(&status)
                    .ok_or_else(|| self.decode(format!("step status '{status}'")))?;
                Ok(StepProblem {
                    step,
                    area,
                    status,
                    reason,
                })
            })
            .collect()
    }

    fn run_info(&self, row: &Row) -> rusqlite::Result<RunInfo> {
        Ok(RunInfo {
            id: row.get("id")?,
            started_at: row.get("started_at")?,
            saved_at: row.get("saved_at")?,
            command: row.get("command")?,
            command_line: match row.get::<_, Option<String>>("command_line")? {
                // A command line that no longer parses is shown as none, not an error:
                // it is context, not a measurement.
                Some(text) => serde_json::from_str(&text).unwrap_or_default(),
                None => Vec::new(),
            },
            labels: BTreeMap::new(),
            profile: row.get("profile")?,
            interrupted: row.get("interrupted")?,
            schema_version: row.get("schema_version")?,
            tool_version: row.get("tool_version")?,
            workloads: Vec::new(),
            outcome_count: 0,
            headline: None,
            host: host_from_row(row)?,
        })
    }

    /// Labels and workloads of a listed run.
    fn complete(&self, info: &mut RunInfo) -> Result<(), StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT key, value FROM labels WHERE run_id = ?1 ORDER BY key")
            .map_err(|e| self.err("read labels", e))?;
        info.labels = stmt
            .query_map([info.id], |r| Ok((r.get(0)?, r.get(1)?)))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.err("read labels", e))?;
        let mut stmt = self
            .conn
            .prepare_cached("SELECT workload FROM outcomes WHERE run_id = ?1 ORDER BY seq")
            .map_err(|e| self.err("read outcomes", e))?;
        let all: Vec<String> = stmt
            .query_map([info.id], |r| r.get(0))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.err("read outcomes", e))?;
        info.outcome_count = all.len();
        let first: Option<i64> = self
            .conn
            .query_row(
                "SELECT m.outcome_id FROM metrics m JOIN outcomes o ON o.id = m.outcome_id
                 WHERE o.run_id = ?1
                 ORDER BY m.unit NOT IN ('events_per_sec', 'ops_per_sec', 'bytes_per_sec'),
                    m.unit != 'nanoseconds', m.unit = 'count', o.seq, m.seq LIMIT 1",
                [info.id],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err("read metrics", e))?;
        if let Some(outcome_id) = first {
            let metrics = self.load_metrics(outcome_id)?;
            info.headline = metrics
                .iter()
                .find(|m| {
                    matches!(
                        m.unit,
                        Unit::EventsPerSec | Unit::OpsPerSec | Unit::BytesPerSec
                    )
                })
                // Then a latency (ping's round trip), then anything but a count.
                .or_else(|| metrics.iter().find(|m| m.unit == Unit::Nanoseconds))
                .or_else(|| metrics.iter().find(|m| m.unit != Unit::Count))
                .or(metrics.first())
                .cloned();
        }
        for w in all {
            if !info.workloads.contains(&w) {
                info.workloads.push(w);
            }
        }
        Ok(())
    }

    fn load_outcomes(&self, run_id: i64) -> Result<Vec<Outcome>, StoreError> {
        let read = |e| self.err("read outcomes", e);
        let mut stmt = self
            .conn
            .prepare(
                "SELECT o.*, h.hostname, h.cpu_model, h.logical_cpus, h.memory_bytes, h.kernel,
                    h.os, h.arch, h.virtualization, h.cloud, h.clocksource, h.caches
                 FROM outcomes o JOIN hosts h ON h.id = o.host_id
                 WHERE o.run_id = ?1 ORDER BY o.seq",
            )
            .map_err(read)?;
        let mut rows = stmt.query([run_id]).map_err(read)?;
        let mut outcomes = Vec::new();
        while let Some(row) = rows.next().map_err(read)? {
            let id: i64 = row.get("id").map_err(read)?;
            let text = |name: &str| row.get::<_, String>(name).map_err(read);
            let mut host = host_from_row(row).map_err(read)?;
            host.load_average = [
                real(row, "load_1").map_err(read)?,
                real(row, "load_5").map_err(read)?,
                real(row, "load_15").map_err(read)?,
            ];
            host.steal_s = row.get("steal_s").map_err(read)?;
            let spec = text("spec")?;
            let notes = text("notes")?;
            let threads = text("threads")?;
            let params = text("params")?;
            let mut outcome = Outcome {
                schema_version: row.get("schema_version").map_err(read)?,
                tool: text("tool")?,
                tool_version: text("tool_version")?,
                workload: text("workload")?,
                spec: self.parse_json(&spec, "spec")?,
                params: self.parse_json(&params, "params")?,
                started_at: text("started_at")?,
                elapsed_s: real(row, "elapsed_s").map_err(read)?,
                interrupted: row.get("interrupted").map_err(read)?,
                metrics: self.load_metrics(id)?,
                latency: self.load_latency(id)?,
                threads: self.parse_json::<Vec<ThreadStat>>(&threads, "threads")?,
                series: self.load_series(id)?,
                notes: self.parse_json(&notes, "notes")?,
                cpu_time: CpuUse {
                    user_s: real(row, "cpu_user_s").map_err(read)?,
                    system_s: real(row, "cpu_system_s").map_err(read)?,
                    utilisation: real(row, "cpu_utilisation").map_err(read)?,
                },
                host,
            };
            // Rows kept before percentiles were bounded can hold a p99.9 above the max.
            outcome.bound_percentiles();
            outcomes.push(outcome);
        }
        Ok(outcomes)
    }

    fn load_metrics(&self, outcome_id: i64) -> Result<Vec<Metric>, StoreError> {
        let read = |e| self.err("read metrics", e);
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT name, value, unit, better, threads, variant, ws_bytes, ws_tier
                 FROM metrics WHERE outcome_id = ?1 ORDER BY seq",
            )
            .map_err(read)?;
        let mut rows = stmt.query([outcome_id]).map_err(read)?;
        let mut metrics = Vec::new();
        while let Some(r) = rows.next().map_err(read)? {
            let unit: String = r.get(2).map_err(read)?;
            let better: String = r.get(3).map_err(read)?;
            let ws_bytes: Option<i64> = r.get(6).map_err(read)?;
            let ws_tier: Option<String> = r.get(7).map_err(read)?;
            let working_set = match (ws_bytes, ws_tier) {
                (Some(bytes), Some(tier)) => Some(WorkingSet {
                    bytes: bytes as u64,
                    tier: self.enum_value::<Tier>(&tier, "working-set tier")?,
                }),
                _ => None,
            };
            metrics.push(Metric {
                name: r.get(0).map_err(read)?,
                value: real(r, "value").map_err(read)?,
                unit: self.enum_value::<Unit>(&unit, "unit")?,
                better: self.enum_value::<Better>(&better, "direction")?,
                threads: r
                    .get::<_, Option<i64>>(4)
                    .map_err(read)?
                    .map(|t| t as usize),
                working_set,
                variant: r.get(5).map_err(read)?,
            });
        }
        Ok(metrics)
    }

    fn load_latency(&self, outcome_id: i64) -> Result<Option<Latency>, StoreError> {
        let read = |e| self.err("read a histogram", e);
        let head = self
            .conn
            .query_row(
                "SELECT * FROM histograms WHERE outcome_id = ?1",
                [outcome_id],
                |r| {
                    Ok((
                        r.get::<_, i64>("count")? as u64,
                        [
                            real(r, "min_ns")?,
                            real(r, "mean_ns")?,
                            real(r, "max_ns")?,
                            real(r, "sum_ns")?,
                        ],
                        r.get::<_, String>("percentiles")?,
                        Layout {
                            min_ns: r.get("layout_min_ns")?,
                            max_ns: r.get("layout_max_ns")?,
                            buckets: r.get::<_, i64>("layout_buckets")? as usize,
                        },
                    ))
                },
            )
            .optional()
            .map_err(read)?;
        let Some((count, [min_ns, mean_ns, max_ns, sum_ns], percentiles, layout)) = head else {
            return Ok(None);
        };
        if layout.buckets == 0 || !(layout.min_ns > 0.0 && layout.max_ns > layout.min_ns) {
            return Err(self.decode(format!("histogram layout {layout:?}")));
        }
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT value_ns, count FROM histogram_buckets WHERE outcome_id = ?1 ORDER BY rowid",
            )
            .map_err(read)?;
        let buckets = stmt
            .query_map([outcome_id], |r| {
                Ok((r.get::<_, f64>(0)?, r.get::<_, i64>(1)? as u64))
            })
            .and_then(|rows| rows.collect())
            .map_err(read)?;
        Ok(Some(Latency {
            count,
            min_ns,
            mean_ns,
            max_ns,
            sum_ns,
            percentiles: self.parse_json::<Vec<Percentile>>(&percentiles, "percentiles")?,
            layout,
            buckets,
        }))
    }

    fn load_series(&self, outcome_id: i64) -> Result<Vec<Sample>, StoreError> {
        let read = |e| self.err("read a series", e);
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT seq, at_s, span_s, name, value FROM series WHERE outcome_id = ?1
                 ORDER BY seq, rowid",
            )
            .map_err(read)?;
        let mut rows = stmt.query([outcome_id]).map_err(read)?;
        let mut series: Vec<Sample> = Vec::new();
        let mut last_seq = None;
        while let Some(r) = rows.next().map_err(read)? {
            let seq: i64 = r.get(0).map_err(read)?;
            if last_seq != Some(seq) {
                series.push(Sample {
                    at_s: r.get(1).map_err(read)?,
                    span_s: r.get(2).map_err(read)?,
                    values: BTreeMap::new(),
                });
                last_seq = Some(seq);
            }
            let name: String = r.get(3).map_err(read)?;
            if !name.is_empty()
                && let Some(s) = series.last_mut()
            {
                s.values.insert(name, real(r, "value").map_err(read)?);
            }
        }
        Ok(series)
    }

    fn parse_json<T: DeserializeOwned>(&self, text: &str, what: &str) -> Result<T, StoreError> {
        serde_json::from_str(text).map_err(|e| self.decode(format!("{what}: {e}")))
    }

    fn enum_value<T: DeserializeOwned>(&self, name: &str, what: &str) -> Result<T, StoreError> {
        serde_json::from_value(serde_json::Value::String(name.into()))
            .map_err(|_| self.decode(format!("{what} '{name}'")))
    }
}

impl Store for SqliteStore {
    fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    fn location(&self) -> String {
        self.path.display().to_string()
    }

    fn save_with(&mut self, run: &NewRun, problems: &[StepProblem]) -> Result<i64, StoreError> {
        let path = self.path.clone();
        let sql_err = |e| StoreError::sql(&path, "save the run", e);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql_err)?;
        let run_id = Self::insert_run(&tx, run).map_err(sql_err)?;
        Self::insert_problems(&tx, run_id, problems).map_err(sql_err)?;
        tx.commit().map_err(sql_err)?;
        Ok(run_id)
    }

    fn list(&self, filter: &RunFilter) -> Result<Vec<RunInfo>, StoreError> {
        let mut sql = String::from(
            "SELECT r.*, h.hostname, h.cpu_model, h.logical_cpus, h.memory_bytes, h.kernel,
                h.os, h.arch, h.virtualization, h.cloud, h.clocksource, h.caches
             FROM runs r JOIN hosts h ON h.id = r.host_id WHERE 1 = 1",
        );
        let mut args: Vec<SqlValue> = Vec::new();
        if let Some(host) = &filter.host {
            sql += " AND h.hostname = ?";
            args.push(host.clone().into());
        }
        for (k, v) in &filter.labels {
            sql += " AND EXISTS (SELECT 1 FROM labels l WHERE l.run_id = r.id AND l.key = ? AND l.value = ?)";
            args.push(k.clone().into());
            args.push(v.clone().into());
        }
        if let Some(w) = &filter.workload {
            sql +=
                " AND EXISTS (SELECT 1 FROM outcomes o WHERE o.run_id = r.id AND o.workload = ?)";
            args.push(w.clone().into());
        }
        if let Some(t) = &filter.since {
            sql += " AND r.started_at >= ?";
            args.push(t.clone().into());
        }
        if let Some(t) = &filter.until {
            sql += " AND r.started_at <= ?";
            args.push(t.clone().into());
        }
        if !filter.ids.is_empty() {
            sql += &format!(" AND r.id IN ({})", vec!["?"; filter.ids.len()].join(", "));
            args.extend(filter.ids.iter().map(|&id| SqlValue::Integer(id)));
        }
        sql += " ORDER BY r.id DESC";
        if let Some(n) = filter.last {
            sql += &format!(" LIMIT {n}");
        }
        let read = |e| self.err("list runs", e);
        let mut stmt = self.conn.prepare(&sql).map_err(read)?;
        let mut runs: Vec<RunInfo> = stmt
            .query_map(rusqlite::params_from_iter(args), |r| self.run_info(r))
            .and_then(|rows| rows.collect())
            .map_err(read)?;
        runs.reverse();
        for info in &mut runs {
            self.complete(info)?;
        }
        Ok(runs)
    }

    fn load(&self, id: i64) -> Result<Option<StoredRun>, StoreError> {
        let filter = RunFilter {
            ids: vec![id],
            ..RunFilter::default()
        };
        let Some(info) = self.list(&filter)?.pop() else {
            return Ok(None);
        };
        let outcomes = self.load_outcomes(id)?;
        let problems = self.load_problems(id)?;
        Ok(Some(StoredRun {
            info,
            outcomes,
            problems,
        }))
    }

    fn create_soak(&mut self, plan: &super::soak::SoakPlan) -> Result<i64, StoreError> {
        self.soak_create(plan)
    }

    fn load_soak(&self, id: i64) -> Result<Option<super::soak::Soak>, StoreError> {
        self.soak_load(id)
    }

    fn list_soaks(&self) -> Result<Vec<super::soak::Soak>, StoreError> {
        self.soak_list()
    }

    fn save_slice(
        &mut self,
        soak_id: i64,
        slice: &super::soak::Slice,
        run: Option<&NewRun>,
    ) -> Result<Option<i64>, StoreError> {
        self.soak_save_slice(soak_id, slice, run)
    }

    fn delete_soak(&mut self, id: i64) -> Result<(), StoreError> {
        self.soak_delete(id)
    }

    fn set_soak_state(
        &mut self,
        id: i64,
        state: super::soak::SoakState,
        pid: Option<u32>,
    ) -> Result<(), StoreError> {
        self.soak_state(id, state, pid)
    }
}

/// The schema version, after checking the database is ours (0: empty, ours to set up).
fn schema_version(conn: &Connection, path: &Path) -> Result<u32, StoreError> {
    let err = |what: &str, e| StoreError::sql(path, what, e);
    let not_ours = |why: String| StoreError::NotOurs {
        path: path.to_path_buf(),
        why,
    };
    // One statement, so one snapshot: read apart, another process's first migration
    // could commit in between, and its tables would look like another program's.
    let (app_id, tables): (i32, i64) = conn
        .query_row(
            "SELECT (SELECT application_id FROM pragma_application_id()),
                    (SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%')",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(|e| err("read the header", e))?;
    if app_id != APPLICATION_ID {
        if app_id != 0 {
            return Err(not_ours(format!(
                "an SQLite database of another program, application id {app_id:#x}"
            )));
        }
        if tables > 0 {
            return Err(not_ours(
                "an SQLite database with tables of another program".into(),
            ));
        }
        return Ok(0);
    }
    if tables == 0 {
        return Ok(0);
    }
    let version: Option<i64> = conn
        .query_row("SELECT max(version) FROM schema_version", [], |r| r.get(0))
        .map_err(|e| err("read the schema version", e))?;
    Ok(version.unwrap_or(0).clamp(0, u32::MAX as i64) as u32)
}

/// Reads the header before SQLite opens the file. Returns true when the file is
/// missing (to be created); refuses what is not an SQLite file or belongs to
/// another program, so it is never written to.
fn check_file(path: &Path) -> Result<bool, StoreError> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(true),
        Err(e) => {
            return Err(StoreError::Open {
                path: path.to_path_buf(),
                source: Box::new(e),
            });
        }
    };
    let not_ours = |why: &str| StoreError::NotOurs {
        path: path.to_path_buf(),
        why: why.into(),
    };
    if meta.is_dir() {
        return Err(not_ours("it is a directory"));
    }
    if !meta.is_file() {
        return Err(not_ours("not a regular file"));
    }
    if meta.len() == 0 {
        return Ok(false);
    }
    let mut header = [0u8; 100];
    let mut file = std::fs::File::open(path).map_err(|e| StoreError::Open {
        path: path.to_path_buf(),
        source: Box::new(e),
    })?;
    let mut got = 0;
    while got < header.len() {
        match file.read(&mut header[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                return Err(StoreError::Open {
                    path: path.to_path_buf(),
                    source: Box::new(e),
                });
            }
        }
    }
    if got < header.len() || &header[..16] != b"SQLite format 3\0" {
        return Err(not_ours("not an SQLite file"));
    }
    let app_id = i32::from_be_bytes([header[68], header[69], header[70], header[71]]);
    if app_id != 0 && app_id != APPLICATION_ID {
        return Err(not_ours(&format!(
            "an SQLite database of another program, application id {app_id:#x}"
        )));
    }
    // A file shorter than its header says lost its end (a copy cut short, a full
    // disk): SQLite would read zeros there and fail somewhere later, or not at all.
    // The header's page count is trusted only when SQLite marks it valid (change
    // counter = version-valid-for), and not while a WAL beside it may hold the rest.
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65_536,
        n => u64::from(n),
    };
    let pages = u64::from(u32::from_be_bytes([
        header[28], header[29], header[30], header[31],
    ]));
    let counted_valid = header[24..28] == header[92..96];
    // Nor while another process commits: a rollback journal beside the file means its
    // pages are being written (the header can be ahead of the file's length then).
    let beside = |suffix: &str| {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        std::fs::metadata(name).is_ok_and(|m| m.len() > 0)
    };
    let settled = !beside("-wal") && !beside("-journal");
    // The length is read after the journal: a commit that ended meanwhile has grown
    // the file to at least what the header read before it counts.
    let length = std::fs::metadata(path).map_or(meta.len(), |m| m.len());
    if counted_valid && settled && page_size >= 512 && length < pages * page_size {
        return Err(StoreError::Truncated {
            path: path.to_path_buf(),
            expected: pages * page_size,
            found: length,
        });
    }
    Ok(false)
}

/// The machine without the state that changes from run to run.
fn static_host(h: &HostInfo) -> HostInfo {
    HostInfo {
        load_average: [0.0; 3],
        steal_s: None,
        ..h.clone()
    }
}

fn host_from_row(row: &Row) -> rusqlite::Result<HostInfo> {
    let caches: String = row.get("caches")?;
    Ok(HostInfo {
        hostname: row.get("hostname")?,
        cpu_model: row.get("cpu_model")?,
        logical_cpus: row.get::<_, i64>("logical_cpus")? as usize,
        memory_bytes: row.get::<_, i64>("memory_bytes")? as u64,
        kernel: row.get("kernel")?,
        os: row.get("os")?,
        arch: row.get("arch")?,
        virtualization: row.get("virtualization")?,
        cloud: row.get("cloud")?,
        clocksource: row.get("clocksource")?,
        caches: serde_json::from_str::<Vec<Cache>>(&caches).unwrap_or_default(),
        load_average: [0.0; 3],
        steal_s: None,
    })
}

/// SQLite stores NaN as NULL; read it back as NaN.
fn real(row: &Row, name: &str) -> rusqlite::Result<f64> {
    Ok(row.get::<_, Option<f64>>(name)?.unwrap_or(f64::NAN))
}

fn to_json<T: Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

/// The serde name of a unit-like enum (`events_per_sec`, `higher`, `DRAM`).
fn enum_name<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Percentile;
    use crate::store::Labels;

    fn outcome() -> Outcome {
        let host = HostInfo {
            hostname: "box".into(),
            cpu_model: "Test CPU".into(),
            logical_cpus: 2,
            memory_bytes: 8 << 30,
            kernel: "Linux 6.1".into(),
            os: "Debian".into(),
            arch: "x86_64".into(),
            virtualization: Some("kvm".into()),
            cloud: None,
            clocksource: Some("tsc".into()),
            caches: vec![Cache {
                level: 1,
                kind: "Data".into(),
                bytes: 32768,
            }],
            load_average: [0.5, 0.25, 0.125],
            steal_s: Some(12.5),
        };
        let mut o = Outcome::new("cpu", serde_json::json!({"threads": [1, 2]}), host);
        o.elapsed_s = 1.25;
        o.push(Metric::new("events_per_sec", 1234.5678, Unit::EventsPerSec).threads(1));
        o.push(
            Metric::new("load_latency", 80.1, Unit::Nanoseconds)
                .working_set(WorkingSet {
                    bytes: 1 << 30,
                    tier: Tier::Dram,
                })
                .variant("chase"),
        );
        o.latency = Some(Latency {
            count: 3,
            min_ns: 10.0,
            mean_ns: 20.0,
            max_ns: 30.0,
            sum_ns: 60.0,
            percentiles: vec![Percentile { p: 99.9, ns: 30.0 }],
            layout: Layout::NATIVE,
            buckets: vec![(10.0, 1), (20.1, 1), (30.2, 1)],
        });
        o.series = vec![
            Sample {
                at_s: 1.0,
                span_s: 1.0,
                values: [("events_per_sec".to_string(), 1.5)].into(),
            },
            Sample {
                at_s: 2.0,
                span_s: 1.0,
                values: BTreeMap::new(),
            },
        ];
        o.threads = vec![ThreadStat {
            events: 5,
            latency_sum_ns: 6,
        }];
        o.note("a note");
        o
    }

    #[test]
    fn outcome_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        let mut store = SqliteStore::open(&path, true).unwrap();
        let o = outcome();
        let labels = [("provider".to_string(), "aws".to_string())].into();
        let id = store
            .save(&NewRun {
                command: "cpu",
                command_line: &[],
                labels: &labels,
                profile: None,
                outcomes: std::slice::from_ref(&o),
            })
            .unwrap();
        let back = store.load(id).unwrap().unwrap();
        assert_eq!(
            serde_json::to_value(&back.outcomes[0]).unwrap(),
            serde_json::to_value(&o).unwrap()
        );
        assert_eq!(back.info.labels, labels);
        assert_eq!(back.info.workloads, vec!["cpu"]);
        assert_eq!(back.info.host.hostname, "box");
        assert!(store.load(id + 1).unwrap().is_none());
    }

    /// A row kept before percentiles were bounded (its p99.9 bucket above its max)
    /// reads back bounded, in the latency and in the metrics.
    #[test]
    fn old_rows_read_back_with_percentiles_within_the_extremes() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteStore::open(&dir.path().join("r.db"), true).unwrap();
        let mut o = outcome();
        o.push(Metric::new(
            "read_latency_p99.9",
            15.88e6,
            Unit::Nanoseconds,
        ));
        o.push(Metric::new("read_latency_max", 15.84e6, Unit::Nanoseconds));
        if let Some(l) = &mut o.latency {
            l.percentiles[0].ns = 30.2;
        }
        let id = save_one(&mut store, &o);
        let back = store.load(id).unwrap().unwrap().outcomes.remove(0);
        assert_eq!(back.latency.as_ref().unwrap().percentiles[0].ns, 30.0);
        let p999 = back.metric("read_latency_p99.9", None).unwrap().value;
        assert_eq!(p999, 15.84e6);
    }

    fn save_one(store: &mut SqliteStore, o: &Outcome) -> i64 {
        store
            .save(&NewRun {
                command: "cpu",
                command_line: &[],
                labels: &BTreeMap::new(),
                profile: None,
                outcomes: std::slice::from_ref(o),
            })
            .unwrap()
    }

    /// Turns a database back into what release `to` left (its runs saved by this
    /// build lose what later schemas added): the undo of each migration after `to`.
    pub(crate) fn rewind(path: &Path, to: u32) {
        const UNDO: [&str; 5] = [
            "",
            "DROP INDEX runs_by_time; DROP INDEX runs_by_host; DROP INDEX labels_by_pair;
             DROP INDEX outcomes_by_workload; DROP INDEX hosts_by_name;",
            "DROP TABLE soak_slices; DROP TABLE soaks;",
            "ALTER TABLE runs DROP COLUMN command_line; ALTER TABLE outcomes DROP COLUMN params;",
            "DROP TABLE run_problems;",
        ];
        assert_eq!(
            UNDO.len(),
            LATEST_VERSION as usize,
            "an undo for every migration"
        );
        let c = Connection::open(path).unwrap();
        for version in (to + 1..=LATEST_VERSION).rev() {
            c.execute_batch(UNDO[version as usize - 1]).unwrap();
            c.execute("DELETE FROM schema_version WHERE version = ?1", [version])
                .unwrap();
        }
    }

    fn versions(path: &Path) -> Vec<u32> {
        let c = Connection::open(path).unwrap();
        let mut s = c
            .prepare("SELECT version FROM schema_version ORDER BY version")
            .unwrap();
        s.query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    }

    #[test]
    fn fresh_database_is_latest_wal_and_marked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/dir/r.db");
        let default = crate::store::Location::Sqlite {
            path: path.clone(),
            make_dir: true,
        };
        drop(crate::store::open(&default).unwrap());
        assert_eq!(versions(&path), (1..=LATEST_VERSION).collect::<Vec<_>>());
        let c = Connection::open(&path).unwrap();
        let mode: String = c
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        let id: i32 = c
            .query_row("PRAGMA application_id", [], |r| r.get(0))
            .unwrap();
        assert_eq!(id, APPLICATION_ID);
    }

    #[test]
    fn old_schema_migrates_forward_keeping_runs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        let mut old = SqliteStore::open(&path, true).unwrap();
        let o = outcome();
        let id = save_one(&mut old, &o);
        drop(old);
        rewind(&path, 1);
        assert_eq!(versions(&path), vec![1]);

        let store = SqliteStore::open(&path, false).unwrap();
        assert_eq!(versions(&path), (1..=LATEST_VERSION).collect::<Vec<_>>());
        let back = store.load(id).unwrap().unwrap();
        assert_eq!(
            serde_json::to_value(&back.outcomes[0]).unwrap(),
            serde_json::to_value(&o).unwrap()
        );
        let c = Connection::open(&path).unwrap();
        let index: i64 = c
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name = 'labels_by_pair'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(index, 1, "migration 2 ran");
    }

    fn problems() -> Vec<StepProblem> {
        vec![
            StepProblem {
                step: "redis".into(),
                area: "redis".into(),
                status: StepStatus::Skipped,
                reason: "redis-server not installed; give --redis URL".into(),
            },
            StepProblem {
                step: "run".into(),
                area: "run".into(),
                status: StepStatus::Interrupted,
                reason: "steps after the interruption did not run".into(),
            },
        ]
    }

    #[test]
    fn skipped_and_interrupted_steps_are_kept_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteStore::open(&dir.path().join("r.db"), true).unwrap();
        let run = NewRun {
            command: "run",
            command_line: &[],
            labels: &BTreeMap::new(),
            profile: Some("quick"),
            outcomes: &[outcome()],
        };
        let with = store.save_with(&run, &problems()).unwrap();
        let without = store.save(&run).unwrap();
        assert_eq!(store.load(with).unwrap().unwrap().problems, problems());
        assert!(store.load(without).unwrap().unwrap().problems.is_empty());
    }

    /// A database of schema 4 (before steps were kept) opens, its runs read back with
    /// no steps, and new runs keep theirs.
    #[test]
    fn schema_4_database_migrates_and_reads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        let mut old = SqliteStore::open(&path, true).unwrap();
        let id = save_one(&mut old, &outcome());
        drop(old);
        rewind(&path, 4);
        assert_eq!(versions(&path), vec![1, 2, 3, 4]);

        let mut store = SqliteStore::open(&path, false).unwrap();
        assert_eq!(versions(&path), (1..=LATEST_VERSION).collect::<Vec<_>>());
        let back = store.load(id).unwrap().unwrap();
        assert!(back.problems.is_empty());
        assert_eq!(back.outcomes.len(), 1);
        let run = NewRun {
            command: "run",
            command_line: &[],
            labels: &BTreeMap::new(),
            profile: Some("quick"),
            outcomes: &[outcome()],
        };
        let new = store.save_with(&run, &problems()).unwrap();
        assert_eq!(store.load(new).unwrap().unwrap().problems, problems());
    }

    #[test]
    fn newer_schema_is_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.db");
        drop(SqliteStore::open(&path, true).unwrap());
        {
            let c = Connection::open(&path).unwrap();
            c.execute(
                "INSERT INTO schema_version VALUES (?1, 'later', '9.9')",
                [LATEST_VERSION + 1],
            )
            .unwrap();
            c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
        }
        let before = std::fs::read(&path).unwrap();
        let e = SqliteStore::open(&path, true).err().unwrap();
        assert!(matches!(e, StoreError::Newer { found, .. } if found == LATEST_VERSION + 1));
        assert!(e.to_string().contains("upgrade hostbench"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }

    #[test]
    fn foreign_files_are_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        // Not SQLite at all.
        let text = dir.path().join("notes.txt");
        std::fs::write(&text, b"my precious notes, not a database\n".repeat(10)).unwrap();
        // Another program's SQLite database, with and without an application id.
        let other = dir.path().join("other.db");
        Connection::open(&other)
            .unwrap()
            .execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
            .unwrap();
        let tagged = dir.path().join("tagged.db");
        Connection::open(&tagged)
            .unwrap()
            .execute_batch("PRAGMA application_id = 7; CREATE TABLE t (x);")
            .unwrap();
        for path in [&text, &other, &tagged] {
            let before = std::fs::read(path).unwrap();
            let e = SqliteStore::open(path, true).err().unwrap();
            assert!(matches!(e, StoreError::NotOurs { .. }), "{path:?}: {e}");
            assert_eq!(&std::fs::read(path).unwrap(), &before, "{path:?} changed");
        }
        let e = SqliteStore::open(dir.path(), true).err().unwrap();
        assert!(e.to_string().contains("directory"), "{e}");
        // Nothing beside them either (no -wal or -shm files).
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["notes.txt", "other.db", "tagged.db"]);
    }

    #[test]
    fn an_empty_file_is_adopted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty.db");
        std::fs::write(&path, b"").unwrap();
        let mut store = SqliteStore::open(&path, false).unwrap();
        let id = save_one(&mut store, &outcome());
        assert_eq!(store.list(&RunFilter::default()).unwrap()[0].id, id);
    }

    #[test]
    fn filters_select_runs() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteStore::open(&dir.path().join("f.db"), true).unwrap();
        let mut a = outcome();
        a.started_at = "2026-01-10T10:00:00Z".into();
        let mut b = outcome();
        b.started_at = "2026-02-10T10:00:00Z".into();
        b.workload = "memory".into();
        b.host.hostname = "other".into();
        let aws: Labels = [("provider".to_string(), "aws".to_string())].into();
        let gcp: Labels = [
            ("provider".to_string(), "gcp".to_string()),
            ("size".to_string(), "small".to_string()),
        ]
        .into();
        let save = |store: &mut SqliteStore, o: &Outcome, labels: &Labels| {
            store
                .save(&NewRun {
                    command: &o.workload.clone(),
                    command_line: &[],
                    labels,
                    profile: None,
                    outcomes: std::slice::from_ref(o),
                })
                .unwrap()
        };
        let ia = save(&mut store, &a, &aws);
        let ib = save(&mut store, &b, &gcp);
        let ids =
            |f: RunFilter| -> Vec<i64> { store.list(&f).unwrap().iter().map(|r| r.id).collect() };
        assert_eq!(ids(RunFilter::default()), vec![ia, ib]);
        let host = |h: &str| RunFilter {
            host: Some(h.into()),
            ..Default::default()
        };
        assert_eq!(ids(host("other")), vec![ib]);
        assert_eq!(ids(host("nobody")), Vec::<i64>::new());
        let labels = |l: &Labels| RunFilter {
            labels: l.clone(),
            ..Default::default()
        };
        assert_eq!(ids(labels(&aws)), vec![ia]);
        let only_size: Labels = [("size".to_string(), "small".to_string())].into();
        assert_eq!(ids(labels(&only_size)), vec![ib]);
        let wl = RunFilter {
            workload: Some("memory".into()),
            ..Default::default()
        };
        assert_eq!(ids(wl), vec![ib]);
        let since = RunFilter {
            since: Some("2026-02-01T00:00:00Z".into()),
            ..Default::default()
        };
        assert_eq!(ids(since), vec![ib]);
        let until = RunFilter {
            until: Some("2026-01-10T23:59:59Z".into()),
            ..Default::default()
        };
        assert_eq!(ids(until), vec![ia]);
        let last = RunFilter {
            last: Some(1),
            ..Default::default()
        };
        assert_eq!(ids(last), vec![ib]);
    }
}
