//! What the spf, dkim and dmarc checks judge: the records, fetched through the scanner's
//! DNS client and read with `crate::mail`'s parsers, and check_host()'s evaluation of
//! the SPF record (RFC 7208) with the lookups it makes. The verdicts are in
//! `crate::checks::{spf, dkim, dmarc}`.

use std::collections::BTreeSet;

use hickory_resolver::proto::rr::RecordType;

use crate::dns::{Dns, DnsError};
use crate::mail::{dmarc, spf};

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

/// What the spf check judges: the TXT records at the domain and, when exactly one of
/// them is an SPF record that parses (§4.5, §4.6, §7 macros), check_host()'s result (§4)
/// for a sender that no mechanism lists, following includes (§5.2) and redirects (§6.1)
/// under the lookup, void-lookup and per-`mx` limits (§4.6.4).
#[derive(Debug)]
pub struct SpfSeen {
    pub texts: Vec<String>,
    pub outcome: Option<Outcome>,
}

/// The SPF record of `domain`, evaluated ([`SpfSeen`]); an error when its TXT lookup
/// failed.
pub async fn spf(dns: &Dns, domain: &str) -> Result<SpfSeen, DnsError> {
    let texts = dns.txt(domain).await?;
    let records: Vec<&String> = texts.iter().filter(|t| spf::is_spf(t)).collect();
    let outcome = match records.as_slice() {
        [one] => match spf::parse(one) {
            Ok(parsed) => Some(Eval::default().record(dns, domain, &parsed, 0).await),
            Err(_) => None,
        },
        _ => None,
    };
    Ok(SpfSeen { texts, outcome })
}

/// Where the result for unlisted senders came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum How {
    /// The record's own `all`.
    All,
    /// An `all` reached through `redirect=` chains, or an `include:`/`exists:` that
    /// matches every sender: the trail.
    Through(String),
    /// No `all`, no `redirect=`: the default neutral (§4.7).
    Default,
}

/// check_host()'s result (§2.6) for an unlisted sender.
#[derive(Debug)]
pub enum Outcome {
    Result(spf::Qualifier, How),
    /// What made the record a permerror, and how.
    PermError(PermError, String),
    TempError(DnsError),
}

/// What makes a record a permerror (§2.6.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PermError {
    /// More than 10 DNS-querying terms (§4.6.4).
    TooManyLookups,
    /// More than 2 lookups that found nothing (§4.6.4).
    TooManyVoidLookups,
    /// An `mx` mechanism naming more than 10 mail servers (§4.6.4).
    MxTooManyNames,
    /// An include or redirect loop, or a chain deeper than the recursion bound.
    Loop,
    /// An include or redirect to a name without one valid SPF record.
    BrokenInclude,
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
                PermError::TooManyLookups,
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
                PermError::TooManyVoidLookups,
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
                Err(e) => {
                    Outcome::PermError(PermError::BrokenInclude, format!("the record of {at} does not parse: {e}"))
                }
            })),
            many => Ok(Some(Outcome::PermError(
                PermError::BrokenInclude,
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
            return Err(Outcome::PermError(PermError::Loop, format!("includes nested deeper than {MAX_DEPTH}")));
        }
        if self.chain.contains(&at_lower) {
            let mut cycle = self.chain.clone();
            cycle.push(at_lower);
            return Err(Outcome::PermError(PermError::Loop, format!("include/redirect loop: {}", cycle.join(" → "))));
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
                                PermError::MxTooManyNames,
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
                    // for all of them. A fixed name with an A record matches everyone;
                    // exists asks for A records only, whatever the sender's address
                    // family (§5.7), so a name with only AAAA records matches nobody and
                    // is a void lookup.
                    if !spf::has_macros(target) {
                        if dns.lookup(target, RecordType::A).await.map_err(temp)?.is_empty() {
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
                                PermError::BrokenInclude,
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
                PermError::BrokenInclude,
                format!("include:{target}: {target} has no SPF record (§5.2)"),
            )),
            Some(Outcome::Result(spf::Qualifier::Pass, how)) => Ok(Included::Matched(how)),
            Some(Outcome::Result(..)) => Ok(Included::NotMatched),
            Some(other) => Err(other),
        }
    }
}

/// What the dkim check judges: the selectors tried (those the company names first, then
/// the curated ones), and at each what the TXT lookup of `selector._domainkey.<domain>`
/// answered.
#[derive(Debug)]
pub struct DkimSeen {
    /// The selectors the company names.
    pub named: Vec<String>,
    /// How many curated selectors there are.
    pub curated: usize,
    /// Each selector tried once, in order, with its TXT records or why the lookup failed.
    pub tried: Vec<(String, Result<Vec<String>, DnsError>)>,
}

/// The DKIM key records of `domain` at the selectors the company names (`named`, tried
/// first) and at the curated `selectors`.
pub async fn dkim(dns: &Dns, domain: &str, named: &[String], selectors: &[String]) -> DkimSeen {
    let mut tried: Vec<&String> = Vec::new();
    for s in named.iter().chain(selectors) {
        if !tried.contains(&s) {
            tried.push(s);
        }
    }
    let mut out = DkimSeen { named: named.to_vec(), curated: selectors.len(), tried: Vec::new() };
    for selector in tried {
        let answer = dns.txt(&format!("{selector}._domainkey.{domain}")).await;
        out.tried.push((selector.clone(), answer));
    }
    out
}

/// The organisational domain of `domain` (RFC 7489 §3.2): its registrable domain by the
/// Public Suffix List (a name under an unlisted suffix such as `.test` counts one label
/// as the suffix).
pub fn organisational_domain(domain: &str) -> String {
    psl::domain_str(domain).map_or_else(|| domain.to_owned(), str::to_owned)
}

/// What the dmarc check judges: the records the domain's policy is read from, and the
/// authorisation records of its report destinations in other organisational domains.
#[derive(Debug)]
pub struct DmarcSeen {
    /// The TXT records at `_dmarc.<domain>`, or at `_dmarc.<organisational domain>` when
    /// the domain publishes no DMARC record and that one does.
    pub texts: Vec<String>,
    /// The organisational domain of the domain (RFC 7489 §3.2).
    pub org: String,
    /// The organisational domain the record was inherited from (RFC 7489 §6.6.3).
    pub inherited: Option<String>,
    /// When the domain has one DMARC record that parses: each report destination
    /// (`rua`, `ruf`) in another organisational domain, once, with the TXT records at its
    /// authorisation name (RFC 7489 §7.1), or `None` when that lookup failed.
    pub destinations: Vec<Destination>,
}

/// A report destination outside the domain's organisational domain.
#[derive(Debug)]
pub struct Destination {
    pub uri: String,
    /// `<domain>._report._dmarc.<destination>`.
    pub auth: String,
    pub records: Option<Vec<String>>,
}

/// The DMARC records of `domain` ([`DmarcSeen`]); an error when the lookup of its record
/// (or of the organisational domain's) failed. A subdomain without its own record falls
/// back to the organisational domain's (RFC 7489 §6.6.3).
pub async fn dmarc(dns: &Dns, domain: &str) -> Result<DmarcSeen, DnsError> {
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
    let mut destinations = Vec::new();
    let records: Vec<&String> = texts.iter().filter(|t| dmarc::is_dmarc(t)).collect();
    if let [record] = records.as_slice()
        && let Ok(d) = dmarc::parse(record)
    {
        // The domain that published the record is the one report destinations authorise.
        let own = inherited.clone().unwrap_or_else(|| domain.to_ascii_lowercase());
        let mut checked = BTreeSet::new();
        for uri in d.rua.iter().chain(&d.ruf) {
            let Some(dest) = &uri.mailbox_domain else { continue };
            // Only another organisational domain must authorise (RFC 7489 §7.1).
            if organisational_domain(dest) == organisational_domain(&own) || !checked.insert(dest.clone()) {
                continue;
            }
            let auth = format!("{own}._report._dmarc.{dest}");
            let records = dns.txt(&auth).await.ok();
            destinations.push(Destination { uri: uri.uri.clone(), auth, records });
        }
    }
    Ok(DmarcSeen { texts, org, inherited, destinations })
}
