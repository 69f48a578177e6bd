//! Test vectors ported from the Kubernetes 1.36 controller's unit tests
//! (`horizontal_test.go`, `replica_calculator_test.go`): inputs and expected
//! results, each case under its Go test's name. The implementation is ours.

mod horizontal;
mod normalization;
mod replica_calculator;
mod simulation;

/// `time.Now()` of a test, in milliseconds.
const NOW: super::Millis = 1_700_000_000_000;
/// Go's zero `time.Time` (year 1), which unset test times are.
const ZERO_TIME: super::Millis = -62_135_596_800_000;
const MINUTE: super::Millis = 60_000;
const SECOND: super::Millis = 1_000;
