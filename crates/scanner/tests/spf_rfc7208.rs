//! The openspf.org RFC 7208 test suite (`data/rfc7208-tests.json`, from pyspf 2.0.14;
//! `data/README.md`) against Rampart's judgement of a domain's SPF record.
//!
//! Each scenario's zonedata is served by the lab's DNS server (one root zone on its own
//! loopback address), the way the suite's drivers read it (pyspf's `testspf.py`):
//! - an `SPF` (type 99) entry is served as a TXT record of the same strings when the name
//!   has no `TXT` entry at all (hickory cannot serve type 99, and Rampart asks for TXT
//!   only, as RFC 7208 §4.4 says); `TXT: NONE` is no record, only the mark that stops
//!   that;
//! - `TIMEOUT` makes every query of the name time out, except for the types the name has
//!   records of (the lab's `timeout` failure);
//! - A and AAAA data are moved to 127.255.0.0/16 and 2001:db8:ffff::/48 (the lab serves
//!   nothing else; Rampart never compares a client address, so only whether a name has
//!   addresses counts);
//! - a TXT entry of no strings (`null-text`) is served as one empty string; an owner
//!   name the lab's zones cannot hold (`foo:bar/baz.example.com`, a name with spaces) is
//!   left out and listed.
//!
//! Rampart does not evaluate check_host() for a client address: it judges the published
//! record, as check_host() would treat a sender that no `ip4`, `ip6`, `a`, `mx` or `ptr`
//! term lists (`probes::mail::spf`, `checks::spf::judge`). Its judgement is a
//! **permerror** when the spf check makes one of the codes of [`PERMERROR`] (the record
//! does not parse, several records, an include or redirect target without one valid
//! record, the lookup, void-lookup and per-`mx` limits, loops), and **not a permerror**
//! otherwise (pass, fail, softfail, neutral, no record, or not assessable after a DNS
//! failure: the suite's pass/fail/softfail/neutral/none/temperror).
//!
//! The record judged is the one check_host() starts from: the domain of the test's
//! `mailfrom` (after its last `@`), or its `helo` when `mailfrom` is empty (§2.4).
//!
//! **Classifiable** tests are those whose expected result says whether the record is a
//! permerror for the senders it does not list. Every test of the suite is, except:
//! 1. a test whose expected results mix permerror with other results (the suite accepts
//!    either: RFC 7208 leaves the case open);
//! 2. a test whose client gets another kind of result than a sender of the same address
//!    family that no term lists: its client is listed by a term evaluated before the
//!    permerror every unlisted sender reaches, or the permerror turns on what a macro
//!    expands to for the client. [`CLIENT_DEPENDENT`] names them, each with the reason.
//!    They were found by running pyspf's own driver for every test with the test's
//!    client and with 203.0.113.77 or 2001:db8:dead::77 (`data/rfc7208_unlisted.py`). A
//!    syntax error is never such a case (§4.6: the record is parsed whole first,
//!    `detect-errors-anywhere`); only the limits of §4.6.4 and include/redirect targets
//!    are reached during evaluation.
//!
//! A classifiable test agrees when (a) Rampart's judgement is a permerror exactly when the
//! expected result is, and (b) when Rampart says every sender passes (`spf.pass_all`),
//! the test's client passes too: a pass for "every host on the internet" that the
//! suite's client does not get is a false finding whatever the client's address.
//!
//! The test fails on any disagreement among classifiable tests, printing each (scenario,
//! test, expected, Rampart's findings), and prints how many agree. Run it with
//! `cargo nextest run -p scanner --test spf_rfc7208 --no-capture`.

use std::collections::{BTreeMap, BTreeSet};

use lab::{Lab, LabFile};
use scanner::probes::Context;
use serde::Deserialize;
use serde_json::{Value, json};

const SUITE: &str = include_str!("data/rfc7208-tests.json");

/// The spf check's codes that mean check_host() ends in permerror (docs/FINDINGS.md).
const PERMERROR: &[&str] = &[
    "spf.syntax_error",
    "spf.multiple_records",
    "spf.broken_include",
    "spf.too_many_lookups",
    "spf.too_many_void_lookups",
    "spf.mx_too_many_names",
    "spf.loop",
];

/// Tests whose result depends on the client (rule 2): (name, why).
const CLIENT_DEPENDENT: &[(&str, &str)] = &[
    (
        "include-at-limit",
        "e8.example.com is `a include:inc.example.com ip4:1.2.3.4 mx -all` and inc.example.com has eight `a`: \
         the client 1.2.3.4 passes at ip4 after 10 lookups; every unlisted sender goes on to `mx`, the 11th, \
         a permerror (§4.6.4)",
    ),
    (
        "p-macro-multiple",
        "e7.example.com is `exists:%{p}.should.example.com ~exists:%{p}.ok.example.com`: the client \
         192.168.218.42, whose PTR name validates, matches the first exists; for a sender without a validated \
         name %{p} is `unknown` and pyspf makes the reverse lookup and both exists lookups void, more than 2: \
         a permerror that turns on the client's reverse DNS",
    ),
];

#[derive(Deserialize)]
struct Scenario {
    description: String,
    zonedata: Vec<(String, Vec<Value>)>,
    tests: Vec<SuiteTest>,
}

#[derive(Deserialize)]
struct SuiteTest {
    name: String,
    spec: String,
    helo: String,
    host: String,
    mailfrom: String,
    result: Vec<String>,
}

/// The query types a `TIMEOUT` name fails for unless it has records of the type.
const TIMEOUT_TYPES: &[&str] = &["TXT", "A", "AAAA", "MX", "PTR", "CNAME"];

/// A scenario's zonedata as one lab zone: its master-file records, its failures and the
/// entries left out (with why).
struct Zone {
    records: Vec<String>,
    failures: Vec<Value>,
    left_out: Vec<String>,
}

/// Can the lab's zones hold `name` (letters, digits, `-`, `_` and dots: hickory's
/// master-file parser refuses others, `foo:bar/baz.example.com` and a name with spaces)?
fn writable(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// A master-file character-string: quoted, `"` and `\` escaped, anything else as it is
/// (hickory's lexer keeps raw characters, control characters too, inside quotes).
fn quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if matches!(c, '"' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// The strings of a TXT or SPF entry: one string or a list of them.
fn strings(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        other => panic!("TXT data {other}"),
    }
}

/// An absolute domain name for master-file data ("" is the root).
fn absolute(name: &str) -> String {
    format!("{}.", name.trim_end_matches('.'))
}

fn zone(zonedata: &[(String, Vec<Value>)]) -> Zone {
    let mut z = Zone { records: Vec::new(), failures: Vec::new(), left_out: Vec::new() };
    let mut v4: BTreeMap<String, u16> = BTreeMap::new();
    let mut v6: BTreeMap<String, u16> = BTreeMap::new();
    for (name, entries) in zonedata {
        if !writable(name) {
            z.left_out
                .push(format!("{name:?} and its {} entries: the lab's zones cannot hold the name", entries.len()));
            continue;
        }
        let owner = absolute(name);
        let has_txt = entries.iter().any(|e| e.get("TXT").is_some());
        let mut timeout = false;
        // The types the name has records of.
        let mut types: BTreeSet<String> = BTreeSet::new();
        for entry in entries {
            if entry.as_str() == Some("TIMEOUT") {
                timeout = true;
                continue;
            }
            let Some((kind, data)) = entry.as_object().and_then(|o| o.iter().next()) else {
                panic!("{name}: entry {entry}");
            };
            let rdata = match kind.as_str() {
                "SPF" if has_txt => continue,
                "TXT" if data.as_str() == Some("NONE") => continue,
                "SPF" | "TXT" => {
                    let s = strings(data);
                    let s = if s.is_empty() { vec![String::new()] } else { s };
                    format!("TXT {}", s.iter().map(|s| quoted(s)).collect::<Vec<_>>().join(" "))
                }
                "A" => {
                    let n = v4.len() as u16;
                    let n = *v4.entry(data.as_str().unwrap().to_owned()).or_insert(n);
                    format!("A 127.255.{}.{}", n / 256, n % 256)
                }
                "AAAA" => {
                    let n = v6.len() as u16;
                    let n = *v6.entry(data.as_str().unwrap().to_ascii_lowercase()).or_insert(n);
                    format!("AAAA 2001:db8:ffff::{:x}", n + 1)
                }
                "MX" => {
                    let (pref, target) = (data[0].as_u64().unwrap(), data[1].as_str().unwrap());
                    if !target.is_empty() && !writable(target) {
                        z.left_out.push(format!("{name} MX {target:?}: the lab's zones cannot hold the target"));
                        continue;
                    }
                    format!("MX {pref} {}", absolute(target))
                }
                "PTR" | "CNAME" => format!("{kind} {}", absolute(data.as_str().unwrap())),
                other => panic!("{name}: record type {other}"),
            };
            types.insert(rdata.split(' ').next().unwrap_or_default().to_owned());
            z.records.push(format!("{owner} {rdata}"));
        }
        if timeout && types.is_empty() {
            z.failures.push(json!({"name": owner, "answer": "timeout"}));
        } else if timeout {
            for t in TIMEOUT_TYPES.iter().filter(|t| !types.contains(**t)) {
                z.failures.push(json!({"name": owner, "type": t, "answer": "timeout"}));
            }
        }
    }
    z
}

/// The domain check_host() starts from (§2.4): the mailfrom's domain, or the helo.
fn subject(test: &SuiteTest) -> &str {
    if test.mailfrom.is_empty() {
        return &test.helo;
    }
    test.mailfrom.rsplit_once('@').map_or(test.mailfrom.as_str(), |(_, d)| d)
}

/// Rampart's judgement of a domain's record.
struct Judgement {
    /// One of the [`PERMERROR`] codes.
    permerror: bool,
    /// `spf.pass_all`: every sender passes.
    pass_all: bool,
    /// The findings with their evidence, or the check's outcome when there is none.
    text: String,
}

async fn judge(dns: &scanner::Dns, domain: &str) -> Judgement {
    match scanner::probes::mail::spf(dns, domain).await {
        Err(e) => Judgement { permerror: false, pass_all: false, text: format!("not assessable: {e}") },
        Ok(seen) => {
            let (findings, check) = scanner::checks::spf::judge(&seen, domain, true);
            let has = |codes: &[&str]| findings.iter().any(|f| codes.contains(&f.code.as_str()));
            let text = if findings.is_empty() {
                format!("no finding ({:?}: {})", check.outcome, check.detail)
            } else {
                findings.iter().map(|f| format!("{} ({})", f.code, f.evidence)).collect::<Vec<_>>().join("; ")
            };
            Judgement { permerror: has(PERMERROR), pass_all: has(&["spf.pass_all"]), text }
        }
    }
}

/// Why a test is not classifiable, if it is not.
fn unclassifiable(test: &SuiteTest) -> Option<String> {
    let permerror = test.result.iter().filter(|r| *r == "permerror").count();
    if permerror > 0 && permerror < test.result.len() {
        return Some(format!("the suite accepts any of {:?}", test.result));
    }
    CLIENT_DEPENDENT.iter().find(|(name, _)| *name == test.name).map(|(_, why)| format!("depends on the client: {why}"))
}

/// Where a classifiable test and Rampart disagree, the rule broken.
fn disagreement(test: &SuiteTest, ours: &Judgement) -> Option<String> {
    let expected = test.result.iter().all(|r| r == "permerror");
    let class = |permerror: bool| if permerror { "a permerror" } else { "not a permerror" };
    if expected != ours.permerror {
        return Some(format!("the record is {}, ours {}", class(expected), class(ours.permerror)));
    }
    if ours.pass_all && !test.result.iter().any(|r| r == "pass") {
        return Some("ours: every sender passes, but the client does not".to_owned());
    }
    None
}

struct Outcome {
    scenario: String,
    test: SuiteTest,
    domain: String,
    ours: Judgement,
}

async fn run_scenario(index: usize, scenario: Scenario) -> (Vec<Outcome>, Vec<String>) {
    let z = zone(&scenario.zonedata);
    let doc = json!({
        "dns": {"address": format!("127.79.72.{}", index + 1)},
        "port_map": {"53": 0},
        "zones": [{"origin": ".", "records": z.records, "failures": z.failures}],
    });
    let name = &scenario.description;
    let file = LabFile::parse(&doc.to_string()).unwrap_or_else(|e| panic!("{name}: {e}"));
    let lab = Lab::up(&file).await.unwrap_or_else(|e| panic!("{name}: {e}"));
    let ctx = Context::lab(lab.resolver.unwrap(), file.effective_port_map(), None, "").unwrap();
    let dns = ctx.guard.dns();
    let outcomes = futures_util::future::join_all(scenario.tests.into_iter().map(|test| async move {
        let domain = subject(&test).to_owned();
        let ours = judge(dns, &domain).await;
        Outcome { scenario: name.clone(), test, domain, ours }
    }))
    .await;
    lab.down().await;
    (outcomes, z.left_out.iter().map(|l| format!("{name}: {l}")).collect())
}

#[tokio::test]
async fn rfc7208_suite_agrees_on_every_classifiable_record() {
    let suite: Vec<Scenario> = serde_json::from_str(SUITE).unwrap();
    let names: BTreeSet<String> = suite.iter().flat_map(|s| s.tests.iter().map(|t| t.name.clone())).collect();
    for (name, _) in CLIENT_DEPENDENT {
        assert!(names.contains(*name), "CLIENT_DEPENDENT names {name}, which the suite does not have");
    }
    let runs = futures_util::future::join_all(suite.into_iter().enumerate().map(|(i, s)| run_scenario(i, s))).await;
    let (mut total, mut classifiable) = (0, 0);
    let mut wrong = Vec::new();
    for (outcomes, left_out) in &runs {
        for l in left_out {
            println!("zonedata left out: {l}");
        }
        for Outcome { scenario, test, domain, ours } in outcomes {
            total += 1;
            let at = format!("{scenario} / {} (§{}, client {}, record of {domain})", test.name, test.spec, test.host);
            if let Some(why) = unclassifiable(test) {
                println!("not classifiable: {at}: {why}");
                continue;
            }
            classifiable += 1;
            match disagreement(test, ours) {
                None => println!("agree: {at}: expected {:?}; ours {}", test.result, ours.text),
                Some(rule) => wrong.push(format!("DISAGREE {at}: expected {:?}; {rule}: {}", test.result, ours.text)),
            }
        }
    }
    for w in &wrong {
        println!("{w}");
    }
    let agree = classifiable - wrong.len();
    println!("{agree} of {classifiable} classifiable tests agree ({total} tests in the suite)");
    assert_eq!(total, 203, "the suite's tests");
    assert!(wrong.is_empty(), "{} of {classifiable} classifiable tests disagree:\n{}", wrong.len(), wrong.join("\n"));
}
