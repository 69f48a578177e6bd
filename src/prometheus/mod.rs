//! Prometheus as the source of demand: a blocking client for `query_range`
//! ([`client`]), its answer read the same way from the network and from a
//! file ([`matrix`]), the built-in queries of an HPA's metrics ([`query`]),
//! the demand table the simulator runs on ([`demand`]), a replay's fetch and
//! its fidelity ([`replay`]) and the times on the command line ([`time`]). No async runtime: `cargo install hpa-lint` stays
//! quick, and `kubectl hpa-lint` reuses all of it.

pub mod client;
pub mod demand;
pub mod matrix;
pub mod query;
pub mod replay;
pub mod time;
