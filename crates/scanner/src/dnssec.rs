//! DNSSEC chain validation of a zone, done by the scanner itself (RFC 4033–4035, 5155).
//!
//! [`Validator::zone_status`] walks from the closest trust anchor down to the zone, one
//! label at a time, asking one server (the scanner's resolver, or the lab's
//! authoritative server) with the DO and CD bits set, so that a validating resolver
//! hands over the records and signatures instead of judging them itself:
//!
//! 1. the anchor zone's DNSKEY RRset must be signed by an anchor key;
//! 2. for every name below it, the DS RRset is asked for. A DS RRset signed by the
//!    parent's validated keys makes a secure delegation: the child's DNSKEY RRset must
//!    hold a key that a DS digests, and that key must sign it. No DS must be proven by
//!    an NSEC or NSEC3 record signed by the parent: at a delegation (NS without SOA) the
//!    zone is insecure; a name that exists without NS, or does not exist, is not a zone
//!    cut and is skipped;
//! 3. anything that fails (a bad, expired or not yet valid signature, a missing RRSIG,
//!    a DS that digests no DNSKEY, a missing denial) makes the zone bogus, with a reason
//!    naming the record and what failed.
//!
//! hickory's own validator answers bogus for zones that BIND's delv validates, so only
//! hickory's primitives are used here: the DNSKEY verifier, DS digests, key tags and the
//! NSEC3 hash. The work per RRset is bounded (a few signature checks, against "KeyTrap",
//! CVE-2023-50387), and so is the NSEC3 iteration count (RFC 9276).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::str::FromStr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use hickory_resolver::proto::dnssec::rdata::{DNSKEY, DNSSECRData, DS, NSEC, NSEC3, RRSIG};
use hickory_resolver::proto::dnssec::{Algorithm, PublicKeyBuf, Verifier};
use hickory_resolver::proto::op::{Edns, Message, Query, ResponseCode};
use hickory_resolver::proto::rr::{DNSClass, Name, RData, Record, RecordType};

use crate::wire::{ExchangeError, Exchanger};

/// How long one exchange may take (each UDP try, and the TCP exchange).
const TIMEOUT: Duration = Duration::from_secs(2);
/// UDP tries before giving up (one retry).
const UDP_TRIES: usize = 2;
/// How long a validated DNSKEY RRset of a trust-anchor zone is reused (within the
/// signature's validity): the anchor zone is the top of every chain a scan walks.
const ANCHOR_KEYS_REUSE: Duration = Duration::from_secs(60);
/// The EDNS payload size announced.
const PAYLOAD: u16 = 4096;
/// Signature checks allowed for one RRset (key-tag collisions cannot make us spin).
const MAX_VERIFICATIONS: usize = 8;
/// NSEC3 iterations above this are treated as insecure (RFC 9276 §3.2).
const MAX_NSEC3_ITERATIONS: u16 = 150;

/// What validation concluded about a zone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// The chain from the trust anchor validates down to the zone.
    Secure,
    /// The zone is not signed: a delegation on the way has no DS, proven by a signed
    /// NSEC/NSEC3 record (or only algorithms this validator does not implement).
    Insecure { reason: String },
    /// The zone is signed but the chain does not validate.
    Bogus { reason: String },
}

#[derive(Debug, thiserror::Error)]
pub enum DnssecError {
    #[error("trust anchor line {line}: {reason}")]
    Anchor { line: usize, reason: String },
    #[error("DNS name {0:?} is not valid")]
    BadName(String),
    #[error("DNSSEC query {query} to {server}: {reason}")]
    Query { query: String, server: SocketAddr, reason: String },
    #[error("{server} returns no RRSIG for the DNSKEY of the trust anchor {zone}: it does not pass DNSSEC records")]
    NoDnssec { server: SocketAddr, zone: String },
}

/// The keys trusted for one zone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustAnchor {
    pub zone: Name,
    pub dnskeys: Vec<DNSKEY>,
}

/// The root zone's key-signing keys (IANA): KSK-2017 (key tag 20326) and KSK-2024 (key
/// tag 38696), which takes over signing the root DNSKEY RRset in October 2026.
const ROOT_KSKS: [&str; 2] = [
    "AwEAAaz/tAm8yTn4Mfeh5eyI96WSVexTBAvkMgJzkKTOiW1vkIbzxeF3+/4RgWOq7HrxRixHlFlExOLAJr5emLvN7SWXgnLh4+B5xQlNVz8Og8kvArMtNROxVQuCaSnIDdD5LKyWbRd2n9WGe2R8PzgCmr3EgVLrjyBxWezF0jLHwVN8efS3rCj/EWgvIWgb9tarpVUDK/b58Da+sqqls3eNbuv7pr+eoZG+SrDK6nWeL3c6H5Apxz7LjVc1uTIdsIXxuOLYA4/ilBmSVIzuDWfdRUfhHdY6+cn8HFRm+2hM8AnXGXws9555KrUB5qihylGa8subX2Nn6UwNR1AkUTV74bU=",
    "AwEAAa96jeuknZlaeSrvyAJj6ZHv28hhOKkx3rLGXVaC6rXTsDc449/cidltpkyGwCJNnOAlFNKF2jBosZBU5eeHspaQWOmOElZsjICMQMC3aeHbGiShvZsx4wMYSjH8e7Vrhbu6irwCzVBApESjbUdpWWmEnhathWu1jo+siFUiRAAxm9qyJNg/wOZqqzL/dL/q8PkcRU5oUKEpUge71M3ej2/7CPqpdVwuMoTvoB+ZOT4YeGyxMvHmbrxlFzGOHOijtzN+u1TQNatX2XBuzZNQ1K+s2CXkPIZo7s6JgZyvaBevYtxPvYLw4z9mR7K2vaF18UYH9Z9GNUUeayffKC73PYc=",
];

impl TrustAnchor {
    /// Reads a trust-anchor file: one DNSKEY a line, `<zone> [<ttl>] [IN] DNSKEY <flags>
    /// <protocol> <algorithm> <base64>` (the base64 may contain spaces); blank lines and
    /// lines starting with `;` or `#` are skipped. Keys of one zone make one anchor.
    pub fn parse(text: &str) -> Result<Vec<TrustAnchor>, DnssecError> {
        let mut anchors: Vec<TrustAnchor> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with(';') || line.starts_with('#') {
                continue;
            }
            let err = |reason: &str| DnssecError::Anchor { line: i + 1, reason: reason.to_owned() };
            let mut tokens = line.split_whitespace();
            let zone = tokens.next().and_then(fqdn).ok_or_else(|| err("not a zone name"))?;
            let mut tokens = tokens.skip_while(|t| t.eq_ignore_ascii_case("IN") || t.parse::<u32>().is_ok());
            if !tokens.next().is_some_and(|t| t.eq_ignore_ascii_case("DNSKEY")) {
                return Err(err("expected <zone> <ttl> IN DNSKEY <flags> <protocol> <algorithm> <key>"));
            }
            let mut number = |what: &str| tokens.next().and_then(|t| t.parse::<u16>().ok()).ok_or_else(|| err(what));
            let flags = number("flags is not a number")?;
            if number("protocol is not a number")? != 3 {
                return Err(err("protocol must be 3"));
            }
            let algorithm = u8::try_from(number("algorithm is not a number")?)
                .map(Algorithm::from_u8)
                .map_err(|_| err("algorithm is not a number"))?;
            if !algorithm.is_supported() {
                return Err(err(&format!("algorithm {algorithm} is not supported")));
            }
            let key = base64::engine::general_purpose::STANDARD
                .decode(tokens.collect::<String>())
                .map_err(|e| err(&format!("key is not base64: {e}")))?;
            if key.is_empty() {
                return Err(err("no key"));
            }
            let dnskey = DNSKEY::with_flags(flags, PublicKeyBuf::new(key, algorithm));
            if !dnskey.zone_key() || dnskey.revoke() {
                return Err(err("not a zone key (flags 256 or 257)"));
            }
            match anchors.iter_mut().find(|a| a.zone == zone) {
                Some(a) => a.dnskeys.push(dnskey),
                None => anchors.push(TrustAnchor { zone, dnskeys: vec![dnskey] }),
            }
        }
        Ok(anchors)
    }

    /// The IANA root trust anchor (KSK-2017 and KSK-2024), for validating the internet.
    pub fn iana_root() -> TrustAnchor {
        let dnskeys = ROOT_KSKS
            .iter()
            .filter_map(|k| base64::engine::general_purpose::STANDARD.decode(k).ok())
            .map(|key| DNSKEY::with_flags(257, PublicKeyBuf::new(key, Algorithm::RSASHA256)))
            .collect();
        TrustAnchor { zone: Name::root(), dnskeys }
    }
}

/// A validating client of one server.
#[derive(Debug, Clone)]
pub struct Validator {
    server: SocketAddr,
    exchanger: Exchanger,
    anchors: Vec<TrustAnchor>,
    /// Validated DNSKEY RRsets of anchor zones, with when they stop being reused.
    anchor_keys: Arc<Mutex<AnchorKeys>>,
}

/// Validated DNSKEY RRsets by anchor zone, each with the instant it stops being reused.
type AnchorKeys = HashMap<Name, (Vec<DNSKEY>, Instant)>;

/// A zone whose DNSKEY RRset has validated (or the anchor's keys).
struct Keys<'a> {
    zone: &'a Name,
    keys: &'a [DNSKEY],
}

/// What the DS query at one name below a secure zone showed.
#[derive(Debug, PartialEq, Eq)]
enum Cut {
    /// A validated DS RRset: a secure delegation.
    Signed(Vec<DS>),
    /// Not a zone cut (the name exists without NS, or does not exist).
    None,
    Insecure(String),
    Bogus(String),
}

impl Validator {
    pub fn new(server: SocketAddr, anchors: Vec<TrustAnchor>) -> Self {
        Validator {
            server,
            exchanger: Exchanger::new(vec![server], TIMEOUT, UDP_TRIES),
            anchors,
            anchor_keys: Arc::default(),
        }
    }

    /// Sets the time allowed for each exchange (2 s by default).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.exchanger = Exchanger::new(vec![self.server], timeout, UDP_TRIES);
        self
    }

    /// The status of the zone apex `zone` (e.g. `secure.test`); a name below a zone
    /// apex that is not a zone cut has the status of its enclosing zone. Errors are
    /// network failures, timeouts and server failures only.
    pub async fn zone_status(&self, zone: &str) -> Result<Status, DnssecError> {
        let target = fqdn(zone).ok_or_else(|| DnssecError::BadName(zone.to_owned()))?;
        let Some(anchor) = self.anchors.iter().filter(|a| a.zone.zone_of(&target)).max_by_key(|a| a.zone.num_labels())
        else {
            return Ok(Status::Insecure { reason: format!("no trust anchor at or above {target}") });
        };
        let now = unix_now();
        let mut keys = match self.anchor_zone_keys(anchor, now).await? {
            Ok(keys) => keys,
            Err(status) => return Ok(status),
        };
        // Down the labels: the names between the anchor and the target, top first.
        let mut zone = anchor.zone.clone();
        let mut names = Vec::new();
        let mut name = target;
        while name.num_labels() > anchor.zone.num_labels() {
            let parent = name.base_name();
            names.push(name);
            name = parent;
        }
        for name in names.iter().rev() {
            let answer = self.query(name, RecordType::DS).await?;
            let parent = Keys { zone: &zone, keys: &keys };
            match delegation(&answer, name, &parent, now) {
                Cut::None => continue,
                Cut::Insecure(reason) => return Ok(Status::Insecure { reason }),
                Cut::Bogus(reason) => return Ok(bogus(reason)),
                Cut::Signed(ds) => match self.child_keys(name, &ds, now).await? {
                    Ok(child) => {
                        zone = name.clone();
                        keys = child;
                    }
                    Err(status) => return Ok(status),
                },
            }
        }
        Ok(Status::Secure)
    }

    /// The anchor zone's DNSKEY RRset, signed by an anchor key (reused for a short
    /// while once validated), or the status that ends the walk.
    async fn anchor_zone_keys(
        &self,
        anchor: &TrustAnchor,
        now: u32,
    ) -> Result<Result<Vec<DNSKEY>, Status>, DnssecError> {
        {
            let cached = self.anchor_keys.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some((keys, until)) = cached.get(&anchor.zone)
                && Instant::now() < *until
            {
                return Ok(Ok(keys.clone()));
            }
        }
        let answer = self.query(&anchor.zone, RecordType::DNSKEY).await?;
        let keys = dnskeys(&answer.answers, &anchor.zone);
        if keys.is_empty() {
            return Ok(Err(bogus(format!("the trust anchor zone {} serves no DNSKEY", anchor.zone))));
        }
        if rrsigs(&answer.answers, &anchor.zone, RecordType::DNSKEY).next().is_none() {
            return Err(DnssecError::NoDnssec { server: self.server, zone: anchor.zone.to_string() });
        }
        let trusted = Keys { zone: &anchor.zone, keys: &anchor.dnskeys };
        if let Err(why) = verify_rrset(&answer.answers, &anchor.zone, RecordType::DNSKEY, &trusted, now) {
            return Ok(Err(bogus(format!("DNSKEY of {} does not validate from the trust anchor: {why}", anchor.zone))));
        }
        // Reused no longer than the earliest signature over the RRset stays valid.
        let expires = rrsigs(&answer.answers, &anchor.zone, RecordType::DNSKEY)
            .map(|sig| sig.input().sig_expiration.get())
            .min()
            .unwrap_or(now);
        let left = Duration::from_secs(u64::from(expires.saturating_sub(now)));
        let until = Instant::now() + ANCHOR_KEYS_REUSE.min(left);
        self.anchor_keys
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(anchor.zone.clone(), (keys.clone(), until));
        Ok(Ok(keys))
    }

    /// The DNSKEY RRset of `zone` validated from its DS RRset, or the status that ends
    /// the walk.
    async fn child_keys(&self, zone: &Name, ds: &[DS], now: u32) -> Result<Result<Vec<DNSKEY>, Status>, DnssecError> {
        let usable: Vec<&DS> =
            ds.iter().filter(|d| d.algorithm().is_supported() && d.digest_type().is_supported()).collect();
        if usable.is_empty() {
            let algorithms: Vec<String> =
                ds.iter().map(|d| format!("{}/{}", d.algorithm(), u8::from(d.digest_type()))).collect();
            return Ok(Err(Status::Insecure {
                reason: format!("the DS of {zone} uses only unsupported algorithms ({})", algorithms.join(", ")),
            }));
        }
        let answer = self.query(zone, RecordType::DNSKEY).await?;
        let keys = dnskeys(&answer.answers, zone);
        if keys.is_empty() {
            return Ok(Err(bogus(format!("{zone} has a DS in its parent but serves no DNSKEY"))));
        }
        let entry: Vec<DNSKEY> = keys
            .iter()
            .filter(|k| usable.iter().any(|d| d.algorithm() == k.algorithm() && d.covers(zone, k).unwrap_or(false)))
            .cloned()
            .collect();
        if entry.is_empty() {
            return Ok(Err(bogus(format!(
                "no DNSKEY of {zone} matches its DS in the parent (DS key tags {}; DNSKEY key tags {})",
                tags(usable.iter().map(|d| d.key_tag())),
                tags(keys.iter().filter_map(|k| k.calculate_key_tag().ok())),
            ))));
        }
        let entry = Keys { zone, keys: &entry };
        if let Err(why) = verify_rrset(&answer.answers, zone, RecordType::DNSKEY, &entry, now) {
            return Ok(Err(bogus(format!("DNSKEY of {zone} is not signed by a key its DS names: {why}"))));
        }
        Ok(Ok(keys))
    }

    /// One query, over UDP (one retry) and over TCP when the answer is truncated.
    async fn query(&self, name: &Name, kind: RecordType) -> Result<Message, DnssecError> {
        let fail = |reason: String| DnssecError::Query { query: format!("{name} {kind}"), server: self.server, reason };
        match self.exchanger.exchange(build_query(name, kind), name, kind).await {
            Ok(answer) => check_rcode(answer).map_err(fail),
            Err(ExchangeError::Failed(e) | ExchangeError::Malformed(e)) => Err(fail(e)),
        }
    }
}

fn bogus(reason: String) -> Status {
    Status::Bogus { reason }
}

fn fqdn(name: &str) -> Option<Name> {
    let mut n = Name::from_str(name.trim()).ok()?;
    n.set_fqdn(true);
    Some(n)
}

fn unix_now() -> u32 {
    // RRSIG times are serial numbers modulo 2^32 (RFC 4034 §3.1.5): truncation intended.
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as u32).unwrap_or(0)
}

fn tags(tags: impl Iterator<Item = u16>) -> String {
    let tags: Vec<String> = tags.map(|t| t.to_string()).collect();
    if tags.is_empty() { "none".to_owned() } else { tags.join(", ") }
}

/// A query for `name`/`kind` with recursion desired, checking disabled (a validating
/// resolver passes bogus data through for us to judge) and EDNS DO with a 4096-byte
/// payload.
pub fn build_query(name: &Name, kind: RecordType) -> Message {
    let mut message = Message::query();
    message.metadata.recursion_desired = true;
    message.metadata.checking_disabled = true;
    message.add_query(Query::query(name.clone(), kind));
    let mut edns = Edns::new();
    edns.set_dnssec_ok(true).set_max_payload(PAYLOAD);
    message.set_edns(edns);
    message
}

pub use crate::wire::parse_response;

/// NOERROR and NXDOMAIN are answers; any other code is the server's failure.
fn check_rcode(message: Message) -> Result<Message, String> {
    match message.metadata.response_code {
        ResponseCode::NoError | ResponseCode::NXDomain => Ok(message),
        code => Err(format!("the server answered {code}")),
    }
}

fn dnskeys(records: &[Record], owner: &Name) -> Vec<DNSKEY> {
    let mut keys: Vec<DNSKEY> = Vec::new();
    for r in records.iter().filter(|r| r.name == *owner && r.dns_class == DNSClass::IN) {
        if let RData::DNSSEC(DNSSECRData::DNSKEY(k)) = &r.data
            && !keys.contains(k)
        {
            keys.push(k.clone());
        }
    }
    keys
}

fn rrsigs<'a>(records: &'a [Record], owner: &'a Name, kind: RecordType) -> impl Iterator<Item = &'a RRSIG> {
    records.iter().filter(move |r| r.name == *owner).filter_map(move |r| match &r.data {
        RData::DNSSEC(DNSSECRData::RRSIG(sig)) if sig.input().type_covered == kind => Some(sig),
        _ => None,
    })
}

/// `a <= b` in serial number arithmetic (RFC 1982), as RRSIG times compare.
fn serial_le(a: u32, b: u32) -> bool {
    b.wrapping_sub(a) < 1 << 31
}

/// Checks that the RRset `owner`/`kind` in `records` carries an RRSIG made by `signer`
/// with one of its keys, valid at `now`. The error says why none verified.
fn verify_rrset(records: &[Record], owner: &Name, kind: RecordType, signer: &Keys<'_>, now: u32) -> Result<(), String> {
    let mut rrset: Vec<Record> = Vec::new();
    for r in records.iter().filter(|r| r.name == *owner && r.record_type() == kind && r.dns_class == DNSClass::IN) {
        if !rrset.iter().any(|x| x.data == r.data) {
            rrset.push(r.clone());
        }
    }
    if rrset.is_empty() {
        return Err(format!("no {kind} record at {owner}"));
    }
    if !signer.zone.zone_of(owner) {
        return Err(format!("{owner} is not in the zone {}", signer.zone));
    }
    let mut failures: Vec<String> = Vec::new();
    let mut checks = 0;
    for sig in rrsigs(records, owner, kind) {
        let input = sig.input();
        let tag = input.key_tag;
        if input.signer_name != *signer.zone {
            failures.push(format!("RRSIG key tag {tag} is signed by {}, not {}", input.signer_name, signer.zone));
            continue;
        }
        let labels = owner.num_labels();
        if input.num_labels > labels || (input.num_labels < labels && kind != RecordType::CNAME) {
            failures.push(format!("RRSIG key tag {tag} has {} labels for {owner}", input.num_labels));
            continue;
        }
        if !serial_le(input.sig_inception.get(), now) {
            failures.push(format!("RRSIG key tag {tag} is not valid before {}", timestamp(input.sig_inception.get())));
            continue;
        }
        if !serial_le(now, input.sig_expiration.get()) {
            failures.push(format!("RRSIG key tag {tag} expired at {}", timestamp(input.sig_expiration.get())));
            continue;
        }
        let candidates = signer.keys.iter().filter(|k| {
            k.zone_key()
                && !k.revoke()
                && k.algorithm() == input.algorithm
                && k.calculate_key_tag().is_ok_and(|t| t == tag)
        });
        let mut tried = false;
        for key in candidates {
            if checks >= MAX_VERIFICATIONS {
                failures.push(format!("more than {MAX_VERIFICATIONS} signature checks"));
                return Err(failures.join("; "));
            }
            checks += 1;
            tried = true;
            if key.verify_rrsig(owner, DNSClass::IN, sig, rrset.iter()).is_ok() {
                return Ok(());
            }
        }
        failures.push(if tried {
            format!("RRSIG key tag {tag} does not verify (signature wrong or records altered)")
        } else {
            format!("RRSIG key tag {tag} names no {} key of {}", input.algorithm, signer.zone)
        });
    }
    if failures.is_empty() {
        return Err(format!("no RRSIG over the {kind} of {owner}"));
    }
    Err(failures.join("; "))
}

fn timestamp(serial: u32) -> String {
    time::OffsetDateTime::from_unix_timestamp(i64::from(serial))
        .ok()
        .and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok())
        .unwrap_or_else(|| serial.to_string())
}

/// What the answer to `name` DS says about a zone cut below the secure zone `parent`.
fn delegation(answer: &Message, name: &Name, parent: &Keys<'_>, now: u32) -> Cut {
    let ds: Vec<DS> = answer
        .answers
        .iter()
        .filter(|r| r.name == *name)
        .filter_map(|r| match &r.data {
            RData::DNSSEC(DNSSECRData::DS(ds)) => Some(ds.clone()),
            _ => None,
        })
        .collect();
    if !ds.is_empty() {
        return match verify_rrset(&answer.answers, name, RecordType::DS, parent, now) {
            Ok(()) => Cut::Signed(ds),
            Err(why) => Cut::Bogus(format!("DS of {name} in {}: {why}", parent.zone)),
        };
    }
    // An alias is not a zone cut (CNAME and NS cannot share a name).
    if answer.answers.iter().any(|r| r.name == *name && r.record_type() == RecordType::CNAME) {
        return match verify_rrset(&answer.answers, name, RecordType::CNAME, parent, now) {
            Ok(()) => Cut::None,
            Err(why) => Cut::Bogus(format!("CNAME at {name} in {}: {why}", parent.zone)),
        };
    }
    // No DS: the parent must prove it with signed NSEC or NSEC3 records.
    let mut nsec: Vec<(Name, NSEC)> = Vec::new();
    let mut nsec3: Vec<(Name, NSEC3)> = Vec::new();
    let mut failures: Vec<String> = Vec::new();
    for r in &answer.authorities {
        let kind = r.record_type();
        if (kind != RecordType::NSEC && kind != RecordType::NSEC3)
            || nsec.iter().any(|(n, _)| *n == r.name)
            || nsec3.iter().any(|(n, _)| *n == r.name)
        {
            continue;
        }
        if let Err(why) = verify_rrset(&answer.authorities, &r.name, kind, parent, now) {
            failures.push(format!("{kind} at {}: {why}", r.name));
            continue;
        }
        match &r.data {
            RData::DNSSEC(DNSSECRData::NSEC(n)) => nsec.push((r.name.clone(), n.clone())),
            RData::DNSSEC(DNSSECRData::NSEC3(n)) => nsec3.push((r.name.clone(), n.clone())),
            _ => {}
        }
    }
    let denial = nsec_denial(name, parent.zone, &nsec).or_else(|| nsec3_denial(name, parent.zone, &nsec3));
    match denial {
        Some(Denial::NotACut) => Cut::None,
        Some(Denial::Delegation(by)) => {
            Cut::Insecure(format!("{name} is delegated from {} without a DS record (proven by {by})", parent.zone))
        }
        Some(Denial::OptOut) => Cut::Insecure(format!(
            "{name} has no DS record in {}: an NSEC3 opt-out span covers it (an unsigned delegation)",
            parent.zone
        )),
        Some(Denial::TooCostly(iterations)) => Cut::Insecure(format!(
            "{} proves the absence of DS with NSEC3 of {iterations} iterations (more than {MAX_NSEC3_ITERATIONS}, RFC 9276)",
            parent.zone
        )),
        Some(Denial::DsListed) => {
            Cut::Bogus(format!("no DS for {name} was returned, yet its NSEC record in {} lists DS", parent.zone))
        }
        None => {
            let detail =
                if failures.is_empty() { "no NSEC or NSEC3 record covers it".to_owned() } else { failures.join("; ") };
            Cut::Bogus(format!("no DS for {name} and no valid proof from {} that it has none: {detail}", parent.zone))
        }
    }
}

/// What verified NSEC/NSEC3 records prove about the DS of a name.
#[derive(Debug, PartialEq, Eq)]
enum Denial {
    /// The name is a delegation without DS (by NSEC or NSEC3).
    Delegation(&'static str),
    /// An NSEC3 opt-out span covers the name: it may be an unsigned delegation.
    OptOut,
    /// The name exists without NS, or does not exist: not a zone cut.
    NotACut,
    /// The record at the name lists DS after all.
    DsListed,
    /// The NSEC3 parameters are too costly to evaluate.
    TooCostly(u16),
}

/// The meaning of an NSEC/NSEC3 type bitmap at the name itself.
fn at_name(types: &hickory_resolver::proto::rr::RecordTypeSet, by: &'static str) -> Denial {
    if types.contains(RecordType::DS) {
        Denial::DsListed
    } else if types.contains(RecordType::NS) && !types.contains(RecordType::SOA) {
        Denial::Delegation(by)
    } else {
        Denial::NotACut
    }
}

/// RFC 4035 §5.4 with RFC 6840 §4.1: an NSEC at the name, or one covering it.
fn nsec_denial(name: &Name, zone: &Name, records: &[(Name, NSEC)]) -> Option<Denial> {
    let records: Vec<&(Name, NSEC)> = records.iter().filter(|(owner, _)| zone.zone_of(owner)).collect();
    if let Some((_, nsec)) = records.iter().find(|(owner, _)| owner == name) {
        return Some(at_name(nsec.type_set(), "NSEC"));
    }
    let covers = |owner: &Name, next: &Name| {
        if owner < next { owner < name && name < next } else { owner < name }
    };
    records
        .iter()
        // An NSEC at a delegation above the name proves nothing below the cut.
        .filter(|(owner, nsec)| !(owner.zone_of(name) && nsec.is_ancestor_delegation()))
        .any(|(owner, nsec)| covers(owner, nsec.next_domain_name()))
        .then_some(Denial::NotACut)
}

/// RFC 5155 §8.5–8.6: an NSEC3 matching the name, or a closest-encloser proof whose
/// next closer name is covered (opt-out: possibly an unsigned delegation).
fn nsec3_denial(name: &Name, zone: &Name, records: &[(Name, NSEC3)]) -> Option<Denial> {
    let (_, first) = records.first()?;
    let (algorithm, salt, iterations) = (first.hash_algorithm(), first.salt().to_vec(), first.iterations());
    if iterations > MAX_NSEC3_ITERATIONS {
        return Some(Denial::TooCostly(iterations));
    }
    // (owner hash, record), for the records of this zone with the same parameters.
    let hashed: Vec<(Vec<u8>, &NSEC3)> = records
        .iter()
        .filter(|(owner, n)| {
            owner.base_name() == *zone
                && n.hash_algorithm() == algorithm
                && n.salt() == salt.as_slice()
                && n.iterations() == iterations
        })
        .filter_map(|(owner, n)| {
            let label = owner.iter().next()?;
            let hash = data_encoding::BASE32HEX_NOPAD.decode(label.to_ascii_uppercase().as_slice()).ok()?;
            Some((hash, n))
        })
        .collect();
    let hash = |n: &Name| algorithm.hash(&salt, n, iterations).ok().map(|d| d.as_ref().to_vec());
    let matching = |n: &Name| hash(n).and_then(|h| hashed.iter().find(|(o, _)| *o == h).map(|(_, r)| *r));
    let covering = |n: &Name| {
        let h = hash(n)?;
        hashed
            .iter()
            .find(|(o, r)| {
                let next = r.next_hashed_owner_name();
                if o.as_slice() < next { *o < h && h.as_slice() < next } else { *o < h || h.as_slice() < next }
            })
            .map(|(_, r)| *r)
    };
    if let Some(record) = matching(name) {
        return Some(at_name(record.type_set(), "NSEC3"));
    }
    // The closest encloser: the longest existing ancestor; the next closer name below
    // it must be covered.
    let mut next_closer = name.clone();
    while next_closer.num_labels() > zone.num_labels() {
        let encloser = next_closer.base_name();
        if let Some(record) = matching(&encloser) {
            if record.is_ancestor_delegation() && encloser != *zone {
                return None;
            }
            let covered = covering(&next_closer)?;
            return Some(if covered.opt_out() { Denial::OptOut } else { Denial::NotACut });
        }
        next_closer = encloser;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use hickory_resolver::proto::dnssec::crypto::EcdsaSigningKey;
    use hickory_resolver::proto::dnssec::rdata::sig::SigInput;
    use hickory_resolver::proto::dnssec::{Nsec3HashAlgorithm, SigningKey, TBS, TrustAnchors};
    use hickory_resolver::proto::rr::SerialNumber;
    use hickory_resolver::proto::rr::rdata::A;
    use proptest::prelude::*;

    fn name(s: &str) -> Name {
        fqdn(s).unwrap()
    }

    #[test]
    fn the_query_asks_for_dnssec_records_with_checking_disabled() {
        let q = build_query(&name("secure.test"), RecordType::DS);
        let back = Message::from_vec(&q.to_vec().unwrap()).unwrap();
        assert!(back.metadata.recursion_desired && back.metadata.checking_disabled);
        let edns = back.edns.as_ref().unwrap();
        assert!(edns.flags().dnssec_ok);
        assert_eq!(edns.max_payload(), 4096);
        assert_eq!(back.queries.len(), 1);
        assert_eq!(back.queries[0].name(), &name("secure.test"));
        assert_eq!(back.queries[0].query_type(), RecordType::DS);
    }

    #[test]
    fn a_response_must_answer_the_question_asked() {
        let q = build_query(&name("secure.test"), RecordType::DS);
        let id = q.metadata.id;
        let mut response = q.clone();
        response.metadata.message_type = hickory_resolver::proto::op::MessageType::Response;
        let bytes = response.to_vec().unwrap();
        assert!(parse_response(&bytes, id, &name("SECURE.test"), RecordType::DS).is_ok());
        let err = parse_response(&bytes, id.wrapping_add(1), &name("secure.test"), RecordType::DS).unwrap_err();
        assert!(err.contains("not the response"), "{err}");
        let err = parse_response(&bytes, id, &name("other.test"), RecordType::DS).unwrap_err();
        assert!(err.contains("question"), "{err}");
        assert!(parse_response(&bytes, id, &name("secure.test"), RecordType::DNSKEY).is_err());
        // The query itself is not a response.
        assert!(parse_response(&q.to_vec().unwrap(), id, &name("secure.test"), RecordType::DS).is_err());
        assert!(parse_response(&bytes[..bytes.len() - 1], id, &name("secure.test"), RecordType::DS).is_err());
        assert!(parse_response(&[], id, &name("secure.test"), RecordType::DS).is_err());
    }

    proptest! {
        #[test]
        fn random_bytes_never_panic_the_parser(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
            let _ = parse_response(&bytes, 7, &name("secure.test"), RecordType::DS);
        }

        #[test]
        fn a_damaged_response_never_panics_the_parser(cut in 0usize..200, flips in proptest::collection::vec((0usize..200, any::<u8>()), 0..8)) {
            let q = build_query(&name("secure.test"), RecordType::DNSKEY);
            let mut response = q.clone();
            response.metadata.message_type = hickory_resolver::proto::op::MessageType::Response;
            let mut bytes = response.to_vec().unwrap();
            for (at, v) in flips {
                if let Some(b) = bytes.get_mut(at) { *b = v; }
            }
            bytes.truncate(cut.max(2));
            let _ = parse_response(&bytes, q.metadata.id, &name("secure.test"), RecordType::DNSKEY);
        }
    }

    #[test]
    fn anchors_parse_with_optional_ttl_and_class_and_group_by_zone() {
        let root = TrustAnchor::iana_root();
        let text = format!(
            "; comment\n\n# another\n. 172800 IN DNSKEY {}\n. DNSKEY {}\ntest. IN DNSKEY 257 3 13 {}\n",
            root.dnskeys[0],
            root.dnskeys[1],
            "mdsswUyr3DPW132mOi8V9xESWE8jTo0dxCjjnopKl+GqJxpVXckHAeF+KkxLbxILfDLUT0rAK9iUzy1L53eKGQ=="
        );
        let anchors = TrustAnchor::parse(&text).unwrap();
        assert_eq!(anchors.len(), 2);
        assert_eq!(anchors[0], root);
        assert_eq!(anchors[1].zone, name("test"));
        assert_eq!(anchors[1].dnskeys[0].algorithm(), Algorithm::ECDSAP256SHA256);
    }

    #[test]
    fn bad_anchor_lines_say_which_line_and_why() {
        for (text, want) in [
            ("test. 300 IN DS 1 13 2 abcd", "DNSKEY"),
            ("test. 300 IN DNSKEY 257 2 13 AAAA", "protocol"),
            ("test. 300 IN DNSKEY 257 3 200 AAAA", "not supported"),
            ("test. 300 IN DNSKEY 257 3 13 !!!", "base64"),
            ("test. 300 IN DNSKEY 257 3 13", "no key"),
            ("test. 300 IN DNSKEY 1 3 13 AAAA", "zone key"),
            ("test. 300 IN DNSKEY x 3 13 AAAA", "flags"),
        ] {
            let err = TrustAnchor::parse(&format!("\n{text}")).unwrap_err().to_string();
            assert!(err.contains("line 2") && err.contains(want), "{text}: {err}");
        }
    }

    #[test]
    fn the_iana_root_anchor_is_ksk_2017_and_ksk_2024() {
        let root = TrustAnchor::iana_root();
        assert!(root.zone.is_root());
        let tags: Vec<u16> = root.dnskeys.iter().map(|k| k.calculate_key_tag().unwrap()).collect();
        assert_eq!(tags, [20326, 38696]);
        // The same keys hickory ships.
        let hickory = TrustAnchors::default();
        assert!(root.dnskeys.iter().all(|k| k.is_key_signing_key() && hickory.contains(k.public_key())));
    }

    #[test]
    fn serial_arithmetic_wraps() {
        assert!(serial_le(5, 5) && serial_le(5, 6) && !serial_le(6, 5));
        assert!(serial_le(u32::MAX - 2, 3), "across the wrap");
        assert!(!serial_le(3, u32::MAX - 2));
    }

    /// A signed zone made here: key, DNSKEY, and a signer of RRsets.
    struct Signed {
        zone: Name,
        key: EcdsaSigningKey,
        dnskey: DNSKEY,
    }

    impl Signed {
        fn new(zone: &str) -> Signed {
            let pkcs8 = EcdsaSigningKey::generate_pkcs8(Algorithm::ECDSAP256SHA256).unwrap();
            let key = EcdsaSigningKey::from_pkcs8(&pkcs8, Algorithm::ECDSAP256SHA256).unwrap();
            let dnskey = DNSKEY::from_key(&key.to_public_key().unwrap());
            Signed { zone: name(zone), key, dnskey }
        }

        /// `records` (one RRset) with an RRSIG valid from `inception` to `expiration`.
        fn sign(&self, records: &[Record], inception: u32, expiration: u32) -> Vec<Record> {
            let first = &records[0];
            let input = SigInput {
                type_covered: first.record_type(),
                algorithm: Algorithm::ECDSAP256SHA256,
                num_labels: first.name.num_labels(),
                original_ttl: first.ttl,
                sig_expiration: SerialNumber::new(expiration),
                sig_inception: SerialNumber::new(inception),
                key_tag: self.dnskey.calculate_key_tag().unwrap(),
                signer_name: self.zone.clone(),
            };
            let tbs = TBS::from_input(&first.name, DNSClass::IN, &input, records.iter()).unwrap();
            let sig = RRSIG::from_sig(input, self.key.sign(&tbs).unwrap());
            let mut out = records.to_vec();
            out.push(Record::from_rdata(first.name.clone(), first.ttl, RData::DNSSEC(DNSSECRData::RRSIG(sig))));
            out
        }
    }

    fn a(owner: &str, last: u8) -> Record {
        Record::from_rdata(name(owner), 300, RData::A(A::new(127, 0, 0, last)))
    }

    #[test]
    fn rrsets_verify_only_with_a_valid_signature_of_the_zone_in_time() {
        let zone = Signed::new("secure.test");
        let keys = [zone.dnskey.clone()];
        let signer = Keys { zone: &zone.zone, keys: &keys };
        let now = 1_800_000_000;
        let owner = name("www.secure.test");
        let rrset = [a("www.secure.test", 1), a("www.secure.test", 2)];
        let signed = zone.sign(&rrset, now - 10, now + 10);
        assert_eq!(verify_rrset(&signed, &owner, RecordType::A, &signer, now), Ok(()));
        // Expired and not yet valid.
        let err = verify_rrset(&zone.sign(&rrset, now - 20, now - 10), &owner, RecordType::A, &signer, now);
        assert!(err.unwrap_err().contains("expired at 2027-01-15T07:59:50Z"));
        let err = verify_rrset(&zone.sign(&rrset, now + 10, now + 20), &owner, RecordType::A, &signer, now);
        assert!(err.unwrap_err().contains("not valid before"));
        // Altered data.
        let mut altered = signed.clone();
        altered[1] = a("www.secure.test", 3);
        let err = verify_rrset(&altered, &owner, RecordType::A, &signer, now).unwrap_err();
        assert!(err.contains("does not verify"), "{err}");
        // Another key of the same zone.
        let other = Signed::new("secure.test");
        let other_keys = [other.dnskey.clone()];
        let err = verify_rrset(&signed, &owner, RecordType::A, &Keys { zone: &zone.zone, keys: &other_keys }, now)
            .unwrap_err();
        assert!(err.contains("names no"), "{err}");
        // No RRSIG, and a signer that is not the zone.
        let err = verify_rrset(&rrset, &owner, RecordType::A, &signer, now).unwrap_err();
        assert!(err.contains("no RRSIG"), "{err}");
        let parent = name("test");
        let err = verify_rrset(&signed, &owner, RecordType::A, &Keys { zone: &parent, keys: &keys }, now).unwrap_err();
        assert!(err.contains("not test."), "{err}");
    }

    fn nsec(owner: &str, next: &str, types: &[RecordType]) -> (Name, NSEC) {
        (name(owner), NSEC::new_cover_self(name(next), types.iter().copied()))
    }

    #[test]
    fn nsec_proves_a_delegation_without_ds_or_a_name_that_is_no_cut() {
        use RecordType::{DS, NS, SOA};
        let zone = name("test");
        let chain = [
            nsec("test", "plain.test", &[SOA, NS, RecordType::DNSKEY]),
            nsec("plain.test", "secure.test", &[NS]),
            nsec("secure.test", "test", &[NS, DS]),
        ];
        assert_eq!(nsec_denial(&name("plain.test"), &zone, &chain), Some(Denial::Delegation("NSEC")));
        assert_eq!(nsec_denial(&name("secure.test"), &zone, &chain), Some(Denial::DsListed));
        assert_eq!(nsec_denial(&name("test"), &zone, &chain[..1]), Some(Denial::NotACut));
        // Between plain.test and secure.test, and after the last name (the wrap).
        assert_eq!(nsec_denial(&name("q.test"), &zone, &chain), Some(Denial::NotACut));
        assert_eq!(nsec_denial(&name("zzz.test"), &zone, &chain), Some(Denial::NotACut));
        // Not covered by the records given.
        assert_eq!(nsec_denial(&name("q.test"), &zone, &chain[..1]), None);
        // Below a delegation: the parent's NSEC there proves nothing.
        assert_eq!(nsec_denial(&name("www.plain.test"), &zone, &chain[1..2]), None);
        // Records of another zone are ignored.
        assert_eq!(nsec_denial(&name("q.test"), &name("other"), &chain), None);
    }

    fn nsec3(zone: &str, owner: &str, next: &str, opt_out: bool, types: &[RecordType]) -> (Name, NSEC3) {
        let salt = vec![0xab];
        let h = |n: &str| Nsec3HashAlgorithm::SHA1.hash(&salt, &name(n), 1).unwrap().as_ref().to_vec();
        let label = data_encoding::BASE32HEX_NOPAD.encode(&h(owner)).to_ascii_lowercase();
        let record = NSEC3::new(Nsec3HashAlgorithm::SHA1, opt_out, 1, salt.clone(), h(next), types.iter().copied());
        (name(&format!("{label}.{zone}")), record)
    }

    #[test]
    fn nsec3_proves_delegations_opt_out_and_names_that_do_not_exist() {
        use RecordType::{NS, SOA};
        let zone = name("test");
        let apex = nsec3("test", "test", "test", false, &[SOA, NS, RecordType::DNSKEY]);
        let plain = nsec3("test", "plain.test", "plain.test", false, &[NS]);
        assert_eq!(
            nsec3_denial(&name("plain.test"), &zone, std::slice::from_ref(&plain)),
            Some(Denial::Delegation("NSEC3"))
        );
        // The apex matches (closest encloser), and its span, from its own hash round to
        // itself, covers every other hash: with and without opt-out.
        let all = nsec3("test", "test", "test", true, &[SOA, NS, RecordType::DNSKEY]);
        assert_eq!(nsec3_denial(&name("gone.test"), &zone, &[all]), Some(Denial::OptOut));
        assert_eq!(nsec3_denial(&name("gone.test"), &zone, std::slice::from_ref(&apex)), Some(Denial::NotACut));
        // No closest encloser proof.
        assert_eq!(nsec3_denial(&name("gone.test"), &zone, &[plain]), None);
        // Too many iterations.
        let mut costly = apex;
        costly.1 = NSEC3::new(Nsec3HashAlgorithm::SHA1, false, 500, vec![], vec![0; 20], [SOA]);
        assert_eq!(nsec3_denial(&name("gone.test"), &zone, &[costly]), Some(Denial::TooCostly(500)));
    }
}
