#![no_main]
//! Query parameters arrive as arbitrary text: no parser may panic, and what parses
//! must parse again to itself.

use libfuzzer_sys::fuzz_target;
use model::{CveId, Domain, Page, RiskVector, SocialId};

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else { return };
    if let Ok(id) = SocialId::parse(s) {
        assert_eq!(SocialId::parse(id.as_str()), Ok(id));
    }
    if let Ok(d) = Domain::parse(s) {
        assert_eq!(Domain::parse(d.as_str()), Ok(d));
    }
    let _ = Domain::from_url(s);
    let _ = Domain::from_website(s);
    if let Ok(c) = CveId::parse(s) {
        assert_eq!(CveId::parse(c.as_str()), Ok(c));
    }
    if let Ok(p) = Page::parse(Some(s)) {
        assert!(p.number() >= 1 && p.offset() >= 0);
    }
    let _ = RiskVector::parse(s);
});
