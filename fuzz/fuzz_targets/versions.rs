#![no_main]
//! Versions and CPE attribute patterns from feeds and queries: no panic, the version
//! order is antisymmetric, and the key alone is the parsed version's key.

use libfuzzer_sys::fuzz_target;
use vulndb::version::Version;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else { return };
    let (a, b) = s.split_once('|').unwrap_or((s, ""));
    let (va, vb) = (Version::parse(a), Version::parse(b));
    assert_eq!(va.cmp(&vb), vb.cmp(&va).reverse());
    assert_eq!(Version::key_of(a), va.key());
    let _ = vulndb::matching::attr_matches(a, b);
});
