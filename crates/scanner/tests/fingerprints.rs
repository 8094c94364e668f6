//! The fingerprint engine on real pages and banners (fixtures written from the public
//! shape of those products' pages, in tests/fixtures/fingerprints), and the Wappalyzer
//! loader on the MIT-licensed Wappalyzer 6.10.47 technologies in ../shared/data.

use std::path::PathBuf;

use scanner::fingerprint::{Observation, RuleSet, analyze, wappalyzer_rows};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fingerprints")
}

fn found(d: &[scanner::fingerprint::Detection]) -> Vec<(String, Option<String>)> {
    d.iter().map(|d| (d.name.clone(), d.version.clone())).collect()
}

#[test]
fn builtin_rules_find_what_the_fixtures_show() {
    let cases: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures().join("cases.json")).unwrap()).unwrap();
    let rules = RuleSet::builtin();
    let mut checked = 0;
    for case in cases["pages"].as_array().unwrap() {
        let file = case["file"].as_str().unwrap();
        let html = std::fs::read_to_string(fixtures().join(file)).unwrap();
        let headers: Vec<(String, String)> = case["headers"]
            .as_array()
            .map(|h| h.iter().map(|p| (p[0].as_str().unwrap().to_owned(), p[1].as_str().unwrap().to_owned())).collect())
            .unwrap_or_default();
        let o = Observation::from_parts(case["url"].as_str().unwrap_or("https://example.org/"), headers, &html);
        let got = analyze(rules, &o);
        let names = found(&got);
        for e in case["expect"].as_array().unwrap() {
            let want = (e["name"].as_str().unwrap().to_owned(), e["version"].as_str().map(str::to_owned));
            assert!(names.contains(&want), "{file}: {want:?} not among {names:?}");
            checked += 1;
        }
        for absent in case["absent"].as_array().into_iter().flatten() {
            let absent = absent.as_str().unwrap();
            assert!(!names.iter().any(|(n, _)| n == absent), "{file}: {absent} detected: {names:?}");
        }
        // Evidence names what was seen.
        assert!(got.iter().all(|d| !d.evidence.is_empty()), "{file}");
    }
    for case in cases["banners"].as_array().unwrap() {
        let banner = case["banner"].as_str().unwrap();
        let got = found(&analyze(rules, &Observation::service(banner, None, None)));
        let e = &case["expect"];
        let want = (e["name"].as_str().unwrap().to_owned(), e["version"].as_str().map(str::to_owned));
        assert!(got.contains(&want), "{banner:?}: {want:?} not among {got:?}");
        checked += 1;
    }
    assert!(checked >= 40, "{checked} expectations");
}

fn wappalyzer() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/wappalyzer");
    dir.join("technologies").is_dir().then_some(dir)
}

#[test]
fn the_wappalyzer_technologies_load_and_detect() {
    let Some(dir) = wappalyzer() else {
        // With CI set the data is always there: its absence is a failure, not a skip.
        assert!(std::env::var_os("CI").is_none(), "CI is set and the shared data folder is absent");
        println!("skipped: ../shared/data/wappalyzer is not there");
        return;
    };
    let (rules, report) = RuleSet::load_wappalyzer_dir(&dir).unwrap();
    println!(
        "{} technologies, {} patterns, {} skipped, unsupported keys {:?}",
        report.technologies,
        report.patterns,
        report.skipped.len(),
        report.unsupported
    );
    assert_eq!(report.technologies, 3425, "the README counts 3,425 technologies");
    // Lookaround and backreferences are rare in the set: almost everything compiles.
    assert!(report.skipped.len() * 100 < report.patterns, "{} of {} skipped", report.skipped.len(), report.patterns);
    assert!(rules.technologies().filter(|t| !t.cpes.is_empty()).count() >= 270, "273 carry a CPE");

    let page = r#"<html><head><meta name="generator" content="WordPress 5.8.1">
        <link rel="stylesheet" href="/wp-content/themes/x/style.css">
        <script src="https://code.jquery.com/jquery-1.12.4.min.js"></script></head><body></body></html>"#;
    let o = Observation::from_parts(
        "https://www.example.org/",
        vec![("Server".into(), "nginx/1.18.0".into()), ("X-Powered-By".into(), "PHP/7.4.3".into())],
        page,
    );
    let got = analyze(&rules, &o);
    let names = found(&got);
    for want in [("Nginx", "1.18.0"), ("PHP", "7.4.3"), ("WordPress", "5.8.1"), ("jQuery", "1.12.4")] {
        assert!(names.contains(&(want.0.to_owned(), Some(want.1.to_owned()))), "{want:?} not among {names:?}");
    }
    // Categories come from categories.json; CPEs from the technology.
    let nginx = got.iter().find(|d| d.name == "Nginx").unwrap();
    assert!(nginx.categories.iter().any(|c| c == "Web servers"), "{:?}", nginx.categories);
    assert_eq!(nginx.cpes, vec!["cpe:2.3:a:nginx:nginx"]);
    // WordPress implies PHP and MySQL.
    assert!(names.iter().any(|(n, _)| n == "MySQL"), "{names:?}");

    // What the store keeps loads to the same rules.
    let (rows, row_report) = wappalyzer_rows(&dir).unwrap();
    assert_eq!(rows.len(), 3425);
    assert_eq!(row_report.skipped.len(), report.skipped.len());
    let (stored, _) = RuleSet::from_rows(rows.iter().map(|(a, b)| (a.as_str(), b.as_str())));
    assert_eq!(found(&analyze(&stored, &o)), names);

    // Merged after the built-in rules, the built-in definitions win for shared names.
    let merged = RuleSet::builtin().clone().merged(&rules);
    assert!(merged.len() >= rules.len());
    let nginx = merged.technology("nginx").unwrap();
    assert_eq!(nginx.cpes.first().map(String::as_str), Some("cpe:2.3:a:f5:nginx"), "the built-in CPE is NVD's");
}
