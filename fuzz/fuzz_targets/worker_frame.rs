#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| duckgate::sandbox::frame::fuzz::worker_frame(data));
