#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| duckgate::validate::fuzz_tree::tree_json(data));
