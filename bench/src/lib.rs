//! Corpus generator and end-to-end benchmark for hpa-lint (see `README.md`).

pub mod corpus;
pub mod rng;
pub mod webhook;
