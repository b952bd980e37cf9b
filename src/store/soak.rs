//! What the store keeps of a soak (`hostbench soak`): its plan (workload, schedule,
//! threshold), its state, and one record per slice: measured (linked to the run that
//! holds the slice's outcomes), missed, or failed. Backend-neutral: plain values, the
//! schedule in Unix milliseconds, so any SQL store can hold it.

use super::Labels;
use crate::model::{Better, Unit};
use serde::{Deserialize, Serialize};

/// What a soak does and when; fixed when it is created, so a resumed soak keeps the
/// original schedule.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SoakPlan {
    /// The workload's native command line, e.g. `["disk", "--tests", "mixed"]`.
    pub workload: Vec<String>,
    /// When slice 0 was due (Unix ms); slice k is due at `start_ms + k * every_ms`.
    pub start_ms: i64,
    pub every_ms: i64,
    /// The soak's length: slices are due while `k * every_ms < for_ms`.
    pub for_ms: i64,
    /// How long each slice measures (given to the workload's own time option).
    pub duration_ms: i64,
    /// A slice below this share of the median (in %) is flagged.
    pub threshold_pct: f64,
    /// Labels put on every slice's run (plus `soak=ID`).
    pub labels: Labels,
}

impl SoakPlan {
    pub fn slice_count(&self) -> u32 {
        if self.every_ms <= 0 {
            return 0;
        }
        ((self.for_ms + self.every_ms - 1) / self.every_ms).clamp(0, u32::MAX as i64) as u32
    }

    pub fn due_ms(&self, seq: u32) -> i64 {
        self.start_ms + i64::from(seq) * self.every_ms
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SoakState {
    /// A process is (or was, until it was killed) running it.
    Running,
    /// Stopped by Ctrl-C: resumable.
    Stopped,
    /// Every slice is recorded.
    Finished,
    /// The workload's command line was refused (exit 2): nothing will ever measure.
    Failed,
}

impl SoakState {
    pub fn as_str(self) -> &'static str {
        match self {
            SoakState::Running => "running",
            SoakState::Stopped => "stopped",
            SoakState::Finished => "finished",
            SoakState::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            SoakState::Running,
            SoakState::Stopped,
            SoakState::Finished,
            SoakState::Failed,
        ]
        .into_iter()
        .find(|v| v.as_str() == s)
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SliceStatus {
    /// Measured; its run holds the outcomes.
    Done,
    /// Its time passed without a measurement (hostbench was not running, or the
    /// previous slice ran into its slot).
    Missed,
    /// The workload ran and failed (e.g. the Redis server was down).
    Failed,
}

impl SliceStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            SliceStatus::Done => "done",
            SliceStatus::Missed => "missed",
            SliceStatus::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [SliceStatus::Done, SliceStatus::Missed, SliceStatus::Failed]
            .into_iter()
            .find(|v| v.as_str() == s)
    }
}

/// The figure a slice is judged by: its workload's headline.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Figure {
    /// `iops`, `events_per_sec`, ...
    pub metric: String,
    pub value: f64,
    pub unit: Unit,
    pub better: Better,
}

/// One slice of a soak.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Slice {
    /// 0-based position in the schedule.
    pub seq: u32,
    /// When it was due (Unix ms).
    pub due_ms: i64,
    pub status: SliceStatus,
    /// The run holding the slice's outcomes (done slices).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<i64>,
    /// When the measurement started (RFC 3339), for done and failed slices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figure: Option<Figure>,
    /// Why it was missed or failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A stored soak with every slice recorded so far, in schedule order.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Soak {
    pub id: i64,
    pub created_at: String,
    pub updated_at: String,
    pub state: SoakState,
    /// The process that runs it (while `running`), to refuse a second one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    pub plan: SoakPlan,
    pub slices: Vec<Slice>,
}
