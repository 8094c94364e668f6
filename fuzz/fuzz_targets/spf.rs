#![no_main]
//! SPF records come from untrusted DNS TXT data: no panic, and the canonical text of a
//! parsed record parses to the same record.

use libfuzzer_sys::fuzz_target;
use scanner::mail::spf;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else { return };
    let _ = spf::is_spf(s);
    let _ = spf::has_macros(s);
    if let Ok(record) = spf::parse(s) {
        let _ = (record.all(), record.redirect(), record.dns_lookup_terms(), record.includes(), record.uses_ptr());
        assert_eq!(spf::parse(&record.to_string()).as_ref(), Ok(&record));
    }
});
