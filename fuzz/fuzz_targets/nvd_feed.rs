#![no_main]
//! NVD feeds are downloaded bytes: the streaming reader never panics, and every record
//! it yields has configurations that evaluate without panicking.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let probe = model::Cpe::parse("cpe:2.3:a:apache:log4j:2.14.1").ok();
    let _ = vulndb::nvd::read_nvd(data, "fuzz", |cve| {
        if let Some(p) = &probe {
            let _ = vulndb::matching::cve_applies(&cve.configurations, p);
        }
        let _ = vulndb::stored(&cve);
        Ok(())
    });
});
