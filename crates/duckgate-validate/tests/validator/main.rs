//! The validator's tests over the test kit (tests/kit): its case tables, its
//! query grammar and the fuzz targets' invariants. One binary, one link; each module is a subject.
//!
//! Integration tests rather than unit tests: the kit is built on this crate, and only here do the
//! tests and the kit link the same copy of it. What needs the validator alone stays in
//! `src/validate/` as unit tests.

mod proptests;
mod resolution_tests;
mod test_support;
mod tests;
mod unparsed_tests;
