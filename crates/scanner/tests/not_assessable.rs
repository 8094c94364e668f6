//! No "missing" verdict Rampart cannot know (docs/FINDINGS.md, "What each 'missing'
//! verdict rests on"): against a lab name server that answers SERVFAIL, REFUSED or
//! nothing at all for chosen names, each check that needed the failed lookup is not
//! assessable with the reason, never a finding, and the other checks go on; an answer
//! without the record (NODATA) or a name that does not exist (NXDOMAIN) is what makes a
//! record missing. DKIM: a key at a selector nobody named is invisible from outside, so
//! no key at the curated selectors is not assessable, unless the company names its
//! selectors.

use lab::{Lab, LabFile};
use model::RiskVector;
use scanner::check::{Check, Outcome};
use scanner::probes::Context;
use scanner::scan::{MailStandards, mail_and_standards_checked};

const LAB: &str = r#"{
  "dns": {"address": "127.77.75.53"},
  "port_map": {"53": 10053, "80": 10080, "443": 10443},
  "zones": [
    {"origin": "test"},
    {"origin": "broken.test", "records": [
       "@ MX 10 mail", "@ TXT \"v=spf1 mx -all\"", "@ CAA 0 issue \"letsencrypt.org\"",
       "_dmarc TXT \"v=DMARC1; p=reject; rua=mailto:d@broken.test\"",
       "_smtp._tls TXT \"v=TLSRPTv1; rua=mailto:t@broken.test\"",
       "selector1._domainkey TXT \"v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu\""],
     "failures": [
       {"name": "@", "type": "TXT", "answer": "servfail"},
       {"name": "_dmarc", "answer": "timeout"},
       {"name": "@", "type": "CAA", "answer": "refused"},
       {"name": "_smtp._tls", "answer": "servfail"},
       {"name": "mail", "type": "AAAA", "answer": "refused"},
       {"name": "selector1._domainkey", "answer": "servfail"}]},
    {"origin": "nomx.test", "records": ["@ TXT \"v=spf1 -all\""],
     "failures": [{"name": "@", "type": "MX", "answer": "servfail"}]},
    {"origin": "absent.test", "records": ["@ MX 10 mail"]},
    {"origin": "incl.test", "records": ["@ TXT \"v=spf1 include:broken.test -all\""]},
    {"origin": "ptr.test", "records": ["@ TXT \"v=spf1 ptr include:broken.test -all\""]},
    {"origin": "signed.test", "records": [
       "@ MX 10 mail", "@ TXT \"v=spf1 mx -all\"",
       "_dmarc TXT \"v=DMARC1; p=reject; rua=mailto:d@signed.test\"",
       "sel1._domainkey TXT \"v=DKIM1; k=ed25519; p=11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\""]}
  ],
  "hosts": [
    {"name": "mail.broken.test", "address": "127.77.75.2"},
    {"name": "mail.absent.test", "address": "127.77.75.3"},
    {"name": "mail.signed.test", "address": "127.77.75.4"}
  ]
}"#;

fn check<'a>(found: &'a MailStandards, vector: RiskVector, name: &str) -> &'a Check {
    found
        .checks
        .iter()
        .find(|c| c.risk_vector == vector && c.check == name)
        .unwrap_or_else(|| panic!("no {name} check in {:#?}", found.checks))
}

fn codes(found: &MailStandards) -> Vec<&str> {
    found.findings.iter().map(|f| f.code.as_str()).collect()
}

#[tokio::test]
async fn failed_lookups_are_not_assessable_and_absent_records_are_missing() {
    let file = LabFile::parse(LAB).unwrap();
    let lab = Lab::up(&file).await.unwrap();
    let ctx = Context::lab(lab.resolver.unwrap(), file.effective_port_map(), None, "").unwrap();

    // Every lookup of broken.test that needs a failed name: not assessable, with why.
    let broken = mail_and_standards_checked(&ctx, "broken.test", None, &[]).await.unwrap();
    let codes_broken = codes(&broken);
    for (vector, name, why) in [
        (RiskVector::Spf, "spf record", "Server Failure"),
        (RiskVector::Dmarc, "dmarc record", "_dmarc.broken.test"),
        (RiskVector::ItStandardization, "caa", "REFUSED"),
        (RiskVector::ItStandardization, "tls-rpt", "Server Failure"),
        (RiskVector::ItStandardization, "ipv6", "REFUSED"),
        (RiskVector::Dkim, "dkim keys", "selector lookups failed"),
    ] {
        let c = check(&broken, vector, name);
        assert_eq!(c.outcome, Outcome::NotAssessable, "{c:?}");
        assert!(c.detail.to_ascii_uppercase().contains(&why.to_ascii_uppercase()), "{why} in {c:?}");
    }
    for never in [
        "spf.missing",
        "dmarc.missing",
        "dkim.missing",
        "it_standardization.caa_missing",
        "it_standardization.tls_rpt_missing",
        "it_standardization.ipv6_missing",
    ] {
        assert!(!codes_broken.contains(&never), "{never} from a failed lookup: {codes_broken:?}");
    }
    // What did answer is judged: MTA-STS has no record (NXDOMAIN under the zone).
    assert_eq!(check(&broken, RiskVector::ItStandardization, "mta-sts").outcome, Outcome::Finding);
    assert!(codes_broken.contains(&"it_standardization.mta_sts_missing"), "{codes_broken:?}");

    // The MX lookup fails: the checks that depend on whether the domain receives mail
    // are not assessable; DMARC and CAA go on.
    let nomx = mail_and_standards_checked(&ctx, "nomx.test", None, &[]).await.unwrap();
    for (vector, name) in [
        (RiskVector::Spf, "spf record"),
        (RiskVector::Dkim, "dkim keys"),
        (RiskVector::ItStandardization, "mta-sts"),
        (RiskVector::ItStandardization, "tls-rpt"),
    ] {
        let c = check(&nomx, vector, name);
        assert_eq!(c.outcome, Outcome::NotAssessable, "{c:?}");
        assert!(c.detail.contains("MX lookup"), "{c:?}");
    }
    assert!(codes(&nomx).contains(&"dmarc.missing"), "{:?}", codes(&nomx));
    assert!(!codes(&nomx).iter().any(|c| c.starts_with("spf.")), "{:?}", codes(&nomx));

    // An include whose lookup fails is a temperror: SPF not assessable; what the record
    // itself shows (ptr) is still a finding.
    let incl = mail_and_standards_checked(&ctx, "incl.test", None, &[]).await.unwrap();
    let spf = check(&incl, RiskVector::Spf, "spf record");
    assert_eq!(spf.outcome, Outcome::NotAssessable, "{spf:?}");
    assert!(spf.detail.contains("temperror"), "{spf:?}");
    assert!(!codes(&incl).iter().any(|c| c.starts_with("spf.")), "{:?}", codes(&incl));
    let ptr = mail_and_standards_checked(&ctx, "ptr.test", None, &[]).await.unwrap();
    let spf = check(&ptr, RiskVector::Spf, "spf record");
    assert_eq!((spf.outcome, spf.detail.as_str()), (Outcome::Finding, "spf.ptr_mechanism"), "{spf:?}");

    // Records that are absent (NODATA at the apex, NXDOMAIN below it) are missing.
    let absent = mail_and_standards_checked(&ctx, "absent.test", None, &[]).await.unwrap();
    let codes_absent = codes(&absent);
    for missing in [
        "spf.missing",
        "dmarc.missing",
        "it_standardization.caa_missing",
        "it_standardization.tls_rpt_missing",
        "it_standardization.mta_sts_missing",
        "it_standardization.ipv6_missing",
    ] {
        assert!(codes_absent.contains(&missing), "{missing} in {codes_absent:?}");
    }
    for name in ["spf record", "dmarc record"] {
        let vector = if name.starts_with("spf") { RiskVector::Spf } else { RiskVector::Dmarc };
        assert_eq!(check(&absent, vector, name).outcome, Outcome::Finding);
    }
    // No key at the curated selectors and none named: not assessable, not dkim.missing.
    let dkim = check(&absent, RiskVector::Dkim, "dkim keys");
    assert_eq!(dkim.outcome, Outcome::NotAssessable, "{dkim:?}");
    let tried = scanner::probes::mail::DEFAULT_SELECTORS.len();
    assert!(dkim.detail.starts_with(&format!("no key at the {tried} selectors tried")), "{dkim:?}");
    assert!(!codes_absent.contains(&"dkim.missing"));
    // Named by the company and absent: missing.
    let named = vec!["corp2024".to_owned()];
    let absent = mail_and_standards_checked(&ctx, "absent.test", None, &named).await.unwrap();
    assert_eq!(check(&absent, RiskVector::Dkim, "dkim keys").outcome, Outcome::Finding);
    let missing = absent.findings.iter().find(|f| f.code == "dkim.missing").expect("dkim.missing");
    assert!(missing.evidence.contains("corp2024"), "{missing:?}");

    // A domain that signs with `sel1`, a selector outside the curated list: invisible
    // unless named; named, the key is found and judged.
    let signed = mail_and_standards_checked(&ctx, "signed.test", None, &[]).await.unwrap();
    assert_eq!(check(&signed, RiskVector::Dkim, "dkim keys").outcome, Outcome::NotAssessable);
    assert!(!codes(&signed).contains(&"dkim.missing"));
    let named = vec!["sel1".to_owned()];
    let signed = mail_and_standards_checked(&ctx, "signed.test", None, &named).await.unwrap();
    let dkim = check(&signed, RiskVector::Dkim, "dkim keys");
    assert_eq!((dkim.outcome, dkim.detail.as_str()), (Outcome::Pass, "keys at sel1"), "{dkim:?}");
    assert_eq!(check(&signed, RiskVector::Spf, "spf record").outcome, Outcome::Pass);
    assert_eq!(check(&signed, RiskVector::Dmarc, "dmarc record").outcome, Outcome::Pass);
    lab.down().await;
}
