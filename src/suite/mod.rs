//! Orchestration: the main job (`hostbench run`) and, later, soak, compare and limits.

pub mod run;
