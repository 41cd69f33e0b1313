//! Sets `cfg(duckgate_test_harness)` when cargo builds for duckgate's tests, benches or
//! examples: the `harness` feature of the `duckgate-test-harness` crate, which only duckgate's
//! dev-dependency on it turns on, says so through that crate's `links` metadata. src/lib.rs
//! refuses to compile the `test-bypass` feature without it.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(duckgate_test_harness)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=DEP_DUCKGATE_TEST_HARNESS_HARNESS");
    if std::env::var("DEP_DUCKGATE_TEST_HARNESS_HARNESS").as_deref() == Ok("on") {
        println!("cargo::rustc-cfg=duckgate_test_harness");
    }
}
