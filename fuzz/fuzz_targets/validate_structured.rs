#![no_main]
libfuzzer_sys::fuzz_target!(|input: duckgate::validate::fuzz_entry::StructuredInput| {
    duckgate::validate::fuzz_entry::structured(input)
});
