#![no_main]
//! CPE names come from queries and from feeds: no panic, the formatted string of a
//! parsed name parses to the same name, and a name read as canonical without parsing
//! (`Cpe::canonical_attrs`, `Cpe::canonical_head`) is what parsing reads.

use libfuzzer_sys::fuzz_target;
use model::Cpe;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else { return };
    let parsed = Cpe::parse(s);
    if let Ok(c) = &parsed {
        assert_eq!(Cpe::parse(&c.to_string()).as_ref(), Ok(c));
        let _ = c.to_uri();
        if let Some(head) = Cpe::canonical_head::<3>(s) {
            assert_eq!(head, [c.part(), c.vendor(), c.product()]);
        }
    }
    if let Some(attrs) = Cpe::canonical_attrs(s) {
        let c = parsed.as_ref().expect("a canonical name parses");
        assert_eq!(attrs.to_vec(), c.attrs().iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(c.to_string(), s);
        assert_eq!(Cpe::uri_of(&attrs), c.to_uri());
    }
});
