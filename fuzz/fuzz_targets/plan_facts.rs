#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| duckgate::plan_policy::fuzz::plan_facts(data));
