//! Orchestration: the main job (`hostbench run`), compare and, later, soak and limits.

pub mod compare;
pub mod run;
pub mod soak;
