//! The admission webhook's benchmark: a stub API server to fill its caches,
//! an HTTPS load generator, and the in-process cost of each phase of a review
//! (see `bench/README.md`).

pub mod apiserver;
pub mod load;
pub mod phases;
