//! Soaks in SQLite: `soaks` (the plan and state) and `soak_slices` (schema
//! migration 3). A slice and its run are written in one transaction, so a killed
//! soak never leaves a run without its slice or a slice pointing nowhere.

use super::{SqliteStore, enum_name, to_json};
use crate::store::soak::{Figure, Slice, SliceStatus, Soak, SoakPlan, SoakState};
use crate::store::{NewRun, StoreError};
use rusqlite::{OptionalExtension, Row, TransactionBehavior, params};

impl SqliteStore {
    pub(super) fn soak_create(&mut self, plan: &SoakPlan) -> Result<i64, StoreError> {
        let now = crate::host::now_rfc3339();
        self.conn
            .execute(
                "INSERT INTO soaks (created_at, updated_at, state, pid, workload, start_ms,
                    every_ms, for_ms, duration_ms, threshold_pct, labels)
                 VALUES (?1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![
                    now,
                    SoakState::Running.as_str(),
                    std::process::id(),
                    to_json(&plan.workload),
                    plan.start_ms,
                    plan.every_ms,
                    plan.for_ms,
                    plan.duration_ms,
                    plan.threshold_pct,
                    to_json(&plan.labels),
                ],
            )
            .map_err(|e| self.err("record the soak", e))?;
        Ok(self.conn.last_insert_rowid())
    }

    pub(super) fn soak_state(
        &mut self,
        id: i64,
        state: SoakState,
        pid: Option<u32>,
    ) -> Result<(), StoreError> {
        self.conn
            .execute(
                "UPDATE soaks SET state = ?2, pid = ?3, updated_at = ?4 WHERE id = ?1",
                params![id, state.as_str(), pid, crate::host::now_rfc3339()],
            )
            .map_err(|e| self.err("update the soak", e))?;
        Ok(())
    }

    pub(super) fn soak_delete(&mut self, id: i64) -> Result<(), StoreError> {
        self.conn
            .execute("DELETE FROM soaks WHERE id = ?1", [id])
            .map_err(|e| self.err("remove the soak", e))?;
        Ok(())
    }

    pub(super) fn soak_save_slice(
        &mut self,
        soak_id: i64,
        slice: &Slice,
        run: Option<&NewRun>,
    ) -> Result<Option<i64>, StoreError> {
        let path = self.path.clone();
        let sql_err = |e| StoreError::sql(&path, "save the soak's slice", e);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql_err)?;
        let run_id = match run {
            Some(run) => Some(Self::insert_run(&tx, run).map_err(sql_err)?),
            None => slice.run_id,
        };
        let f = slice.figure.as_ref();
        tx.execute(
            "INSERT INTO soak_slices (soak_id, seq, due_ms, status, run_id, started_at, metric,
                value, unit, better, note) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            params![
                soak_id,
                slice.seq,
                slice.due_ms,
                slice.status.as_str(),
                run_id,
                slice.started_at,
                f.map(|f| f.metric.as_str()),
                f.map(|f| f.value),
                f.map(|f| enum_name(&f.unit)),
                f.map(|f| enum_name(&f.better)),
                slice.note,
            ],
        )
        .map_err(sql_err)?;
        tx.execute(
            "UPDATE soaks SET updated_at = ?2 WHERE id = ?1",
            params![soak_id, crate::host::now_rfc3339()],
        )
        .map_err(sql_err)?;
        tx.commit().map_err(sql_err)?;
        Ok(run_id)
    }

    pub(super) fn soak_load(&self, id: i64) -> Result<Option<Soak>, StoreError> {
        let read = |e| self.err("read the soak", e);
        let soak = self
            .conn
            .query_row("SELECT * FROM soaks WHERE id = ?1", [id], |r| {
                Ok(self.soak_row(r))
            })
            .optional()
            .map_err(read)?;
        match soak {
            None => Ok(None),
            Some(soak) => {
                let mut soak = soak?;
                soak.slices = self.soak_slices(id)?;
                Ok(Some(soak))
            }
        }
    }

    pub(super) fn soak_list(&self) -> Result<Vec<Soak>, StoreError> {
        let read = |e| self.err("list soaks", e);
        let ids: Vec<i64> = self
            .conn
            .prepare("SELECT id FROM soaks ORDER BY id")
            .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
            .map_err(read)?;
        let mut soaks = Vec::with_capacity(ids.len());
        for id in ids {
            soaks.extend(self.soak_load(id)?);
        }
        Ok(soaks)
    }

    fn soak_row(&self, r: &Row) -> Result<Soak, StoreError> {
        let read = |e| self.err("read the soak", e);
        let text = |name: &str| r.get::<_, String>(name).map_err(read);
        let state = text("state")?;
        Ok(Soak {
            id: r.get("id").map_err(read)?,
            created_at: text("created_at")?,
            updated_at: text("updated_at")?,
            state: SoakState::parse(&state)
                .ok_or_else(|| self.decode(format!("soak state '{state}'")))?,
            pid: r.get::<_, Option<u32>>("pid").map_err(read)?,
            plan: SoakPlan {
                workload: self.parse_json(&text("workload")?, "the soak's workload")?,
                start_ms: r.get("start_ms").map_err(read)?,
                every_ms: r.get("every_ms").map_err(read)?,
                for_ms: r.get("for_ms").map_err(read)?,
                duration_ms: r.get("duration_ms").map_err(read)?,
                threshold_pct: r.get("threshold_pct").map_err(read)?,
                labels: self.parse_json(&text("labels")?, "the soak's labels")?,
            },
            slices: Vec::new(),
        })
    }

    fn soak_slices(&self, soak_id: i64) -> Result<Vec<Slice>, StoreError> {
        let read = |e| self.err("read the soak's slices", e);
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT seq, due_ms, status, run_id, started_at, metric, value, unit, better,
                    note FROM soak_slices WHERE soak_id = ?1 ORDER BY seq",
            )
            .map_err(read)?;
        let mut rows = stmt.query([soak_id]).map_err(read)?;
        let mut slices = Vec::new();
        while let Some(r) = rows.next().map_err(read)? {
            let status: String = r.get(2).map_err(read)?;
            let metric: Option<String> = r.get(5).map_err(read)?;
            let value: Option<f64> = r.get(6).map_err(read)?;
            let unit: Option<String> = r.get(7).map_err(read)?;
            let better: Option<String> = r.get(8).map_err(read)?;
            let figure = match (metric, value, unit, better) {
                (Some(metric), Some(value), Some(unit), Some(better)) => Some(Figure {
                    metric,
                    value,
                    unit: self.enum_value(&unit, "unit")?,
                    better: self.enum_value(&better, "direction")?,
                }),
                _ => None,
            };
            slices.push(Slice {
                seq: r.get(0).map_err(read)?,
                due_ms: r.get(1).map_err(read)?,
                status: SliceStatus::parse(&status)
                    .ok_or_else(|| self.decode(format!("slice status '{status}'")))?,
                run_id: r.get(3).map_err(read)?,
                started_at: r.get(4).map_err(read)?,
                figure,
                note: r.get(9).map_err(read)?,
            });
        }
        Ok(slices)
    }
}

#[cfg(test)]
mod tests {
    use super::super::SqliteStore;
    use crate::model::{Better, Metric, Outcome, Unit};
    use crate::store::LATEST_VERSION;
    use crate::store::soak::{Figure, Slice, SliceStatus, SoakPlan, SoakState};
    use crate::store::{Labels, NewRun, Store};

    fn outcome(eps: f64) -> Outcome {
        let mut o = Outcome::new(
            "cpu",
            serde_json::json!({"threads": [1]}),
            crate::host::HostInfo::detect(),
        );
        o.push(Metric::new("events_per_sec", eps, Unit::EventsPerSec).threads(1));
        o
    }

    fn plan() -> SoakPlan {
        SoakPlan {
            workload: vec!["cpu".into(), "--threads".into(), "1".into()],
            start_ms: 1_796_000_000_000,
            every_ms: 2000,
            for_ms: 7000,
            duration_ms: 1000,
            threshold_pct: 80.0,
            labels: [("provider".to_string(), "test".to_string())].into(),
        }
    }

    #[test]
    fn a_schema_2_database_migrates_keeping_its_runs_and_takes_soaks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v2.db");
        // A database as the previous release (schema 2) left it, with a run in it.
        let mut old = SqliteStore::open(&path, true).unwrap();
        let before = outcome(1234.5);
        let run_id = old
            .save(&NewRun {
                command: "cpu",
                command_line: &[],
                labels: &Labels::new(),
                profile: None,
                outcomes: std::slice::from_ref(&before),
            })
            .unwrap();
        drop(old);
        crate::store::sqlite::tests::rewind(&path, 2);

        let mut store = SqliteStore::open(&path, false).unwrap();
        let version: u32 = store
            .conn
            .query_row("SELECT max(version) FROM schema_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, LATEST_VERSION);
        let back = store.load(run_id).unwrap().unwrap();
        assert_eq!(
            serde_json::to_value(&back.outcomes[0]).unwrap(),
            serde_json::to_value(&before).unwrap()
        );

        // And the migrated file keeps soaks: a slice and its run in one go.
        let id = store.create_soak(&plan()).unwrap();
        let o = outcome(1000.0);
        let labels: Labels = [("soak".to_string(), id.to_string())].into();
        let slice = Slice {
            seq: 0,
            due_ms: plan().due_ms(0),
            status: SliceStatus::Done,
            run_id: None,
            started_at: Some(o.started_at.clone()),
            figure: Some(Figure {
                metric: "events_per_sec".into(),
                value: 1000.0,
                unit: Unit::EventsPerSec,
                better: Better::Higher,
            }),
            note: None,
        };
        let slice_run = store
            .save_slice(
                id,
                &slice,
                Some(&NewRun {
                    command: "cpu",
                    command_line: &[],
                    labels: &labels,
                    profile: None,
                    outcomes: std::slice::from_ref(&o),
                }),
            )
            .unwrap()
            .unwrap();
        let missed = Slice {
            seq: 1,
            due_ms: plan().due_ms(1),
            status: SliceStatus::Missed,
            run_id: None,
            started_at: None,
            figure: None,
            note: Some("hostbench was not running".into()),
        };
        assert_eq!(store.save_slice(id, &missed, None).unwrap(), None);
        // A slice is recorded once.
        assert!(store.save_slice(id, &missed, None).is_err());
        store.set_soak_state(id, SoakState::Stopped, None).unwrap();

        let soak = store.load_soak(id).unwrap().unwrap();
        assert_eq!(soak.plan, plan());
        assert_eq!(soak.state, SoakState::Stopped);
        assert_eq!(soak.slices.len(), 2);
        assert_eq!(
            soak.slices[0],
            Slice {
                run_id: Some(slice_run),
                ..slice
            }
        );
        assert_eq!(soak.slices[1], missed);
        assert_eq!(store.load(slice_run).unwrap().unwrap().info.labels, labels);
        assert_eq!(store.list_soaks().unwrap().len(), 1);
        assert!(store.load_soak(id + 1).unwrap().is_none());

        store.delete_soak(id).unwrap();
        assert!(store.load_soak(id).unwrap().is_none());
        let orphans: i64 = store
            .conn
            .query_row("SELECT count(*) FROM soak_slices", [], |r| r.get(0))
            .unwrap();
        assert_eq!(orphans, 0);
    }
}
