//! The hpa-lint rule library: pure checks of Kubernetes HorizontalPodAutoscalers,
//! shared by the `hpa-lint` CLI and the admission webhook.
//!
//! Data flows one way: text or JSON → [`source`] (documents with positions) →
//! [`Object`]s → [`lint::lint`] with an [`Index`] of the other objects →
//! [`Diagnostic`]s. Nothing here does I/O, logs or knows which front end called it.

pub mod cluster;
pub mod config;
mod context;
pub mod controller;
pub mod defaults;
mod diagnostic;
pub mod fix;
pub mod index;
pub mod lint;
pub mod model;
pub mod mutate;
pub mod names;
pub mod object;
mod packed;
mod path;
pub mod quote;
pub mod reads;
pub mod registry;
pub mod rules;
pub mod settings;
pub mod source;
pub mod suggest;
#[cfg(test)]
mod testing;
pub mod workspace;

pub use context::Operation;
pub use diagnostic::{Diagnostic, Reason, Severity, Subject};
pub use fix::PatchOp;
pub use index::{Index, Lookup, MemoryIndex};
pub use lint::lint;
pub use object::{Object, ObjectKey, ObjectRef, Origin};
pub use path::{FieldPath, Segment};
pub use settings::Settings;
