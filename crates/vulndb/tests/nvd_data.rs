//! The NVD readers and the matcher against real records from ../shared/data.

use std::path::{Path, PathBuf};

use model::Cpe;
use vulndb::matching::cve_applies;
use vulndb::nvd::{ImportedCve, read_nvd};

fn data() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
    if p.is_dir() {
        Some(p)
    } else {
        // With CI set the data is always there: its absence is a failure, not a skip.
        assert!(std::env::var_os("CI").is_none(), "CI is set and the shared data folder is absent");
        eprintln!("skipped: {} is absent", p.display());
        None
    }
}

fn read_all(path: &Path) -> Vec<ImportedCve> {
    let file = std::fs::File::open(path).unwrap();
    let reader = vulndb::maybe_gzip(std::io::BufReader::new(file)).unwrap();
    let mut out = Vec::new();
    read_nvd(reader, &path.display().to_string(), |c| {
        out.push(c);
        Ok(())
    })
    .unwrap();
    out
}

fn one(data: &Path, id: &str) -> ImportedCve {
    let mut v = read_all(&data.join("nvd-2.0").join(format!("{id}.json")));
    assert_eq!(v.len(), 1);
    v.remove(0)
}

fn applies(c: &ImportedCve, cpe: &str) -> bool {
    cve_applies(&c.configurations, &Cpe::parse(cpe).unwrap())
}

#[test]
fn every_nvd_20_record_reads() {
    let Some(data) = data() else { return };
    let mut n = 0;
    for entry in std::fs::read_dir(data.join("nvd-2.0")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let recs = read_all(&path);
            assert!(!recs.is_empty(), "{}", path.display());
            n += recs.len();
        }
    }
    assert!(n >= 80, "{n}");
}

#[test]
fn log4shell_projects_to_the_cve_search_record() {
    let Some(data) = data() else { return };
    let c = one(&data, "CVE-2021-44228");
    let r = &c.record;
    assert_eq!(r.id.as_str(), "CVE-2021-44228");
    assert_eq!(r.assigner, "security@apache.org");
    assert_eq!((r.cvss3, r.impact_score3, r.exploitability_score3), (Some(10.0), Some(6.0), Some(3.9)));
    assert_eq!((r.cvss, r.impact_score, r.exploitability_score), (Some(9.3), Some(10.0), Some(8.6)));
    assert_eq!(r.cvss_vector.as_deref(), Some("AV:N/AC:M/Au:N/C:C/I:C/A:C"));
    assert_eq!(r.cvss3_vector.as_deref(), Some("CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H"));
    assert_eq!(r.cvss4, None, "the record has no CVSS 4.0 metric");
    assert_eq!(r.exploitability3.as_ref().unwrap().scope, "CHANGED");
    assert_eq!(r.access.as_ref().unwrap().complexity, "MEDIUM");
    assert!(r.cwe == "CWE-917" || r.cwe == "CWE-20", "{}", r.cwe);
    assert!(r.summary.starts_with("Apache Log4j2 2.0-beta9 through 2.15.0"));
    assert_eq!(model::timefmt::cve_search_datetime(r.published.0), "2021-12-10T10:15:09.143000");
    assert!(r.vulnerable_product.iter().any(|p| p.starts_with("cpe:2.3:a:apache:log4j:")));
    assert!(r.vulnerable_configuration_cpe_2_2.iter().all(|e| e.id.starts_with("cpe:/")));
    assert!(r.references.len() > 50);

    // Matching with the real ranges.
    let cases = [
        ("2.14.1", true),
        ("2.0", true),
        ("2.0:beta9", true), // NVD writes pre-releases in the update attribute
        ("2.0:beta8", false),
        ("2.12.1", true),
        ("2.12.2", false), // the end of a range is excluded
        ("2.13.0", true),
        ("2.17.1", false),
        ("2.16.0", false),
        ("1.2.17", false),
    ];
    for (v, want) in cases {
        assert_eq!(applies(&c, &format!("cpe:2.3:a:apache:log4j:{v}")), want, "log4j {v}");
    }
    assert!(applies(&c, "cpe:2.3:a:apache:log4j"), "no version: every CVE of the product");
    assert!(!applies(&c, "cpe:2.3:a:apache:log4net:2.0"));
    // The Siemens firmware entries are vulnerable only on their hardware (AND nodes).
    assert!(applies(&c, "cpe:2.3:o:siemens:6bk1602-0aa12-0tp0_firmware:2.6"));
    assert!(!applies(&c, "cpe:2.3:o:siemens:6bk1602-0aa12-0tp0_firmware:2.7.0"));
    assert!(!applies(&c, "cpe:2.3:h:siemens:6bk1602-0aa12-0tp0:-"), "the hardware is the platform, not vulnerable");
}

#[test]
fn heartbleed_in_the_legacy_feed() {
    let Some(data) = data() else { return };
    let recs = read_all(&data.join("nvd-1.1/nvdcve-1.1-2014.json.gz"));
    assert_eq!(recs.len(), 8846, "CVE_data_numberOfCVEs of the feed");
    let hb = recs.iter().find(|c| c.record.id.as_str() == "CVE-2014-0160").unwrap();
    assert_eq!(hb.record.cwe, "CWE-119".replace("119", &hb.record.cwe[4..]), "a CWE id");
    assert_eq!(hb.record.cvss, Some(5.0));
    // The 1.1 feed's v3 vector names its version.
    assert_eq!(hb.record.cvss3_vector.as_deref(), Some("CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N"));
    assert!(hb.record.refmap.contains_key("bid") || hb.record.refmap.contains_key("confirm"));
    for (v, want) in [("1.0.1", true), ("1.0.1f", true), ("1.0.1g", false), ("1.0.0", false), ("1.0.2", false)] {
        assert_eq!(applies(hb, &format!("cpe:2.3:a:openssl:openssl:{v}")), want, "openssl {v}");
    }
    // The 2.0 record of the same CVE agrees.
    let hb2 = one(&data, "CVE-2014-0160");
    for v in ["1.0.1", "1.0.1f", "1.0.1g", "1.0.2"] {
        let cpe = format!("cpe:2.3:a:openssl:openssl:{v}");
        assert_eq!(applies(hb, &cpe), applies(&hb2, &cpe), "{v}");
    }
}

#[test]
fn a_truncated_feed_is_an_error_with_a_position() {
    let Some(data) = data() else { return };
    let bytes = std::fs::read(data.join("nvd-2.0/CVE-2007-1508.from-nvdcve-2.0-modified.json")).unwrap();
    let cut = &bytes[..bytes.len() / 2];
    let err = read_nvd(cut, "feed.json", |_| Ok(())).unwrap_err().to_string();
    assert!(err.starts_with("feed.json: line "), "{err}");
    let err = read_nvd(
        &b"{\"vulnerabilities\": [{\"cve\": {\"id\": \"CVE-1\", \"published\": \"x\", \"lastModified\": \"y\"}}]}"[..],
        "f",
        |_| Ok(()),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("record 1"), "{err}");
}

#[test]
fn real_ranges_table() {
    let Some(data) = data() else { return };
    let cases: &[(&str, &str, bool)] = &[
        // Struts, CVE-2017-5638: [2.2.3, 2.3.32) and [2.5.0, 2.5.10.1).
        ("CVE-2017-5638", "cpe:2.3:a:apache:struts:2.3.31", true),
        ("CVE-2017-5638", "cpe:2.3:a:apache:struts:2.3.32", false),
        ("CVE-2017-5638", "cpe:2.3:a:apache:struts:2.2.2", false),
        ("CVE-2017-5638", "cpe:2.3:a:apache:struts:2.2.3", true),
        ("CVE-2017-5638", "cpe:2.3:a:apache:struts:2.5.10", true),
        ("CVE-2017-5638", "cpe:2.3:a:apache:struts:2.5.10.1", false),
        // regreSSHion, CVE-2024-6387: < 4.4, [8.6, 9.8), and 4.4:-, 8.5:p1, 9.8:-.
        ("CVE-2024-6387", "cpe:2.3:a:openbsd:openssh:3.9", true),
        ("CVE-2024-6387", "cpe:2.3:a:openbsd:openssh:4.4:p1", false),
        ("CVE-2024-6387", "cpe:2.3:a:openbsd:openssh:7.4:p1", false),
        ("CVE-2024-6387", "cpe:2.3:a:openbsd:openssh:8.5:p1", true),
        ("CVE-2024-6387", "cpe:2.3:a:openbsd:openssh:8.5:p2", false),
        ("CVE-2024-6387", "cpe:2.3:a:openbsd:openssh:9.7:p1", true),
        ("CVE-2024-6387", "cpe:2.3:a:openbsd:openssh:9.8:p1", false),
        // Path traversal in exactly httpd 2.4.49, CVE-2021-41773.
        ("CVE-2021-41773", "cpe:2.3:a:apache:http_server:2.4.49", true),
        ("CVE-2021-41773", "cpe:2.3:a:apache:http_server:2.4.50", false),
        ("CVE-2021-41773", "cpe:/a:apache:http_server:2.4.49", true),
        // OS entries of regreSSHion: the update/edition attributes count.
        ("CVE-2024-6387", "cpe:2.3:o:canonical:ubuntu_linux:22.04:*:*:*:lts", true),
        ("CVE-2024-6387", "cpe:2.3:o:canonical:ubuntu_linux:20.04:*:*:*:lts", false),
        ("CVE-2024-6387", "cpe:2.3:o:freebsd:freebsd:13.2:p5", true),
        ("CVE-2024-6387", "cpe:2.3:o:freebsd:freebsd:12.4:p5", false),
    ];
    for (id, cpe, want) in cases {
        let c = one(&data, id);
        assert_eq!(applies(&c, cpe), *want, "{id} {cpe}");
    }
}

/// Real records of both feed formats: the 2.0 samples and two legacy files.
fn real_records(data: &Path) -> Vec<ImportedCve> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir(data.join("nvd-2.0")).unwrap() {
        all.extend(read_all(&entry.unwrap().path()));
    }
    for name in ["nvdcve-1.1-2003.json.gz", "nvdcve-1.1-recent.json.gz"] {
        all.extend(read_all(&data.join("nvd-1.1").join(name)));
    }
    all
}

#[test]
fn nvd_records_read_back_from_their_served_form() {
    let Some(data) = data() else { return };
    let records = real_records(&data);
    let mut reproduced = 0;
    for c in &records {
        let stored = vulndb::stored(c);
        if c.record.served_form_reproduces() {
            reproduced += 1;
            assert!(stored.record_json.is_none(), "{}", c.record.id);
            let back = model::CveRecord::from_served_form(&stored.served).unwrap();
            assert_eq!(back, c.record, "{}", c.record.id);
        } else {
            assert!(stored.record_json.is_some(), "{}", c.record.id);
        }
    }
    assert!(records.len() > 1000 && reproduced == records.len(), "{reproduced} of {}", records.len());
}

#[test]
fn a_product_applies_without_a_version_as_evaluation_says() {
    let Some(data) = data() else { return };
    let mut shortcut = 0;
    for c in real_records(&data) {
        let stored = vulndb::stored(&c);
        for p in &stored.products {
            let evaluated = p.parts.chars().any(|part| {
                let probe = Cpe::parse(&format!("cpe:2.3:{part}:{}:{}", p.vendor, p.product)).unwrap();
                cve_applies(&c.configurations, &probe)
            });
            assert_eq!(p.applies_any_version, evaluated, "{} {}:{}", c.record.id, p.vendor, p.product);
            shortcut += usize::from(!stored.needs_eval);
        }
    }
    assert!(shortcut > 100, "the records without evaluation were tested ({shortcut})");
}

/// Configurations "product AND platform" whose platform node is marked vulnerable too
/// (common in older NVD records): NVD's `cpeName` search and cve-search return the CVE
/// for a name that a vulnerable criterion matches, and so does get-cve-from-cpe-id, with
/// the other node as its condition.
#[test]
fn and_configurations_apply_with_their_platform_as_a_condition() {
    use vulndb::matching::{Probe, cve_conditions};
    let Some(data) = data() else { return };
    let path = data.join("nvd-1.1/nvdcve-1.1-2014.json.gz");
    let recs = read_all(&path);
    let by_id = |id: &str| recs.iter().find(|r| r.record.id.as_str() == id).unwrap_or_else(|| panic!("{id}"));
    let conditions = |r: &ImportedCve, name: &str| -> Option<Vec<String>> {
        let cpe = Cpe::parse(name).unwrap();
        cve_conditions(&r.configurations, &Probe::new(&cpe)).map(|nodes| nodes.iter().map(|n| n.describe()).collect())
    };
    for id in ["CVE-2014-8445", "CVE-2014-8446", "CVE-2014-8447", "CVE-2014-8448"] {
        let found = conditions(by_id(id), "cpe:2.3:a:adobe:acrobat:10.1.11").unwrap_or_else(|| panic!("{id}"));
        assert!(
            found.iter().any(|c| c.contains("microsoft:windows") || c.contains("apple:mac_os_x")),
            "{id}: {found:?}"
        );
    }
    let kernel = conditions(by_id("CVE-2014-3186"), "cpe:2.3:o:linux:linux_kernel:3.13.1").unwrap();
    assert!(kernel.iter().any(|c| c.contains("google:nexus_7")), "{kernel:?}");
    assert!(conditions(by_id("CVE-2014-3187"), "cpe:2.3:a:google:chrome:37.0.2062.51").is_some());
    assert!(conditions(by_id("CVE-2014-3187"), "cpe:2.3:a:google:chrome:38.0.2125.101").is_none());

    // Twenty-five more AND configurations of the 2014 feed, read here from the raw JSON
    // (NVD's rule: a vulnerable criterion equal to the name): each such name finds its
    // CVE, and a criterion that is not vulnerable finds nothing by itself.
    let reader = vulndb::maybe_gzip(std::io::BufReader::new(std::fs::File::open(&path).unwrap())).unwrap();
    let raw: serde_json::Value = serde_json::from_reader(reader).unwrap();
    let mut checked = 0;
    let mut unconditional = 0;
    for item in raw["CVE_Items"].as_array().unwrap() {
        let id = item["cve"]["CVE_data_meta"]["ID"].as_str().unwrap();
        for node in item["configurations"]["nodes"].as_array().unwrap() {
            if node["operator"] != "AND" || checked >= 25 {
                continue;
            }
            let children = node["children"].as_array().unwrap();
            let entries = |c: &serde_json::Value| c["cpe_match"].as_array().cloned().unwrap_or_default();
            // A vulnerable criterion with a concrete version, of the first child.
            let Some(first) = children.first() else { continue };
            let Some(hit) = entries(first).into_iter().find(|m| {
                m["vulnerable"] == true
                    && m.get("versionEndIncluding").is_none()
                    && m.get("versionEndExcluding").is_none()
                    && m["cpe23Uri"].as_str().is_some_and(|u| u.split(':').nth(5).is_some_and(|v| v != "*" && v != "-"))
            }) else {
                continue;
            };
            let name = hit["cpe23Uri"].as_str().unwrap();
            let found = conditions(by_id(id), name);
            assert!(found.is_some(), "{id}: {name} is a vulnerable criterion of it");
            if found.as_ref().is_some_and(Vec::is_empty) {
                unconditional += 1;
            }
            // A platform entry that is not vulnerable does not find the CVE alone.
            for other in children.iter().skip(1) {
                for m in entries(other).into_iter().filter(|m| m["vulnerable"] == false) {
                    let platform = m["cpe23Uri"].as_str().unwrap();
                    let also_vulnerable = item["configurations"]["nodes"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .flat_map(|n| {
                            n["children"].as_array().cloned().unwrap_or_default().into_iter().chain([n.clone()])
                        })
                        .flat_map(|c| entries(&c))
                        .any(|e| e["vulnerable"] == true && e["cpe23Uri"] == platform);
                    if !also_vulnerable {
                        assert!(conditions(by_id(id), platform).is_none(), "{id}: {platform} is only a platform");
                    }
                }
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 25);
    assert!(unconditional < checked, "most hold only with their platform: {unconditional} of {checked}");
}

/// What NVD's configurations claim without saying the version is affected, from the
/// real records: a stray `http_server:*:*:win32` entry with no bounds (CVE-2009-1890,
/// which Apache lists for 2.2.0–2.2.11 only), OpenSSH in an AND with Red Hat platforms
/// (CVE-2008-3844), and WordPress CVEs of 2007–2008 that rest on `wordpress:*` with no
/// bounds. Each applies to the name (the search keeps NVD's semantics) but through no
/// bounded entry, so it is not charged (`model::CveBasis`); a bounded entry is.
#[test]
fn stray_unbounded_and_platform_entries_are_told_apart_from_bounded_ones() {
    use vulndb::matching::{Probe, cve_conditions, explain};
    let Some(data) = data() else { return };
    let feed = |year: &str| read_all(&data.join(format!("nvd-1.1/nvdcve-1.1-{year}.json.gz")));
    let (y2007, y2008, y2009) = (feed("2007"), feed("2008"), feed("2009"));
    let find = |recs: &[ImportedCve], id: &str| {
        recs.iter().find(|r| r.record.id.as_str() == id).cloned().unwrap_or_else(|| panic!("{id}"))
    };
    // (applies, bounded, conditions) of a record for a name.
    let judge = |r: &ImportedCve, name: &str| {
        let cpe = Cpe::parse(name).unwrap();
        let probe = Probe::new(&cpe);
        let conditions = cve_conditions(&r.configurations, &probe).map(|c| c.len()).unwrap_or(0);
        let explained = explain(&r.configurations, &probe);
        (applies(r, name), explained.map(|(_, bounded)| bounded), conditions)
    };

    let stray = find(&y2009, "CVE-2009-1890");
    for v in ["2.4.49", "2.4.62"] {
        let name = format!("cpe:2.3:a:apache:http_server:{v}:*:*:*:*:*:*:*");
        assert_eq!(judge(&stray, &name), (true, Some(false), 0), "CVE-2009-1890 on httpd {v}");
    }
    // Inside the range NVD bounds it applies through a bounded entry.
    let (applies_22, bounded_22, _) = judge(&stray, "cpe:2.3:a:apache:http_server:2.2.11:*:*:*:*:*:*:*");
    assert!(applies_22 && bounded_22 == Some(true), "CVE-2009-1890 on httpd 2.2.11");

    let redhat = find(&y2008, "CVE-2008-3844");
    for v in ["7.4", "9.9"] {
        let name = format!("cpe:2.3:a:openbsd:openssh:{v}:*:*:*:*:*:*:*");
        let (applies, bounded, conditions) = judge(&redhat, &name);
        assert!(applies, "CVE-2008-3844 applies to OpenSSH {v} by NVD's search");
        assert!(
            bounded == Some(false) || conditions > 0,
            "CVE-2008-3844 on OpenSSH {v}: neither unbounded nor conditional"
        );
    }

    let wordpress = "cpe:2.3:a:wordpress:wordpress:5.8.1:*:*:*:*:*:*:*";
    let old: Vec<&ImportedCve> = y2007.iter().chain(&y2008).filter(|r| applies(r, wordpress)).collect();
    assert!(old.len() >= 9, "the 2007–2008 records that match WordPress 5.8.1: {}", old.len());
    for r in &old {
        assert_eq!(
            judge(r, wordpress).1,
            Some(false),
            "{} is charged to WordPress 5.8.1 through a bounded entry",
            r.record.id
        );
    }

    // The control: CVE-2021-41773 names 2.4.49 exactly.
    let traversal = one(&data, "CVE-2021-41773");
    assert_eq!(judge(&traversal, "cpe:2.3:a:apache:http_server:2.4.49:*:*:*:*:*:*:*"), (true, Some(true), 0));
    assert!(!applies(&traversal, "cpe:2.3:a:apache:http_server:2.4.62:*:*:*:*:*:*:*"));
}
