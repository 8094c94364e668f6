#![no_main]
//! CPE names come from queries and from feeds: no panic, and the formatted string of
//! a parsed name parses to the same name.

use libfuzzer_sys::fuzz_target;
use model::Cpe;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else { return };
    if let Ok(c) = Cpe::parse(s) {
        assert_eq!(Cpe::parse(&c.to_string()).as_ref(), Ok(&c));
        let _ = c.to_uri();
    }
});
