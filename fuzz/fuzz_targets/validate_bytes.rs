#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| duckgate_test_kit::fuzz_entry::bytes(data));
