//! What `hpa-lint` shares with `kubectl hpa-lint` (the `audit/` package):
//! the options every lint run takes ([`options`]), their resolution with the
//! configuration file into rule settings ([`settings`]), the findings of a run
//! ([`report`]) and their output formats ([`emit`]); Prometheus as a source
//! of demand for the simulator ([`prometheus`]); and the proxy a connection
//! to a cluster (or any server) takes, as kubectl chooses it ([`proxy`]).
//!
//! Nothing here reads manifests or talks to a cluster, and the package does
//! not depend on kube, tokio or axum: `cargo install hpa-lint` stays quick.

pub mod emit;
pub mod options;
pub mod prometheus;
pub mod proxy;
pub mod report;
pub mod settings;
