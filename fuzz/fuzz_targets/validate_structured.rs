#![no_main]
libfuzzer_sys::fuzz_target!(|input: duckgate_test_kit::fuzz_entry::StructuredInput| {
    duckgate_test_kit::fuzz_entry::structured(input)
});
