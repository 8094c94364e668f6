#![no_main]
//! DKIM key records come from untrusted DNS TXT data, and their keys are decoded as
//! DER: no panic, and a key that parses has a size unless it is revoked.

use libfuzzer_sys::fuzz_target;
use scanner::mail::dkim;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else { return };
    if let Ok(key) = dkim::parse(s) {
        let _ = (key.testing(), key.sha1_only());
        assert_eq!(key.revoked, key.key_bits.is_none());
    }
});
