#![no_main]
//! DKIM key records come from untrusted DNS TXT data, and their keys are decoded as
//! DER: no panic, and a key that parses has a size unless it is revoked. The input is
//! tried as a record and, base64-encoded, as the DER key of an RSA and an Ed25519
//! record.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use libfuzzer_sys::fuzz_target;
use scanner::mail::dkim;

fn check(record: &str) {
    if let Ok(key) = dkim::parse(record) {
        let _ = (key.testing(), key.sha1_only());
        assert_eq!(key.revoked, key.key_bits.is_none());
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        check(s);
    }
    let p = STANDARD.encode(data);
    check(&format!("v=DKIM1; k=rsa; p={p}"));
    check(&format!("v=DKIM1; k=ed25519; p={p}"));
});
