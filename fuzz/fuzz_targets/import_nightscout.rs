#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| duckgate::import::fuzz::nightscout(data));
