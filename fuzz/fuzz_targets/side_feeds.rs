#![no_main]
//! KEV, EPSS, CWE and CAPEC files are downloaded bytes: no parser panics.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = vulndb::kev::parse_kev(data);
    if let Ok(reader) = vulndb::epss::read_epss(std::io::Cursor::new(data.to_vec())) {
        for row in reader.take(1000) {
            let _ = row;
        }
    }
    let _ = vulndb::cwe::parse_cwe(data);
    let _ = vulndb::capec::parse_capec_xml(data);
    let _ = vulndb::capec::parse_capec_stix(data);
});
