//! libFuzzer entry: the parser and the FairQ rewriter on arbitrary bytes
//! (`dcfair_switch::fuzz::fuzz_one`: no panic, edits keep a valid checksum valid).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    dcfair_switch::fuzz::fuzz_one(data);
});
