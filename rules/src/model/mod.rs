//! Typed views of the objects the rules look at, and the API server's value
//! grammars (quantities, names).

pub mod autoscaler;
pub mod decode;
pub mod disruption;
pub(crate) mod go;
pub(crate) mod go_time;
pub mod hpa;
pub mod linted;
pub mod names;
pub mod quantity;
pub mod selector;
pub mod status;
pub mod workload;
