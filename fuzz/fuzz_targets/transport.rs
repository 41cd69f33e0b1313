#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| duckgate::session::fuzz::session_lines(data));
