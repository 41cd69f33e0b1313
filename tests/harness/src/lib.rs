//! Nothing to call: this crate exists for its build script, which tells duckgate's build script
//! whether cargo is building for duckgate's tests, benches or examples (see Cargo.toml).
