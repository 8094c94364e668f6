#![no_main]
//! Import files are operator-supplied bytes: parsing and validating them never panics.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = intel::parse_companies(data);
});
