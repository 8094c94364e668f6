//! The readers against the real advisories in ../shared/data (vendor-advisories and
//! ubuntu-osv), and against random bytes and random mutations of real files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use proptest::prelude::*;

use super::*;
use crate::cwe::support::shared_data;

type Parser = fn(&[u8]) -> Result<Vec<Statement>, FeedError>;

fn any_file(bytes: &[u8]) -> Result<Vec<Statement>, FeedError> {
    parse_any("file", bytes)
}

const PARSERS: [(&str, Parser); 6] = [
    ("httpd", parse_httpd),
    ("nginx", parse_nginx),
    ("cve5", parse_cve5),
    ("osv", parse_osv),
    ("debian", parse_debian_tracker),
    ("any", any_file),
];

fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    out.sort();
    out
}

fn parse_file(parser: Parser, path: &Path) -> Vec<Statement> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let statements = parser(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let sniffed = parse_any(&path.display().to_string(), &bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(statements, sniffed, "parse_any reads {} as its own reader does", path.display());
    statements
}

/// The statements of one real file, or `None` (skipped) without the shared data.
fn real(relative: &str, parser: Parser) -> Option<Vec<Statement>> {
    let path = shared_data(relative)?;
    Some(parse_file(parser, &path))
}

fn about<'a>(statements: &'a [Statement], cve: &str) -> &'a Statement {
    let mut found = statements.iter().filter(|s| s.cve.as_str() == cve);
    let one = found.next().unwrap_or_else(|| panic!("no statement about {cve}"));
    assert!(found.next().is_none(), "more than one statement about {cve}");
    one
}

fn check(s: &Statement, cases: &[(&str, Option<bool>)]) {
    for (version, expected) in cases {
        assert_eq!(s.verdict(version), *expected, "{} {} {version}", s.source, s.cve.as_str());
    }
}

#[test]
fn advisory_every_real_file_parses() {
    let Some(data) = shared_data("") else { return };
    let vendor = data.join("vendor-advisories");
    let mut folders: Vec<(&str, Parser, Vec<PathBuf>)> = vec![
        ("httpd", parse_httpd, files(&vendor.join("httpd"), "json")),
        ("nginx", parse_nginx, files(&vendor.join("nginx"), "xml")),
        ("openssl", parse_cve5, files(&vendor.join("openssl"), "json")),
        ("ghsa-npm-jquery", parse_osv, files(&vendor.join("ghsa-npm-jquery"), "json")),
    ];
    let mut ubuntu = Vec::new();
    for package in std::fs::read_dir(data.join("ubuntu-osv")).unwrap() {
        let package = package.unwrap().path();
        if package.is_dir() {
            ubuntu.extend(files(&package, "json"));
        }
    }
    ubuntu.sort();
    folders.push(("ubuntu-osv", parse_osv, ubuntu));

    let mut by_source: BTreeMap<String, usize> = BTreeMap::new();
    for (folder, parser, paths) in &folders {
        let mut statements = 0;
        let mut silent = Vec::new();
        for path in paths {
            let got = parse_file(*parser, path);
            if got.is_empty() {
                silent.push(path.file_name().unwrap().to_string_lossy().into_owned());
            }
            for s in &got {
                assert!(s.versions().all(|v| !v.is_empty() && v.len() <= MAX_VERSION_BYTES));
                let label = match &s.source {
                    Source::Osv { ecosystem, .. } if ecosystem.starts_with("Ubuntu:") => "osv Ubuntu:*".to_owned(),
                    other => other.to_string(),
                };
                *by_source.entry(label).or_default() += 1;
            }
            statements += got.len();
        }
        println!("{folder}: {} files, {statements} statements; files stating nothing: {silent:?}", paths.len());
        assert!(!paths.is_empty() && statements > 0, "{folder}");
    }
    for (source, n) in &by_source {
        println!("  {source}: {n}");
    }
    // The data README counts 273 OpenSSL records; the folder holds 272 files.
    assert!(folders[0].2.len() >= 244 && folders[2].2.len() >= 272);
}

#[test]
fn advisory_httpd_real_records() {
    let Some(s) = real("vendor-advisories/httpd/CVE-2021-41773.json", parse_httpd) else { return };
    let s = about(&s, "CVE-2021-41773");
    assert_eq!(
        (s.source.clone(), s.cpe_product.clone()),
        (Source::Httpd, Some(("apache".into(), "http_server".into())))
    );
    check(s, &[("2.4.49", Some(true)), ("2.4.48", Some(false)), ("2.4.50", Some(false)), ("2.2.34", Some(false))]);

    let Some(s) = real("vendor-advisories/httpd/CVE-2009-1890.json", parse_httpd) else { return };
    let s = about(&s, "CVE-2009-1890");
    check(
        s,
        &[
            ("2.2.0", Some(true)),
            ("2.2.6", Some(true)),
            ("2.2.11", Some(true)),
            ("2.2.12", Some(false)),
            ("2.4.49", Some(false)),
            ("2.0.63", Some(false)),
            // Never released, so not in the list.
            ("2.2.7", Some(false)),
        ],
    );

    let Some(s) = real("vendor-advisories/httpd/CVE-2021-42013.json", parse_httpd) else { return };
    check(
        about(&s, "CVE-2021-42013"),
        &[("2.4.48", Some(false)), ("2.4.49", Some(true)), ("2.4.50", Some(true)), ("2.4.51", Some(false))],
    );

    // `<= 2.4.48` with `!< 2.4.17`.
    let Some(s) = real("vendor-advisories/httpd/CVE-2021-33193.json", parse_httpd) else { return };
    check(
        about(&s, "CVE-2021-33193"),
        &[("2.4.16", Some(false)), ("2.4.17", Some(true)), ("2.4.48", Some(true)), ("2.4.49", Some(false))],
    );

    // `>= 2.4.7` with `<= 2.4.51`: one range.
    let Some(s) = real("vendor-advisories/httpd/CVE-2021-44224.json", parse_httpd) else { return };
    check(
        about(&s, "CVE-2021-44224"),
        &[("2.4.6", Some(false)), ("2.4.7", Some(true)), ("2.4.51", Some(true)), ("2.4.52", Some(false))],
    );

    // `?=`: the status of 1.3.0 to 1.3.11 is unknown.
    let Some(s) = real("vendor-advisories/httpd/CVE-2000-0505.json", parse_httpd) else { return };
    check(
        about(&s, "CVE-2000-0505"),
        &[("1.3.12", Some(true)), ("1.3.11", None), ("1.3.0", None), ("1.3.14", Some(false)), ("2.0.35", Some(false))],
    );

    // Windows only.
    let Some(s) = real("vendor-advisories/httpd/CVE-2022-28330.json", parse_httpd) else { return };
    let s = about(&s, "CVE-2022-28330");
    assert_eq!(s.platform.as_deref(), Some("Windows"));
    check(s, &[("2.4.53", Some(true)), ("2.4.54", Some(false))]);

    // CVE JSON 5 files of httpd: a complete list, and one with defaultStatus unknown.
    let Some(s) = real("vendor-advisories/httpd/CVE-2024-39884.json", parse_httpd) else { return };
    let s = about(&s, "CVE-2024-39884");
    assert_eq!(s.source, Source::Httpd);
    check(s, &[("2.4.60", Some(true)), ("2.4.59", Some(false)), ("2.4.61", Some(false))]);
    let Some(s) = real("vendor-advisories/httpd/CVE-2023-25690.json", parse_httpd) else { return };
    check(
        about(&s, "CVE-2023-25690"),
        &[("2.4.0", Some(true)), ("2.4.55", Some(true)), ("2.4.56", None), ("2.2.34", None)],
    );
}

#[test]
fn advisory_openssl_real_records() {
    let Some(s) = real("vendor-advisories/openssl/CVE-2014-0076.json", parse_cve5) else { return };
    let s = about(&s, "CVE-2014-0076");
    assert_eq!(
        (s.source.clone(), s.cpe_product.clone()),
        (Source::Openssl, Some(("openssl".into(), "openssl".into())))
    );
    check(
        s,
        &[
            ("1.0.1", Some(true)),
            ("1.0.1f", Some(true)),
            ("1.0.1g", Some(false)),
            ("1.1.1", Some(false)),
            ("1.0.0l", Some(true)),
            ("1.0.0m", Some(false)),
            ("0.9.8y", Some(true)),
            ("0.9.8za", Some(false)),
            ("0.9.7", Some(false)),
        ],
    );
    // An explicit unaffected entry next to a range.
    let Some(s) = real("vendor-advisories/openssl/CVE-2016-2183.json", parse_cve5) else { return };
    check(about(&s, "CVE-2016-2183"), &[("1.0.2h", Some(true)), ("1.0.2i", Some(false)), ("1.1.0", Some(false))]);
    // The FIPS module's versions: no library version is in them.
    let Some(s) = real("vendor-advisories/openssl/CVE-2007-5502.json", parse_cve5) else { return };
    check(
        about(&s, "CVE-2007-5502"),
        &[("fips-1.1.1", Some(true)), ("fips-1.1.2", Some(false)), ("0.9.8g", Some(false))],
    );
}

#[test]
fn advisory_nginx_real_items() {
    let Some(all) = real("vendor-advisories/nginx/security_advisories.xml", parse_nginx) else { return };
    assert!(all.len() >= 60, "{}", all.len());
    assert!(all.iter().all(|s| s.source == Source::Nginx && s.cpe_product == Some(("f5".into(), "nginx".into()))));
    // Two vulnerable ranges and a single version; good 1.27.0+ and 1.26.1+.
    check(
        about(&all, "CVE-2024-32760"),
        &[
            ("1.24.0", Some(false)),
            ("1.25.0", Some(true)),
            ("1.25.5", Some(true)),
            ("1.26.0", Some(true)),
            ("1.26.1", Some(false)),
            ("1.27.0", Some(false)),
            ("1.29.0", Some(false)),
        ],
    );
    // Two ranges: 1.1.3-1.23.1 and 1.0.7-1.0.15.
    check(
        about(&all, "CVE-2022-41741"),
        &[
            ("1.0.6", Some(false)),
            ("1.0.7", Some(true)),
            ("1.0.15", Some(true)),
            ("1.1.2", Some(false)),
            ("1.1.3", Some(true)),
            ("1.22.0", Some(true)),
            ("1.22.1", Some(false)),
            ("1.23.1", Some(true)),
            ("1.23.2", Some(false)),
        ],
    );
    // Four fixed branches inside one vulnerable range 0.1.0-0.8.14.
    check(
        about(&all, "CVE-2009-2629"),
        &[
            ("0.5.37", Some(true)),
            ("0.5.38", Some(false)),
            ("0.6.39", Some(false)),
            ("0.7.61", Some(true)),
            ("0.7.62", Some(false)),
            ("0.7.69", Some(false)),
            ("0.8.14", Some(true)),
            ("0.8.15", Some(false)),
        ],
    );
    // The newest item: 1.31.3+ and 1.30.4+ are good, 1.30.3 and 1.31.0 are not.
    check(
        about(&all, "CVE-2026-42533"),
        &[
            ("0.9.5", Some(false)),
            ("0.9.6", Some(true)),
            ("1.30.3", Some(true)),
            ("1.30.4", Some(false)),
            ("1.31.0", Some(true)),
            ("1.31.3", Some(false)),
            ("1.32.0", Some(false)),
        ],
    );
    check(about(&all, "CVE-2009-4487"), &[("0.1.0", Some(true)), ("1.31.3", Some(true))]);
    let windows = about(&all, "CVE-2011-4963");
    assert_eq!(windows.platform.as_deref(), Some("Windows"));
    check(windows, &[("1.3.0", Some(true)), ("1.3.1", Some(false))]);
    // Every good version is not affected.
    for s in &all {
        for set in &s.unaffected {
            if let Affected::Range { introduced: Some(v), .. } = set {
                assert_eq!(s.verdict(v), Some(false), "{} {v}", s.cve.as_str());
            }
        }
    }
}

#[test]
fn advisory_jquery_real_ghsa() {
    let Some(s) = real("vendor-advisories/ghsa-npm-jquery/GHSA-6c3j-c64m-qhgq.json", parse_osv) else { return };
    let s = about(&s, "CVE-2019-11358");
    assert_eq!(s.source, Source::Osv { ecosystem: "npm".into(), distro: None });
    assert_eq!(
        (s.cpe_product.clone(), s.package.as_deref()),
        (Some(("jquery".into(), "jquery".into())), Some("jquery"))
    );
    check(s, &[("1.0.0", Some(true)), ("3.3.1", Some(true)), ("3.4.0", Some(false)), ("3.5.1", Some(false))]);

    let Some(v) = real("vendor-advisories/ghsa-npm-jquery/GHSA-gxr4-xjj5-5px2.json", parse_osv) else { return };
    let ecosystems: Vec<String> = v.iter().map(|s| s.source.to_string()).collect();
    assert_eq!(ecosystems, ["osv npm", "osv NuGet", "osv RubyGems", "osv Maven"]);
    assert!(v.iter().all(|s| s.cve.as_str() == "CVE-2020-11022"));
    assert_eq!(v[1].cpe_product, Some(("jquery".into(), "jquery".into())));
    assert_eq!(v[2].cpe_product, None, "jquery-rails is another product");
    check(&v[0], &[("1.1.4", Some(false)), ("1.2.0", Some(true)), ("3.4.1", Some(true)), ("3.5.0", Some(false))]);
}

fn ubuntu<'a>(v: &'a [Statement], cve: &str, ecosystem: &str) -> Option<&'a Statement> {
    let mut found = v
        .iter()
        .filter(|s| s.cve.as_str() == cve && matches!(&s.source, Source::Osv { ecosystem: e, .. } if e == ecosystem));
    let one = found.next();
    assert!(found.next().is_none(), "one statement for {cve} in {ecosystem}");
    one
}

#[test]
fn advisory_ubuntu_real_records() {
    // apache2: USN-6885-1, fixed in 20.04 by 2.4.41-4ubuntu3.19.
    let Some(v) = real("ubuntu-osv/apache2/USN-6885-1.json", parse_osv) else { return };
    let s = ubuntu(&v, "CVE-2024-39884", "Ubuntu:20.04:LTS").expect("20.04 statement");
    assert_eq!(s.package.as_deref(), Some("apache2"));
    assert_eq!(s.cpe_product, None);
    check(
        s,
        &[
            ("2.4.41-4ubuntu3.14", Some(true)),
            ("2.4.41-4ubuntu3.17", Some(true)),
            ("2.4.41-4ubuntu3.19", Some(false)),
            ("2.4.41-4ubuntu3.21", Some(false)),
            ("2.4.41", Some(true)),
        ],
    );
    let s = ubuntu(&v, "CVE-2024-39884", "Ubuntu:24.04:LTS").expect("24.04 statement");
    check(s, &[("2.4.58-1ubuntu8.1", Some(true)), ("2.4.58-1ubuntu8.2", Some(false))]);
    // Listed in `upstream`, but in no release's cves_map: the record is read as silent on it.
    assert!(ubuntu(&v, "CVE-2024-38474", "Ubuntu:20.04:LTS").is_none());

    // openssh: USN-6242-1, CVE-2023-38408, fixed in 20.04 by 1:8.2p1-4ubuntu0.8.
    let Some(v) = real("ubuntu-osv/openssh/USN-6242-1.json", parse_osv) else { return };
    let s = ubuntu(&v, "CVE-2023-38408", "Ubuntu:20.04:LTS").expect("20.04 statement");
    assert_eq!(s.source, Source::Osv { ecosystem: "Ubuntu:20.04:LTS".into(), distro: Some("focal".into()) });
    check(
        s,
        &[
            ("1:8.2p1-4ubuntu0.5", Some(true)),
            ("1:8.2p1-4ubuntu0.8", Some(false)),
            ("1:8.2p1-4ubuntu0.11", Some(false)),
        ],
    );

    // UBUNTU-CVE-2024-6387 (regreSSHion): no 20.04 entry; 22.04 fixed by 1:8.9p1-3ubuntu0.10.
    let Some(v) = real("ubuntu-osv/openssh/UBUNTU-CVE-2024-6387.json", parse_osv) else { return };
    assert!(ubuntu(&v, "CVE-2024-6387", "Ubuntu:20.04:LTS").is_none());
    let s = ubuntu(&v, "CVE-2024-6387", "Ubuntu:22.04:LTS").expect("22.04 statement");
    check(s, &[("1:8.9p1-3ubuntu0.7", Some(true)), ("1:8.9p1-3ubuntu0.10", Some(false))]);

    // The schema 1.6.3 record names its CVE by its id (and in `related`).
    let Some(v) = real("ubuntu-osv/jquery/UBUNTU-CVE-2020-11023.json", parse_osv) else { return };
    let s = ubuntu(&v, "CVE-2020-11023", "Ubuntu:20.04:LTS").expect("20.04 statement");
    assert_eq!(s.verdict("3.3.1~dfsg-3"), Some(true), "unfixed: every version");

    // Two channels under one ecosystem: fips/xenial unfixed, fips-updates/xenial fixed.
    let Some(v) = real("ubuntu-osv/openssh/UBUNTU-CVE-2023-38408.json", parse_osv) else { return };
    let fips: Vec<&Statement> = v
        .iter()
        .filter(|s| matches!(&s.source, Source::Osv { ecosystem, .. } if ecosystem == "Ubuntu:Pro:FIPS:16.04:LTS"))
        .collect();
    assert_eq!(fips.len(), 2);
    let fixed = "1:7.2p2-4ubuntu2.fips.2.10.4";
    let by_distro: BTreeMap<String, Option<bool>> = fips
        .iter()
        .map(|s| match &s.source {
            Source::Osv { distro, .. } => (distro.clone().unwrap_or_default(), s.verdict(fixed)),
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(
        by_distro,
        BTreeMap::from([("fips-updates/xenial".into(), Some(false)), ("fips/xenial".into(), Some(true))])
    );
}

/// Real files (one per reader and shape) to mutate, with their reader; a synthetic
/// tracker export, since the shared data holds none.
fn samples() -> &'static [(Parser, Vec<u8>)] {
    static SAMPLES: OnceLock<Vec<(Parser, Vec<u8>)>> = OnceLock::new();
    SAMPLES.get_or_init(|| {
        let mut out: Vec<(Parser, Vec<u8>)> = vec![(
            parse_debian_tracker,
            br#"{"apache2": {"CVE-2021-41773": {"releases": {"sid": {"status": "resolved", "fixed_version": "2.4.50-1"},
            "bookworm": {"status": "open"}}}, "TEMP-0000000-1": {"releases": {}}}}"#
                .to_vec(),
        )];
        let real: [(&str, Parser); 7] = [
            ("vendor-advisories/httpd/CVE-2021-33193.json", parse_httpd),
            ("vendor-advisories/httpd/CVE-2023-25690.json", parse_httpd),
            ("vendor-advisories/nginx/security_advisories.xml", parse_nginx),
            ("vendor-advisories/openssl/CVE-2016-2183.json", parse_cve5),
            ("vendor-advisories/ghsa-npm-jquery/GHSA-gxr4-xjj5-5px2.json", parse_osv),
            ("ubuntu-osv/openssh/UBUNTU-CVE-2023-38408.json", parse_osv),
            ("ubuntu-osv/apache2/USN-6885-1.json", parse_osv),
        ];
        if let Some(dir) = shared_data("") {
            for (relative, parser) in real {
                let path = dir.join(relative);
                out.push((parser, std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))));
            }
        }
        out
    })
}

/// Whatever a reader returns for `bytes`, it returns without panicking, within the caps.
fn survives(parser: Parser, bytes: &[u8]) {
    if let Ok(statements) = parser(bytes) {
        assert!(statements.len() <= MAX_STATEMENTS);
        for s in &statements {
            assert!(s.versions().all(|v| v.len() <= MAX_VERSION_BYTES));
            let _ = (s.verdict("1.0"), s.verdict("1:2.4.41-4ubuntu3.14"), s.verdict(""));
        }
    }
}

/// Bytes that matter to the two syntaxes, for mutations that reach past the tokenizer.
const SYNTAX: &[u8] = b"{}[]\",:0123456789-.+~<>/=!? \\aelnrtu";

fn mutate(mut bytes: Vec<u8>, ops: &[(u8, usize, u8)]) -> Vec<u8> {
    for &(kind, at, byte) in ops {
        let b = if byte < 128 { SYNTAX[usize::from(byte) % SYNTAX.len()] } else { byte };
        let len = bytes.len();
        match kind % 4 {
            0 if len > 0 => bytes[at % len] = b,
            1 => bytes.insert(at % (len + 1), b),
            2 if len > 0 => {
                let start = at % len;
                let end = (start + usize::from(byte) + 1).min(len);
                bytes.drain(start..end);
            }
            _ => bytes.truncate(at % (len + 1)),
        }
    }
    bytes
}

proptest! {
    #[test]
    fn advisory_readers_survive_random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        for (_, parser) in PARSERS {
            survives(parser, &bytes);
        }
    }

    #[test]
    fn advisory_readers_survive_syntax_soup(text in "[{}\\[\\]\":,0-9a-zA-Z<>/= .+~!?-]{0,400}") {
        for (_, parser) in PARSERS {
            survives(parser, text.as_bytes());
        }
    }

    #[test]
    fn advisory_readers_survive_mutated_real_files(
        which in any::<prop::sample::Index>(),
        ops in prop::collection::vec((any::<u8>(), any::<usize>(), any::<u8>()), 1..8),
    ) {
        let samples = samples();
        let (parser, bytes) = &samples[which.index(samples.len())];
        let mutated = mutate(bytes.clone(), &ops);
        survives(*parser, &mutated);
        survives(any_file, &mutated);
    }
}

#[test]
fn advisory_truncated_real_files_are_errors() {
    for (parser, bytes) in samples() {
        assert!(parser(bytes).is_ok());
        for cut in [1, bytes.len() / 4, bytes.len() / 2, bytes.len() - 2] {
            assert!(parser(&bytes[..cut]).is_err(), "cut at {cut} of {} bytes", bytes.len());
        }
    }
}
