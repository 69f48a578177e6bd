//! What the tests against a real Prometheus share, in `hpa-lint`'s tests,
//! `kubectl hpa-lint`'s and the replay benchmark: a Prometheus started on
//! loopback ([`prometheus`]) and the cluster history it is loaded with
//! ([`history`]).
//!
//! For tests and benchmarks only.

pub mod history;
pub mod prometheus;
