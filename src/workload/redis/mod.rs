//! Redis load generation. `lockstep` is redis-benchmark's model (batches of a pipeline,
//! a request budget); `load` is the native one (a sliding window per connection, a
//! duration, mixes and key distributions, and an open-loop fixed-rate mode that times
//! each request from when it was due); `cluster` routes both to the masters of a
//! Redis Cluster. Both run one epoll loop per thread over non-blocking sockets, with
//! requests encoded once and rewritten in place.

pub mod cluster;
pub mod conn;
pub mod keys;
pub mod load;
pub mod lockstep;
pub mod outcome;
pub mod poll;
pub mod resp;
pub mod template;
