//! Corpus generator and end-to-end benchmark for hpa-lint (see `README.md`).

pub mod corpus;
mod rng;
pub mod webhook;
