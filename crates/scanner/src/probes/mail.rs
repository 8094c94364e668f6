//! The spf, dkim and dmarc components: the records are fetched through the scanner's DNS
//! client, parsed by `crate::mail`, and judged here. Every finding carries the record
//! it was judged on as evidence.

use std::collections::BTreeSet;

use model::RiskVector;

use crate::check::{self, Check};
use crate::dns::{Dns, DnsError};
use crate::finding::ScanFinding;
use crate::mail::{dkim, dmarc, spf};

/// The DKIM selectors probed by default: the common ones of mail providers and MTAs.
pub const DEFAULT_SELECTORS: &[&str] = &[
    "google",
    "selector1",
    "selector2",
    "k1",
    "k2",
    "k3",
    "default",
    "s1",
    "s2",
    "s1024",
    "s2048",
    "dkim",
    "mail",
    "smtp",
    "mx",
    "email",
    "key1",
    "key2",
    "sig1",
    "mandrill",
    "mailjet",
    "everlytickey1",
    "everlytickey2",
    "zoho",
    "protonmail",
    "protonmail2",
    "protonmail3",
    "fm1",
    "fm2",
    "fm3",
    "mxvault",
    "dk",
    "sendgrid",
    "smtpapi",
    "pm",
    "amazonses",
    "cm",
    "krs",
    "turbo-smtp",
];

/// RFC 7208 §4.6.4: at most 10 terms that cause DNS queries, at most 2 void lookups,
/// at most 10 names per `mx` mechanism.
const MAX_LOOKUPS: usize = 10;
const MAX_VOID: usize = 2;
const MAX_MX_NAMES: usize = 10;
/// How deep includes and redirects are followed: the lookup limit ends any chain before
/// this, it only bounds the recursion.
const MAX_DEPTH: usize = 12;

/// The spf component for `domain`: its record is selected (§4.5), parsed (§4.6, §7
/// macros) and evaluated as check_host() (§4) evaluates it for a sender that no
/// mechanism lists — the result every unlisted host on the internet gets — following
/// includes (§5.2) and redirects (§6.1) under the lookup, void-lookup and per-`mx`
/// limits (§4.6.4). A DNS failure during the evaluation (temperror) leaves the result
/// unjudged: no finding but what the record itself shows (`ptr`).
pub async fn spf(dns: &Dns, domain: &str, handles_mail: bool) -> Result<Vec<ScanFinding>, DnsError> {
    Ok(spf_check(dns, domain, handles_mail).await?.0)
}

/// [`spf`] with the check's outcome: not assessable when a lookup of the evaluation
/// failed (temperror), a pass that says what unlisted senders get otherwise.
pub async fn spf_check(dns: &Dns, domain: &str, handles_mail: bool) -> Result<(Vec<ScanFinding>, Check), DnsError> {
    let texts = dns.txt(domain).await?;
    let judged = |out: Vec<ScanFinding>, observed: String| {
        let check = check::judged(RiskVector::Spf, "spf record", domain, &out, observed);
        Ok((out, check))
    };
    let records: Vec<&String> = texts.iter().filter(|t| spf::is_spf(t)).collect();
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
    let mut eval = Eval::default();
    if parsed.uses_ptr() {
        out.push(ScanFinding::new("spf.ptr_mechanism", domain, format!("\"{record}\" uses ptr")));
    }
    let outcome = eval.record(dns, domain, &parsed, 0).await;
    let quoted = format!("\"{record}\"");
    match outcome {
        Outcome::Result(spf::Qualifier::Pass, how) => {
            out.push(ScanFinding::new("spf.pass_all", domain, how.evidence(&quoted)));
        }
        Outcome::Result(spf::Qualifier::Neutral, How::Default) => {
            out.push(ScanFinding::new("spf.no_all", domain, format!("{quoted}: no all and no redirect=")));
        }
        Outcome::Result(spf::Qualifier::Neutral, how) => {
            out.push(ScanFinding::new("spf.neutral_all", domain, how.evidence(&quoted)));
        }
        Outcome::Result(spf::Qualifier::SoftFail, how) => {
            out.push(ScanFinding::new("spf.softfail_all", domain, how.evidence(&quoted)));
        }
        Outcome::Result(spf::Qualifier::Fail, how) => {
            return judged(out, format!("unlisted senders fail: {}", how.evidence(&quoted)));
        }
        Outcome::PermError(code, why) => out.push(ScanFinding::new(code, domain, format!("{quoted}: {why}"))),
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
            return Ok((out, Check::not_assessable(RiskVector::Spf, "spf record", domain, why)));
        }
    }
    judged(out, String::new())
}

/// Where the result for unlisted senders came from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum How {
    /// The record's own `all`.
    All,
    /// An `all` reached through `redirect=` chains, or an `include:`/`exists:` that
    /// matches every sender: the trail.
    Through(String),
    /// No `all`, no `redirect=`: the default neutral (§4.7).
    Default,
}

impl How {
    fn evidence(&self, record: &str) -> String {
        match self {
            How::All | How::Default => record.to_owned(),
            How::Through(trail) => format!("{record} ({trail})"),
        }
    }
}

/// check_host()'s result (§2.6) for an unlisted sender.
#[derive(Debug)]
enum Outcome {
    Result(spf::Qualifier, How),
    /// The finding code and why.
    PermError(&'static str, String),
    TempError(DnsError),
}

/// What an include's evaluation gives its caller (§5.2).
enum Included {
    Matched(How),
    NotMatched,
}

/// The state of one evaluation: the counters of §4.6.4 over the whole tree and the
/// chain of records being evaluated (for loops).
#[derive(Default)]
struct Eval {
    lookups: usize,
    void: usize,
    trail: Vec<String>,
    voids: Vec<String>,
    chain: Vec<String>,
}

impl Eval {
    /// Counts one DNS-querying term; the 11th is a permerror.
    fn lookup(&mut self, term: String) -> Result<(), Outcome> {
        self.lookups += 1;
        self.trail.push(term);
        if self.lookups > MAX_LOOKUPS {
            return Err(Outcome::PermError(
                "spf.too_many_lookups",
                format!(
                    "more than {MAX_LOOKUPS} DNS-querying terms through includes and redirects: {}",
                    self.trail.join(", ")
                ),
            ));
        }
        Ok(())
    }

    /// Counts a lookup that found nothing (NXDOMAIN or no records); the third is a
    /// permerror.
    fn void(&mut self, term: String) -> Result<(), Outcome> {
        self.void += 1;
        self.voids.push(term);
        if self.void > MAX_VOID {
            return Err(Outcome::PermError(
                "spf.too_many_void_lookups",
                format!("more than {MAX_VOID} lookups returned no records: {}", self.voids.join(", ")),
            ));
        }
        Ok(())
    }

    /// check_host() for the record published at `at` (§4.3 onwards): `None` when
    /// there is no SPF record there (§4.5 "none").
    async fn domain(&mut self, dns: &Dns, at: &str, depth: usize) -> Result<Option<Outcome>, DnsError> {
        let texts = dns.txt(at).await?;
        let records: Vec<&String> = texts.iter().filter(|t| spf::is_spf(t)).collect();
        match records.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(match spf::parse(one) {
                Ok(parsed) => Box::pin(self.record(dns, at, &parsed, depth)).await,
                Err(e) => Outcome::PermError("spf.broken_include", format!("the record of {at} does not parse: {e}")),
            })),
            many => Ok(Some(Outcome::PermError(
                "spf.broken_include",
                format!("{at} publishes {} SPF records (§4.5)", many.len()),
            ))),
        }
    }

    /// Evaluates a parsed record published at `at`, term by term, for a sender no
    /// `ip4`/`ip6`/`a`/`mx`/`ptr` term lists.
    async fn record(&mut self, dns: &Dns, at: &str, record: &spf::Spf, depth: usize) -> Outcome {
        match self.terms(dns, at, record, depth).await {
            Ok(outcome) | Err(outcome) => outcome,
        }
    }

    async fn terms(&mut self, dns: &Dns, at: &str, record: &spf::Spf, depth: usize) -> Result<Outcome, Outcome> {
        let at_lower = at.trim_end_matches('.').to_ascii_lowercase();
        if depth > MAX_DEPTH {
            return Err(Outcome::PermError("spf.loop", format!("includes nested deeper than {MAX_DEPTH}")));
        }
        if self.chain.contains(&at_lower) {
            let mut cycle = self.chain.clone();
            cycle.push(at_lower);
            return Err(Outcome::PermError("spf.loop", format!("include/redirect loop: {}", cycle.join(" → "))));
        }
        self.chain.push(at_lower);
        let temp = Outcome::TempError;
        for term in &record.terms {
            let spf::Term::Directive { qualifier, mechanism } = term else { continue };
            match mechanism {
                spf::Mechanism::All => {
                    self.chain.pop();
                    return Ok(Outcome::Result(*qualifier, How::All));
                }
                spf::Mechanism::Ip4 { .. } | spf::Mechanism::Ip6 { .. } => {}
                spf::Mechanism::Ptr(d) => {
                    // Needs the sender's address; counted, never matches an unlisted one.
                    self.lookup(format!("ptr{}", d.as_deref().map(|d| format!(":{d}")).unwrap_or_default()))?;
                }
                spf::Mechanism::A { domain, .. } => {
                    let target = domain.clone().unwrap_or_else(|| at.to_owned());
                    self.lookup(format!("a:{target}"))?;
                    if !spf::has_macros(&target) && dns.addresses(&target).await.map_err(temp)?.is_empty() {
                        self.void(format!("a:{target}"))?;
                    }
                }
                spf::Mechanism::Mx { domain, .. } => {
                    let target = domain.clone().unwrap_or_else(|| at.to_owned());
                    self.lookup(format!("mx:{target}"))?;
                    if !spf::has_macros(&target) {
                        let names = dns.mx(&target).await.map_err(temp)?;
                        if names.is_empty() {
                            self.void(format!("mx:{target}"))?;
                        } else if names.len() > MAX_MX_NAMES {
                            return Err(Outcome::PermError(
                                "spf.mx_too_many_names",
                                format!(
                                    "mx:{target} names {} mail servers; an mx mechanism may look up at most {MAX_MX_NAMES} (§4.6.4)",
                                    names.len()
                                ),
                            ));
                        }
                    }
                }
                spf::Mechanism::Exists(target) => {
                    self.lookup(format!("exists:{target}"))?;
                    // With macros the name depends on the sender: it cannot be judged
                    // for all of them. A fixed name that exists matches everyone.
                    if !spf::has_macros(target) {
                        if dns.addresses(target).await.map_err(temp)?.is_empty() {
                            self.void(format!("exists:{target}"))?;
                        } else {
                            self.chain.pop();
                            return Ok(Outcome::Result(
                                *qualifier,
                                How::Through(format!("exists:{target} matches every sender")),
                            ));
                        }
                    }
                }
                spf::Mechanism::Include(target) => {
                    self.lookup(format!("include:{target}"))?;
                    if spf::has_macros(target) {
                        continue;
                    }
                    match self.include(dns, target, depth).await? {
                        Included::Matched(how) => {
                            self.chain.pop();
                            let trail = match how {
                                How::Through(t) => format!("include:{target} → {t}"),
                                _ => format!("include:{target} passes every sender"),
                            };
                            return Ok(Outcome::Result(*qualifier, How::Through(trail)));
                        }
                        Included::NotMatched => {}
                    }
                }
            }
        }
        // No `all`: the redirect, if any (§6.1), else the default (§4.7).
        let outcome = match record.redirect() {
            Some(target) => {
                self.lookup(format!("redirect={target}"))?;
                if spf::has_macros(target) {
                    Outcome::Result(spf::Qualifier::Neutral, How::Through(format!("redirect={target} (macros)")))
                } else {
                    match Box::pin(self.domain(dns, target, depth + 1)).await.map_err(temp)? {
                        None => {
                            return Err(Outcome::PermError(
                                "spf.broken_include",
                                format!("redirect={target}: {target} has no SPF record (§6.1)"),
                            ));
                        }
                        Some(Outcome::Result(q, how)) => {
                            let how = match how {
                                How::Through(t) => How::Through(format!("redirect={target} → {t}")),
                                How::All => How::Through(format!("redirect={target}")),
                                How::Default => How::Default,
                            };
                            Outcome::Result(q, how)
                        }
                        Some(other) => return Err(other),
                    }
                }
            }
            None => Outcome::Result(spf::Qualifier::Neutral, How::Default),
        };
        self.chain.pop();
        Ok(outcome)
    }

    /// An include (§5.2): pass matches, fail/softfail/neutral do not, none and
    /// permerror are a permerror, temperror a temperror.
    async fn include(&mut self, dns: &Dns, target: &str, depth: usize) -> Result<Included, Outcome> {
        match Box::pin(self.domain(dns, target, depth + 1)).await.map_err(Outcome::TempError)? {
            None => Err(Outcome::PermError(
                "spf.broken_include",
                format!("include:{target}: {target} has no SPF record (§5.2)"),
            )),
            Some(Outcome::Result(spf::Qualifier::Pass, how)) => Ok(Included::Matched(how)),
            Some(Outcome::Result(..)) => Ok(Included::NotMatched),
            Some(other) => Err(other),
        }
    }
}

/// The dkim component for `domain`: the key records at the selectors the company names
/// (`named`, tried first) and at the curated `selectors`, each judged (syntax, revoked,
/// key size, testing mode, SHA-1 only). When no key is found, what that means depends
/// on what Rampart can know: a key at a selector nobody named is invisible from
/// outside, so with no named selector the check is not assessable; with named
/// selectors and no key at them, DKIM is missing (`dkim.missing`). A selector whose
/// lookup failed (timeout, SERVFAIL, REFUSED) leaves "no key" unknown: not assessable.
/// A domain that receives no mail (no MX) is not judged.
pub async fn dkim(
    dns: &Dns,
    domain: &str,
    handles_mail: bool,
    named: &[String],
    selectors: &[String],
) -> (Vec<ScanFinding>, Check) {
    let mut tried: Vec<&String> = Vec::new();
    for s in named.iter().chain(selectors) {
        if !tried.contains(&s) {
            tried.push(s);
        }
    }
    let mut out = Vec::new();
    let mut with_keys = Vec::new();
    let mut failed = Vec::new();
    for selector in &tried {
        let name = format!("{selector}._domainkey.{domain}");
        let texts = match dns.txt(&name).await {
            Ok(t) => t,
            Err(e) => {
                failed.push(format!("{selector}: {e}"));
                continue;
            }
        };
        // A key record: v=DKIM1 or any record with a p= tag.
        let keys: Vec<&String> =
            texts.iter().filter(|t| t.trim_start().starts_with("v=DKIM1") || t.contains("p=")).collect();
        if !keys.is_empty() {
            with_keys.push(selector.as_str());
        }
        for record in keys {
            let key = match dkim::parse(record) {
                Ok(k) => k,
                Err(e) => {
                    out.push(ScanFinding::new("dkim.syntax_error", &name, format!("\"{record}\": {e}")));
                    continue;
                }
            };
            if key.revoked {
                out.push(ScanFinding::new("dkim.revoked_key", &name, format!("\"{record}\": empty p=")));
                continue;
            }
            if let (dkim::KeyType::Rsa, Some(bits)) = (&key.key_type, key.key_bits) {
                if bits < 1024 {
                    out.push(ScanFinding::new("dkim.key_too_short", &name, format!("RSA key of {bits} bits")));
                } else if bits < 2048 {
                    out.push(ScanFinding::new("dkim.weak_key", &name, format!("RSA key of {bits} bits")));
                }
            }
            if key.testing() {
                out.push(ScanFinding::new("dkim.testing_mode", &name, format!("\"{record}\": t=y")));
            }
            if key.sha1_only() {
                out.push(ScanFinding::new("dkim.sha1_only", &name, format!("\"{record}\": h=sha1")));
            }
        }
    }
    const CHECK: &str = "dkim keys";
    if !with_keys.is_empty() {
        let check = check::judged(RiskVector::Dkim, CHECK, domain, &out, format!("keys at {}", with_keys.join(", ")));
        return (out, check);
    }
    if !handles_mail {
        let why = "the domain receives no mail (no MX): DKIM is judged on the domains that do";
        return (out, Check::not_assessable(RiskVector::Dkim, CHECK, domain, why));
    }
    if !failed.is_empty() {
        let why = format!(
            "no key found, but {} of {} selector lookups failed ({}{})",
            failed.len(),
            tried.len(),
            failed[..failed.len().min(2)].join("; "),
            if failed.len() > 2 { "; …" } else { "" }
        );
        return (out, Check::not_assessable(RiskVector::Dkim, CHECK, domain, why));
    }
    if named.is_empty() {
        let why = format!(
            "no key at the {} selectors tried ({}, …); a key at another selector cannot be seen from outside \
             (name the company's selectors: dkim_selectors)",
            tried.len(),
            tried[..tried.len().min(5)].iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
        );
        return (out, Check::not_assessable(RiskVector::Dkim, CHECK, domain, why));
    }
    out.push(ScanFinding::new(
        "dkim.missing",
        domain,
        format!(
            "no DKIM key record at the selectors the company names ({}) nor at the {} curated selectors",
            named.join(", "),
            selectors.len()
        ),
    ));
    let check = check::judged(RiskVector::Dkim, CHECK, domain, &out, String::new());
    (out, check)
}

/// The organisational domain of `domain` (RFC 7489 §3.2): its registrable domain by the
/// Public Suffix List (a name under an unlisted suffix such as `.test` counts one label
/// as the suffix).
pub fn organisational_domain(domain: &str) -> String {
    psl::domain_str(domain).map_or_else(|| domain.to_owned(), str::to_owned)
}

/// The dmarc component for `domain`. A subdomain without its own record falls back to
/// the organisational domain's record, whose `sp` (or `p`) then applies (RFC 7489 §6.6.3).
pub async fn dmarc(dns: &Dns, domain: &str) -> Result<Vec<ScanFinding>, DnsError> {
    let name = format!("_dmarc.{domain}");
    let mut texts = dns.txt(&name).await?;
    let org = organisational_domain(domain);
    let mut inherited = None;
    if !texts.iter().any(|t| dmarc::is_dmarc(t)) && org != domain {
        let org_texts = dns.txt(&format!("_dmarc.{org}")).await?;
        if org_texts.iter().any(|t| dmarc::is_dmarc(t)) {
            texts = org_texts;
            inherited = Some(org.clone());
        }
    }
    let records: Vec<&String> = texts.iter().filter(|t| dmarc::is_dmarc(t)).collect();
    let mut out = Vec::new();
    let record = match records.as_slice() {
        [] => {
            let also = if org != domain { format!(" nor at _dmarc.{org}") } else { String::new() };
            out.push(ScanFinding::new("dmarc.missing", domain, format!("no v=DMARC1 TXT record at {name}{also}")));
            return Ok(out);
        }
        [one] => *one,
        many => {
            let evidence = many.iter().map(|r| format!("\"{r}\"")).collect::<Vec<_>>().join("; ");
            out.push(ScanFinding::new("dmarc.multiple_records", domain, format!("{} records: {evidence}", many.len())));
            return Ok(out);
        }
    };
    let d = match dmarc::parse(record) {
        Ok(d) => d,
        Err(e) => {
            out.push(ScanFinding::new("dmarc.syntax_error", domain, format!("\"{record}\": {e}")));
            return Ok(out);
        }
    };
    let quoted = match &inherited {
        Some(org) => format!("\"{record}\" (inherited from _dmarc.{org})"),
        None => format!("\"{record}\""),
    };
    // For an inherited record, the subdomain policy is the one that applies.
    let policy = if inherited.is_some() { d.subdomain_policy.unwrap_or(d.policy) } else { d.policy };
    match policy {
        dmarc::Policy::None => out.push(ScanFinding::new("dmarc.policy_none", domain, quoted.clone())),
        dmarc::Policy::Quarantine => out.push(ScanFinding::new("dmarc.policy_quarantine", domain, quoted.clone())),
        dmarc::Policy::Reject => {}
    }
    let enforcing = policy != dmarc::Policy::None;
    if enforcing && d.pct < 100 {
        out.push(ScanFinding::new("dmarc.partial_pct", domain, format!("{quoted}: pct={}", d.pct)));
    }
    if inherited.is_none() && enforcing && d.subdomain_policy == Some(dmarc::Policy::None) {
        out.push(ScanFinding::new("dmarc.subdomain_policy_none", domain, format!("{quoted}: sp=none")));
    }
    if d.rua.is_empty() {
        out.push(ScanFinding::new("dmarc.no_rua", domain, format!("{quoted}: no rua=")));
    }
    // External report destinations must authorise the domain (RFC 7489 §7.1).
    // The domain that published the record is the one report destinations authorise.
    let own = inherited.clone().unwrap_or_else(|| domain.to_ascii_lowercase());
    let mut unauthorised = Vec::new();
    let mut checked = BTreeSet::new();
    for uri in d.rua.iter().chain(&d.ruf) {
        let Some(dest) = &uri.mailbox_domain else { continue };
        // Only another organisational domain must authorise (RFC 7489 §7.1).
        if organisational_domain(dest) == organisational_domain(&own) || !checked.insert(dest.clone()) {
            continue;
        }
        let auth = format!("{own}._report._dmarc.{dest}");
        // Unknown (the lookup failed) is not reported as unauthorised.
        let Ok(texts) = dns.txt(&auth).await else { continue };
        if !texts.iter().any(|t| dmarc::is_dmarc(t)) {
            unauthorised.push(format!("{} (no v=DMARC1 at {auth})", uri.uri));
        }
    }
    if !unauthorised.is_empty() {
        out.push(ScanFinding::new("dmarc.external_rua_unauthorized", domain, unauthorised.join("; ")));
    }
    Ok(out)
}
