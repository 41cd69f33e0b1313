#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| duckgate::sandbox::frame::fuzz::parent_frame(data));
