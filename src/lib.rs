//! What `hpa-lint` shares with `kubectl hpa-lint` (the `audit/` package):
//! the options every lint run takes ([`options`]), their resolution with the
//! configuration file into rule settings ([`settings`]), the findings of a run
//! ([`report`]) and their output formats ([`emit`]); the manifests read and
//! linted ([`input`], [`check`]), the HPAs kept between its steps
//! ([`kept`]), their findings kept in order without holding them all
//! ([`spill`]), and the HPAs picked from them ([`hpas`]);
//! the simulation of the HPA controller with its outputs ([`simulate`]), on
//! standard loads ([`loads`]) or Prometheus' history ([`prometheus`]), and
//! two specs compared on one demand ([`compare`]); and the proxy a
//! connection to a cluster (or any server) takes, as kubectl chooses it
//! ([`proxy`]).
//!
//! Nothing here talks to a cluster, and the package does not depend on kube,
//! tokio or axum: `cargo install hpa-lint` stays quick.

/// Writes a line on standard error like `eprintln!`, without ending the run
/// when standard error is closed ([`report::tell`]).
#[macro_export]
macro_rules! tell {
    ($($arg:tt)*) => {
        $crate::report::tell(format_args!($($arg)*))
    };
}

pub mod check;
pub mod compare;
pub mod emit;
pub mod hpas;
pub mod input;
pub mod kept;
pub mod loads;
pub mod options;
pub mod prometheus;
pub mod proxy;
pub mod report;
pub mod scratch;
pub mod settings;
pub mod simulate;
pub mod spill;
pub mod walk;
