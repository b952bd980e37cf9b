//! Orchestration: the main job (`hostbench run`), compare and soak.

pub mod compare;
pub mod net_step;
pub mod redis_server;
pub mod redis_step;
pub mod redis_url;
pub mod run;
pub mod soak;
pub mod summary;
