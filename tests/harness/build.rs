//! Tells the packages that depend on this one whether the `harness` feature is on: their build
//! scripts read it as `DEP_DUCKGATE_TEST_HARNESS_HARNESS` (`links` metadata).

fn main() {
    let on = std::env::var_os("CARGO_FEATURE_HARNESS").is_some();
    println!("cargo::metadata=harness={}", if on { "on" } else { "off" });
}
