//! The hpa-lint admission webhook: the rules of `hpa-lint-rules`, applied to
//! the HPAs (and the workloads HPAs scale) that the API server admits.
//!
//! [`app::app`] is the router; [`admission`] decides, without I/O;
//! [`cache`] keeps the cluster objects the cross-object rules look up;
//! [`report`] runs the rules over them continuously (the reporting mode);
//! [`server`], [`tls`] and [`reload`] serve it and follow mounted files;
//! [`self_signed`] makes a certificate for a laptop.
//! The binary (`hpa-webhook`) wires them together.

pub mod admission;
pub mod app;
pub mod cache;
pub mod changes;
mod deadline;
pub mod error;
pub mod metrics;
pub mod policy;
pub mod reload;
pub mod report;
pub mod self_signed;
pub mod server;
pub mod tls;
