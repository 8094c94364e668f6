//! SPF as RFC 7208 evaluates it, clause by clause, against a lab zone: each case is a
//! record published at `<case>.spf.test` and the findings the spf check (`checks::spf`)
//! makes of it. The evaluation is check_host() for a sender no mechanism lists (the
//! result every unlisted host gets), so these cases pin record selection (§4.5), syntax (§4.6, §7),
//! `all` and the terms after it (§5.1), include (§5.2), redirect (§6.1), the default
//! result (§4.7), the limits of §4.6.4 (10 lookups, 2 void lookups, 10 names per mx)
//! and loops.

use lab::{Lab, LabFile};
use scanner::probes::Context;

/// The findings of the SPF record of `domain`, a domain that receives mail.
async fn spf(dns: &scanner::Dns, domain: &str) -> Vec<scanner::ScanFinding> {
    let seen = scanner::probes::mail::spf(dns, domain).await.unwrap();
    scanner::checks::spf::judge(&seen, domain, true).0
}

/// (name under spf.test, record) for every case and the records they point at.
fn records() -> Vec<String> {
    let mut r: Vec<(String, String)> = Vec::new();
    let mut txt = |name: &str, value: &str| r.push((name.to_owned(), format!("TXT \"{value}\"")));
    // Targets.
    txt("deny", "v=spf1 -all");
    txt("soft", "v=spf1 ~all");
    txt("open", "v=spf1 +all");
    txt("broken", "v=spf1 frobnicate:x -all");
    txt("twice", "v=spf1 -all");
    txt("twice", "v=spf1 ~all");
    txt("notspf", "hello world");
    txt("loop-a", "v=spf1 include:loop-b.spf.test -all");
    txt("loop-b", "v=spf1 include:loop-a.spf.test -all");
    txt("self-redirect", "v=spf1 redirect=self-redirect.spf.test");
    for i in 1..=11 {
        txt(&format!("inc{i}"), "v=spf1 -all");
    }
    // §4.5 record selection.
    txt("multiple", "v=spf1 -all");
    txt("multiple", "v=spf1 ~all");
    txt("case", "V=SPF1 -all");
    // §4.6 and §7: syntax.
    txt("unknown-mechanism", "v=spf1 frobnicate:x -all");
    txt("double-redirect", "v=spf1 redirect=deny.spf.test redirect=soft.spf.test");
    txt("unknown-modifier", "v=spf1 foo=bar -all");
    txt("bad-macro", "v=spf1 exists:%{z}.spf.test -all");
    txt("macro", "v=spf1 exists:%{i}._spf.spf.test -all");
    // §5.1: all, and nothing after it is evaluated.
    txt("fail", "v=spf1 -all");
    txt("pass", "v=spf1 +all");
    txt("bare-all", "v=spf1 all");
    txt("neutral", "v=spf1 ?all");
    txt("softfail", "v=spf1 ~all");
    txt("after-all", "v=spf1 -all include:nowhere.spf.test a:gone1.spf.test a:gone2.spf.test a:gone3.spf.test");
    // §4.7: no all, no redirect.
    txt("default", "v=spf1 ip4:192.0.2.1");
    // §5.2 include.
    txt("include-none", "v=spf1 include:notspf.spf.test -all");
    txt("include-nxdomain", "v=spf1 include:nowhere.spf.test -all");
    txt("include-broken", "v=spf1 include:broken.spf.test -all");
    txt("include-multiple", "v=spf1 include:twice.spf.test -all");
    txt("include-open", "v=spf1 include:open.spf.test -all");
    txt("include-soft", "v=spf1 include:soft.spf.test -all");
    txt("include-loop", "v=spf1 include:loop-a.spf.test -all");
    // §6.1 redirect.
    txt("redirect-none", "v=spf1 redirect=notspf.spf.test");
    txt("redirect-soft", "v=spf1 redirect=soft.spf.test");
    txt("redirect-ignored", "v=spf1 -all redirect=nowhere.spf.test");
    txt("redirect-loop", "v=spf1 redirect=self-redirect.spf.test");
    // §4.6.4 lookups: exactly 10 is within the limit, 11 is over.
    let includes = |n: usize| (1..=n).map(|i| format!("include:inc{i}.spf.test")).collect::<Vec<_>>().join(" ");
    txt("ten", &format!("v=spf1 {} -all", includes(10)));
    txt("eleven", &format!("v=spf1 {} -all", includes(11)));
    txt("ten-with-redirect", &format!("v=spf1 {} redirect=deny.spf.test", includes(9)));
    // §4.6.4 void lookups: two are allowed, the third is a permerror.
    txt("two-void", "v=spf1 a:gone1.spf.test mx:gone2.spf.test -all");
    txt("three-void", "v=spf1 a:gone1.spf.test mx:gone2.spf.test exists:gone3.spf.test -all");
    // §4.6.4 mx: at most 10 names per mx mechanism.
    txt("mx10", "v=spf1 mx -all");
    txt("mx11", "v=spf1 mx -all");
    // exists of a fixed name with an A record matches every sender; exists asks for A
    // records only (§5.7): a name with only AAAA records matches nobody and is void.
    txt("exists-always", "v=spf1 exists:host.spf.test -all");
    txt("exists-v6-only", "v=spf1 exists:v6only.spf.test -all");
    txt("three-void-v6-only", "v=spf1 a:gone1.spf.test mx:gone2.spf.test exists:v6only.spf.test -all");
    let mut out: Vec<String> = r.into_iter().map(|(n, v)| format!("{n} {v}")).collect();
    out.push("v6only AAAA 2001:db8::25".to_owned());
    for i in 1..=10 {
        out.push(format!("mx10 MX {i} m{i}.spf.test."));
    }
    for i in 1..=11 {
        out.push(format!("mx11 MX {i} m{i}.spf.test."));
    }
    out
}

#[tokio::test]
async fn spf_verdicts_follow_rfc_7208() {
    let doc = serde_json::json!({
        "dns": {"address": "127.79.8.53"},
        "port_map": {"53": 10053},
        "zones": [{"origin": "test"}, {"origin": "spf.test", "records": records()}],
        "hosts": [{"name": "host.spf.test", "address": "127.79.8.2"}]
    });
    let file = LabFile::parse(&doc.to_string()).unwrap();
    let lab = Lab::up(&file).await.unwrap();
    let ctx = Context::lab(lab.resolver.unwrap(), file.effective_port_map(), None, "").unwrap();
    let dns = ctx.guard.dns();
    // (case, the clause, the finding codes expected; empty: none).
    let cases: &[(&str, &str, &[&str])] = &[
        ("multiple", "§4.5 two records: permerror", &["spf.multiple_records"]),
        ("case", "§4.5 v=spf1 in any case", &[]),
        ("notspf", "§4.5 no record, the domain has mail", &["spf.missing"]),
        ("unknown-mechanism", "§4.6 unknown mechanism", &["spf.syntax_error"]),
        ("double-redirect", "§6 redirect twice", &["spf.syntax_error"]),
        ("unknown-modifier", "§6 unknown modifiers are ignored", &[]),
        ("bad-macro", "§7.1 unknown macro letter", &["spf.syntax_error"]),
        ("macro", "§7 a macro needs the sender: counted, not judged", &[]),
        ("fail", "§5.1 -all", &[]),
        ("pass", "§5.1 +all", &["spf.pass_all"]),
        ("bare-all", "§4.6.2 a bare all is +all", &["spf.pass_all"]),
        ("neutral", "§5.1 ?all", &["spf.neutral_all"]),
        ("softfail", "§5.1 ~all", &["spf.softfail_all"]),
        ("after-all", "§5.1 terms after all are never evaluated", &[]),
        ("default", "§4.7 no all, no redirect: neutral", &["spf.no_all"]),
        ("include-none", "§5.2 include of a domain without SPF: permerror", &["spf.broken_include"]),
        ("include-nxdomain", "§5.2 include of a name that does not exist: permerror", &["spf.broken_include"]),
        ("include-broken", "§5.2 include of a record that does not parse: permerror", &["spf.broken_include"]),
        ("include-multiple", "§5.2 include of a domain with two records: permerror", &["spf.broken_include"]),
        ("include-open", "§5.2 include of +all matches every sender", &["spf.pass_all"]),
        ("include-soft", "§5.2 an included softfail does not match", &[]),
        ("include-loop", "§4.6.4 an include loop", &["spf.loop"]),
        ("redirect-none", "§6.1 redirect to a domain without SPF: permerror", &["spf.broken_include"]),
        ("redirect-soft", "§6.1 the redirect target's result", &["spf.softfail_all"]),
        ("redirect-ignored", "§6.1 redirect is ignored when there is an all", &[]),
        ("redirect-loop", "§6.1 a redirect loop", &["spf.loop"]),
        ("ten", "§4.6.4 exactly 10 lookups", &[]),
        ("eleven", "§4.6.4 11 lookups: permerror", &["spf.too_many_lookups"]),
        ("ten-with-redirect", "§4.6.4 redirect counts: 9 includes + redirect = 10", &[]),
        ("two-void", "§4.6.4 two void lookups", &[]),
        ("three-void", "§4.6.4 three void lookups: permerror", &["spf.too_many_void_lookups"]),
        ("mx10", "§4.6.4 an mx of 10 names", &[]),
        ("mx11", "§4.6.4 an mx of 11 names: permerror", &["spf.mx_too_many_names"]),
        ("exists-always", "§5.7 exists of a name with an A record matches everyone", &["spf.pass_all"]),
        ("exists-v6-only", "§5.7 exists asks for A only: AAAA alone matches nobody", &[]),
        (
            "three-void-v6-only",
            "§5.7, §4.6.4 an exists of a name with only AAAA is void",
            &["spf.too_many_void_lookups"],
        ),
    ];
    let mut wrong = Vec::new();
    for (case, clause, want) in cases {
        let domain = format!("{case}.spf.test");
        let found = spf(dns, &domain).await;
        let mut codes: Vec<&str> = found.iter().map(|f| f.code.as_str()).collect();
        codes.sort_unstable();
        if codes != *want {
            wrong.push(format!("{case} ({clause}): want {want:?}, got {found:#?}"));
        }
    }
    // Evidence names what failed.
    let loop_found = spf(dns, "include-loop.spf.test").await;
    let evidence = &loop_found[0].evidence;
    lab.down().await;
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(evidence.contains("loop-a.spf.test → loop-b.spf.test → loop-a.spf.test"), "{evidence}");
}
