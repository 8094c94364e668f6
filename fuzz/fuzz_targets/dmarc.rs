#![no_main]
//! DMARC records come from untrusted DNS TXT data: no panic, and the canonical text of
//! a parsed record parses to the same record.

use libfuzzer_sys::fuzz_target;
use scanner::mail::dmarc;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else { return };
    let _ = dmarc::is_dmarc(s);
    if let Ok(record) = dmarc::parse(s) {
        assert_eq!(dmarc::parse(&record.to_string()).as_ref(), Ok(&record));
    }
});
