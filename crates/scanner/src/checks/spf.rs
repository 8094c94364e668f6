//! spf: the domain's SPF record (RFC 7208) judged from what the evaluation of
//! check_host() for a sender no mechanism lists gave ([`crate::probes::mail::spf`]):
//! the result every unlisted host on the internet gets. A DNS failure during the
//! evaluation (temperror) leaves the result unjudged: no finding but what the record
//! itself shows (`ptr`).

use model::RiskVector;

use super::Judged;
use crate::check::{self, Check};
use crate::finding::ScanFinding;
use crate::gather::MailSeen;
use crate::mail::spf;
use crate::probes::mail::{How, Outcome, PermError, SpfSeen};

const CHECK: &str = "spf record";

/// The spf check of a company domain: not assessable when the MX or TXT lookup failed.
pub fn domain(seen: &MailSeen, out: &mut Judged) {
    let domain = seen.domain.as_str();
    match (&seen.mx_failed, &seen.spf) {
        (Some(why), _) => out.checks.push(Check::not_assessable(RiskVector::Spf, CHECK, domain, why)),
        (None, Some(Ok(spf))) => out.add(judge(spf, domain, seen.handles_mail)),
        (None, Some(Err(e))) => {
            let why = format!("the TXT lookup of {domain} failed: {e}");
            out.checks.push(Check::not_assessable(RiskVector::Spf, CHECK, domain, why));
        }
        (None, None) => {}
    }
}

/// The findings of `domain`'s SPF record and the check's outcome: not assessable when a
/// lookup of the evaluation failed (temperror), a pass that says what unlisted senders
/// get otherwise.
pub fn judge(seen: &SpfSeen, domain: &str, handles_mail: bool) -> (Vec<ScanFinding>, Check) {
    let judged = |out: Vec<ScanFinding>, observed: String| {
        let check = check::judged(RiskVector::Spf, CHECK, domain, &out, observed);
        (out, check)
    };
    let records: Vec<&String> = seen.texts.iter().filter(|t| spf::is_spf(t)).collect();
    let mut out = Vec::new();
    let record = match records.as_slice() {
        [] if handles_mail => {
            out.push(ScanFinding::new("spf.missing", domain, "no v=spf1 TXT record; the domain has MX records"));
            return judged(out, String::new());
        }
        [] => {
            out.push(ScanFinding::new("spf.missing_non_mail", domain, "no v=spf1 TXT record and no MX records"));
            return judged(out, String::new());
        }
        [one] => *one,
        many => {
            let evidence = many.iter().map(|r| format!("\"{r}\"")).collect::<Vec<_>>().join("; ");
            out.push(ScanFinding::new("spf.multiple_records", domain, format!("{} records: {evidence}", many.len())));
            return judged(out, String::new());
        }
    };
    let parsed = match spf::parse(record) {
        Ok(p) => p,
        Err(e) => {
            out.push(ScanFinding::new("spf.syntax_error", domain, format!("\"{record}\": {e}")));
            return judged(out, String::new());
        }
    };
    if parsed.uses_ptr() {
        out.push(ScanFinding::new("spf.ptr_mechanism", domain, format!("\"{record}\" uses ptr")));
    }
    // The one record that parses is always evaluated.
    let Some(outcome) = &seen.outcome else { return judged(out, String::new()) };
    let quoted = format!("\"{record}\"");
    match outcome {
        Outcome::Result(spf::Qualifier::Pass, how) => {
            out.push(ScanFinding::new("spf.pass_all", domain, evidence(how, &quoted)));
        }
        Outcome::Result(spf::Qualifier::Neutral, How::Default) => {
            out.push(ScanFinding::new("spf.no_all", domain, format!("{quoted}: no all and no redirect=")));
        }
        Outcome::Result(spf::Qualifier::Neutral, how) => {
            out.push(ScanFinding::new("spf.neutral_all", domain, evidence(how, &quoted)));
        }
        Outcome::Result(spf::Qualifier::SoftFail, how) => {
            out.push(ScanFinding::new("spf.softfail_all", domain, evidence(how, &quoted)));
        }
        Outcome::Result(spf::Qualifier::Fail, how) => {
            return judged(out, format!("unlisted senders fail: {}", evidence(how, &quoted)));
        }
        Outcome::PermError(kind, why) => out.push(ScanFinding::new(code(*kind), domain, format!("{quoted}: {why}"))),
        // A lookup that failed (timeout, SERVFAIL, REFUSED) is a temperror: the record
        // cannot be judged, and that is never a finding.
        Outcome::TempError(e) => {
            tracing::info!(domain, error = %e, "SPF not assessable: a lookup failed (temperror)");
            out.retain(|f| f.code == "spf.ptr_mechanism");
            // What the record itself shows (`ptr`) is still a finding; the evaluation
            // is not assessable.
            if !out.is_empty() {
                return judged(out, String::new());
            }
            let why = format!("{quoted}: a lookup of the evaluation failed (temperror): {e}");
            return (out, Check::not_assessable(RiskVector::Spf, CHECK, domain, why));
        }
    }
    judged(out, String::new())
}

/// The evidence of a result for unlisted senders: the record, and the trail that led
/// there when it came through redirects or includes.
fn evidence(how: &How, record: &str) -> String {
    match how {
        How::All | How::Default => record.to_owned(),
        How::Through(trail) => format!("{record} ({trail})"),
    }
}

/// The finding code of a permerror.
fn code(kind: PermError) -> &'static str {
    match kind {
        PermError::TooManyLookups => "spf.too_many_lookups",
        PermError::TooManyVoidLookups => "spf.too_many_void_lookups",
        PermError::MxTooManyNames => "spf.mx_too_many_names",
        PermError::Loop => "spf.loop",
        PermError::BrokenInclude => "spf.broken_include",
    }
}
