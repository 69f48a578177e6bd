//! The HPA controller's decision, exactly as kube-controller-manager 1.36
//! makes it (`pkg/controller/podautoscaler`; hpa-controller-algorithm.md,
//! whose section ids C1–C10 the code and tests cite): the replica calculator,
//! both normalization paths, one sync of an HPA, a pod model to simulate a
//! workload under a load trace, and figures derived from the behavior.
//!
//! Pure: no I/O, no clock. Time is integer milliseconds, every timestamp of a
//! sync is the sync's time, and windows use the strict boundary of C2.2.

pub mod flags;
pub mod history;
pub mod normalize;
pub mod reconcile;
pub mod replicas;
pub mod simulate;
pub mod velocity;

#[cfg(test)]
mod tests;

pub use flags::{ControllerFlags, Millis, parse_duration};
pub use reconcile::Autoscaler;
