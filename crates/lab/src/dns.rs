//! The lab's authoritative DNS server (hickory-server, UDP and TCP) for every lab zone.
//!
//! Zones are written in master-file syntax, one record a line, relative to the zone's
//! origin. The lab adds to each zone its SOA and NS, an A record for every lab host
//! whose name falls in it (unless the zone names that host itself), and to each parent
//! zone the delegations of its child zones, with a DS record for each signed child (for
//! a `dnssec_bogus` child, the DS of a key the child does not publish). A
//! signed zone gets an ECDSA P-256 key made at start (one key, flagged as the secure
//! entry point, signs the whole zone) and NSEC denial of existence. The lab's trust
//! anchor is the DNSKEY of the topmost signed zone (`test.` in the built-in lab).
//!
//! hickory's catalog answers a query from the most specific zone it serves, but a DS
//! record lives in the parent: [`LabDns`] sends DS queries for a child's apex to the
//! parent zone (also when the child has children of its own), as a resolver walking
//! the delegation would be answered.
//!
//! A name absent from an unsigned zone without wildcards, delegations or DNAMEs can only
//! be denied (NXDOMAIN with the zone's SOA); [`LabDns`] sends that denial itself from an
//! index of the zone's names, as hickory's catalog would, without its zone walk. The
//! mail benchmark's DKIM probes are mostly such names (a test holds the two answers
//! equal).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::net::Ipv4Addr;
use std::str::FromStr;
use std::sync::Arc;

use hickory_proto::dnssec::crypto::EcdsaSigningKey;
use hickory_proto::dnssec::rdata::{DNSKEY, DS};
use hickory_proto::dnssec::{Algorithm, DigestType, DnssecSigner, SigningKey};
use hickory_proto::op::{Edns, Header, HeaderCounts, MessageType, Metadata, ResponseCode};
use hickory_proto::rr::{LowerName, Name, RData, Record, RecordSet, RecordType, RrKey};
use hickory_proto::serialize::txt::Parser;
use hickory_server::dnssec::NxProofKind;
use hickory_server::net::runtime::{Time, TokioRuntimeProvider};
use hickory_server::server::{Request, RequestHandler, ResponseHandler, ResponseInfo};
use hickory_server::store::in_memory::InMemoryZoneHandler;
use hickory_server::zone_handler::{AxfrPolicy, Catalog, MessageResponseBuilder, ZoneHandler, ZoneType};
use serde::Deserialize;

use crate::LabError;

/// The lab's name server, as it appears in NS records.
pub const NS_NAME: &str = "ns.lab.test.";
/// How long signatures made at start stay valid.
const SIGNATURE_LIFETIME: std::time::Duration = std::time::Duration::from_secs(30 * 86_400);
/// The TTL of every record the lab writes.
const TTL: u32 = 300;

/// One zone of the lab file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Zone {
    /// The zone's apex, e.g. `acme-robotics.test`.
    pub origin: String,
    /// Sign the zone (and publish its DS in the parent zone, when the lab serves one).
    #[serde(default)]
    pub dnssec: bool,
    /// A broken chain (needs `dnssec`): the zone is signed as usual, but the DS published
    /// in the parent digests another key made at start, as after a botched key rollover.
    #[serde(default)]
    pub dnssec_bogus: bool,
    /// Records in master-file syntax relative to the origin, e.g. `@ MX 10 mail` or
    /// `_dmarc TXT "v=DMARC1; p=reject"`.
    #[serde(default)]
    pub records: Vec<String>,
    /// Names the server fails for, as a broken or hostile name server does: a
    /// resolver's lookup of them ends in SERVFAIL, REFUSED or no answer at all.
    #[serde(default)]
    pub failures: Vec<Failure>,
}

/// A name of a zone the lab's server fails for.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Failure {
    /// Relative to the zone's origin (`@` for the apex), like a record's owner.
    pub name: String,
    /// Only queries of this type (`TXT`, `MX` …); every type when absent.
    #[serde(default, rename = "type")]
    pub record_type: Option<String>,
    pub answer: FailureKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FailureKind {
    Servfail,
    Refused,
    /// No answer: the query is dropped, and the resolver's lookup times out.
    Timeout,
}

/// Where the lab's DNS server listens (the standard port is mapped like any other).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DnsConfig {
    pub address: Ipv4Addr,
    #[serde(default = "dns_port")]
    pub port: u16,
}

fn dns_port() -> u16 {
    53
}

/// A DNSSEC trust anchor the lab publishes: the DNSKEY of a signed zone without a
/// signed parent in the lab.
#[derive(Debug, Clone)]
pub struct TrustAnchor {
    pub zone: Name,
    pub dnskey: DNSKEY,
    /// The DS record a resolver can be configured with, in presentation format.
    pub ds: String,
}

impl TrustAnchor {
    /// The DNSKEY in presentation format, a line of a trust-anchor file.
    pub fn dnskey_line(&self) -> String {
        format!("{} {TTL} IN DNSKEY {}", self.zone, self.dnskey)
    }
}

/// The zones, built and signed, ready to serve.
pub struct LabDns {
    all: Catalog,
    /// For each child zone's apex, a catalog of its parent zone alone: DS queries for
    /// the apex are answered from there (even when the child is a parent itself).
    parents: BTreeMap<LowerName, Catalog>,
    /// Every zone by its apex, with what its fast path needs (None: hickory answers all).
    zones: HashMap<LowerName, Option<NameIndex>>,
    /// The names the server fails for ([`Zone::failures`]), with the query type when
    /// only one fails.
    failures: HashMap<LowerName, Vec<(Option<RecordType>, FailureKind)>>,
    pub trust_anchors: Vec<TrustAnchor>,
}

/// An unsigned zone without delegations, wildcards or DNAMEs: every name in it (owners
/// and the empty non-terminals between them and the apex) and its SOA. A name outside
/// the set can only be answered NXDOMAIN with the SOA, so [`LabDns`] answers it without
/// hickory's zone walk (the benchmark's DKIM probes ask forty such names per domain).
struct NameIndex {
    names: HashSet<LowerName>,
    soa: Record,
}

impl NameIndex {
    /// The index of a zone's records, when the zone is simple enough for the fast path.
    fn of(origin: &Name, records: &BTreeMap<RrKey, RecordSet>, signed: bool, delegates: bool) -> Option<NameIndex> {
        if signed || delegates {
            return None;
        }
        let apex = LowerName::new(origin);
        let mut names = HashSet::new();
        let mut soa = None;
        for (key, rrset) in records {
            let owner = &key.name;
            let cut = key.record_type == RecordType::NS && *owner != apex;
            if cut || owner.is_wildcard() || key.record_type == RecordType::DNAME {
                return None;
            }
            if key.record_type == RecordType::SOA {
                soa = rrset.records_without_rrsigs().next().cloned();
            }
            let mut name = owner.clone();
            while apex.zone_of(&name) && names.insert(name.clone()) && name != apex {
                name = name.base_name();
            }
        }
        Some(NameIndex { names, soa: soa? })
    }
}

fn fqdn(name: &str) -> Result<Name, LabError> {
    let mut n = Name::from_str(name).map_err(|e| LabError::File(format!("DNS name {name:?}: {e}")))?;
    n.set_fqdn(true);
    Ok(n)
}

/// The index of the zone among `origins` that holds `name` (the longest origin that is
/// a suffix), leaving out the zone `skip` (a zone's parent is found without itself).
fn closest(name: &Name, origins: &[Name], skip: Option<usize>) -> Option<usize> {
    origins
        .iter()
        .enumerate()
        .filter(|(i, o)| Some(*i) != skip && o.zone_of(name))
        .max_by_key(|(_, o)| o.num_labels())
        .map(|(i, _)| i)
}

impl LabDns {
    /// Builds every zone of the lab: `hosts` are (name, address) pairs for A records.
    pub fn build(zones: &[Zone], hosts: &[(String, Ipv4Addr)], ns_address: Ipv4Addr) -> Result<LabDns, LabError> {
        let origins: Vec<Name> = zones.iter().map(|z| fqdn(&z.origin)).collect::<Result<_, _>>()?;
        let mut seen = BTreeSet::new();
        for o in &origins {
            if !seen.insert(o.clone()) {
                return Err(LabError::File(format!("zone {o} is declared twice")));
            }
        }
        // One key for each signed zone, made now; a bogus zone's parent gets the DS of
        // another key, made now too and never published.
        let mut keys: BTreeMap<Name, (EcdsaSigningKey, DNSKEY)> = BTreeMap::new();
        let mut decoys: BTreeMap<Name, EcdsaSigningKey> = BTreeMap::new();
        for (zone, origin) in zones.iter().zip(&origins) {
            if zone.dnssec_bogus && !zone.dnssec {
                return Err(LabError::File(format!("zone {origin}: \"dnssec_bogus\" needs \"dnssec\": true")));
            }
            if zone.dnssec {
                let key = signing_key()?;
                let dnskey = DNSKEY::from_key(&key.to_public_key().map_err(dnssec)?);
                keys.insert(origin.clone(), (key, dnskey));
            }
            if zone.dnssec_bogus {
                decoys.insert(origin.clone(), signing_key()?);
            }
        }
        // The zone tree, worked out once: each zone's parent among the others, each
        // host's zone (so building is linear in zones and hosts, not cubic).
        let mut by_zone: Vec<Vec<(Name, Ipv4Addr)>> = vec![Vec::new(); zones.len()];
        for (host, address) in hosts {
            let name = fqdn(host)?;
            if let Some(i) = closest(&name, &origins, None) {
                by_zone[i].push((name, *address));
            }
        }
        let mut children_of: Vec<Vec<usize>> = vec![Vec::new(); zones.len()];
        for (i, child) in origins.iter().enumerate() {
            if let Some(p) = closest(child, &origins, Some(i)) {
                children_of[p].push(i);
            }
        }
        let ns = fqdn(NS_NAME)?;
        let ns_zone = closest(&ns, &origins, None);
        let mut all = Catalog::new();
        let mut parents = BTreeMap::new();
        let mut indexes = HashMap::new();
        let mut trust_anchors = Vec::new();
        let mut failures: HashMap<LowerName, Vec<(Option<RecordType>, FailureKind)>> = HashMap::new();
        for (zone, origin) in zones.iter().zip(&origins) {
            for f in &zone.failures {
                let name = if f.name == "@" { Ok(origin.clone()) } else { Name::parse(&f.name, Some(origin)) }
                    .map_err(|e| LabError::File(format!("zone {origin}: failure name {:?}: {e}", f.name)))?;
                let record_type = match &f.record_type {
                    Some(t) => Some(
                        RecordType::from_str(&t.to_ascii_uppercase())
                            .map_err(|e| LabError::File(format!("zone {origin}: failure type {t:?}: {e}")))?,
                    ),
                    None => None,
                };
                failures.entry(LowerName::new(&name)).or_default().push((record_type, f.answer));
            }
        }
        for (index, (zone, origin)) in zones.iter().zip(&origins).enumerate() {
            // The root zone's contact lives under the lab's own name.
            let contact =
                if origin.is_root() { "hostmaster.lab.test.".to_owned() } else { format!("hostmaster.{origin}") };
            let mut text = format!(
                "$ORIGIN {origin}\n$TTL {TTL}\n@ IN SOA {NS_NAME} {contact} 2026112201 7200 3600 1209600 {TTL}\n\
                 @ IN NS {NS_NAME}\n"
            );
            if ns_zone == Some(index) {
                text.push_str(&format!("{NS_NAME} IN A {ns_address}\n"));
            }
            let own: Vec<String> = zone.records.iter().map(|r| r.trim().to_owned()).collect();
            for (name, address) in &by_zone[index] {
                let relative = relative_label(name, origin);
                // A zone that gives the host its own A or a CNAME keeps its records.
                let names_it = |r: &String| {
                    let mut t = r.split_whitespace();
                    t.next() == Some(relative.as_str()) && t.take(3).any(|w| w == "A" || w == "CNAME")
                };
                if own.iter().any(names_it) {
                    continue;
                }
                text.push_str(&format!("{name} IN A {address}\n"));
            }
            for r in &own {
                text.push_str(r);
                text.push('\n');
            }
            let mut children = Vec::new();
            for &c in &children_of[index] {
                let (child_zone, child) = (&zones[c], &origins[c]);
                children.push(LowerName::new(child));
                text.push_str(&format!("{child} IN NS {NS_NAME}\n"));
                if child_zone.dnssec
                    && let Some((key, _)) = keys.get(child)
                {
                    let key = decoys.get(child).unwrap_or(key);
                    let ds = DS::from_key(&key.to_public_key().map_err(dnssec)?, child, DigestType::SHA256)
                        .map_err(|e| LabError::File(format!("DS for {child}: {e}")))?;
                    text.push_str(&format!("{child} IN DS {ds}\n"));
                }
            }
            let (_, records) = Parser::new(text.as_str(), None, Some(origin.clone()))
                .parse()
                .map_err(|e| LabError::File(format!("zone {origin}: {e}")))?;
            // Nothing in the lab may send a scanner off the machine: addresses are
            // loopback (A) or from the documentation range 2001:db8::/32 (AAAA) — or
            // internal ones (RFC 1918, unique local), which a zone may publish to hide
            // a host and which the lab's guard refuses (`Policy::lab_only`).
            for rrset in records.values() {
                for r in rrset.records_without_rrsigs() {
                    let outside = match &r.data {
                        RData::A(a) => !(a.0.is_loopback() || a.0.is_private()),
                        RData::AAAA(a) => {
                            let s = a.0.segments();
                            !(a.0.is_loopback() || (s[0] == 0x2001 && s[1] == 0x0db8) || s[0] & 0xfe00 == 0xfc00)
                        }
                        _ => false,
                    };
                    if outside {
                        return Err(LabError::File(format!(
                            "zone {origin}: {} {} is outside 127.0.0.0/8, 2001:db8::/32 and the internal ranges",
                            r.name, r.data
                        )));
                    }
                }
            }
            indexes.insert(LowerName::new(origin), NameIndex::of(origin, &records, zone.dnssec, !children.is_empty()));
            let mut handler = InMemoryZoneHandler::<TokioRuntimeProvider>::new(
                origin.clone(),
                records,
                ZoneType::Primary,
                AxfrPolicy::Deny,
                zone.dnssec.then_some(NxProofKind::Nsec),
            )
            .map_err(|e| LabError::File(format!("zone {origin}: {e}")))?;
            if let Some((key, dnskey)) = keys.remove(origin) {
                let ds = DS::from_key(&key.to_public_key().map_err(dnssec)?, origin, DigestType::SHA256)
                    .map_err(|e| LabError::File(format!("DS for {origin}: {e}")))?;
                let signer = DnssecSigner::new(dnskey.clone(), Box::new(key), origin.clone(), SIGNATURE_LIFETIME);
                handler.add_zone_signing_key_mut(signer).map_err(dnssec)?;
                handler.secure_zone_mut().map_err(dnssec)?;
                let signed_parent =
                    zones.iter().zip(&origins).any(|(z, o)| z.dnssec && o != origin && o.zone_of(origin));
                if !signed_parent {
                    trust_anchors.push(TrustAnchor {
                        zone: origin.clone(),
                        dnskey,
                        ds: format!("{origin} IN DS {ds}"),
                    });
                }
            }
            let handler: Arc<dyn ZoneHandler> = Arc::new(handler);
            for child in children {
                let mut parent = Catalog::new();
                parent.upsert(LowerName::new(origin), vec![handler.clone()]);
                parents.insert(child, parent);
            }
            all.upsert(LowerName::new(origin), vec![handler]);
        }
        Ok(LabDns { all, parents, zones: indexes, failures, trust_anchors })
    }
}

/// A new ECDSA P-256 zone key.
fn signing_key() -> Result<EcdsaSigningKey, LabError> {
    let pkcs8 = EcdsaSigningKey::generate_pkcs8(Algorithm::ECDSAP256SHA256).map_err(dnssec)?;
    EcdsaSigningKey::from_pkcs8(&pkcs8, Algorithm::ECDSAP256SHA256).map_err(dnssec)
}

/// `name` relative to `origin` (`@` for the apex).
fn relative_label(name: &Name, origin: &Name) -> String {
    let full = name.to_ascii().to_ascii_lowercase();
    let o = origin.to_ascii().to_ascii_lowercase();
    if full == o {
        return "@".to_owned();
    }
    full.strip_suffix(&format!(".{o}")).map(str::to_owned).unwrap_or(full)
}

fn dnssec(e: impl std::fmt::Display) -> LabError {
    LabError::File(format!("DNSSEC: {e}"))
}

impl LabDns {
    /// The zone index that answers `name`: that of the closest enclosing lab zone, when
    /// the fast path may answer for it.
    fn index_for(&self, name: &LowerName) -> Option<&NameIndex> {
        let mut name = name.clone();
        loop {
            if let Some(index) = self.zones.get(&name) {
                return index.as_ref();
            }
            if name.is_root() {
                return None;
            }
            name = name.base_name();
        }
    }

    /// The failure configured for the request's name and type, if any: SERVFAIL or
    /// REFUSED sent, or nothing sent at all (the client times out).
    async fn fail<R: ResponseHandler>(&self, request: &Request, response_handle: &mut R) -> Option<ResponseInfo> {
        let info = request.request_info().ok()?;
        let kind = self
            .failures
            .get(info.query.name())?
            .iter()
            .find(|(t, _)| t.is_none_or(|t| t == info.query.query_type()))
            .map(|(_, kind)| *kind)?;
        let mut metadata = Metadata::response_from_request(&request.metadata);
        metadata.response_code = match kind {
            FailureKind::Servfail => ResponseCode::ServFail,
            FailureKind::Refused => ResponseCode::Refused,
            FailureKind::Timeout => {
                return Some(ResponseInfo::from(Header { metadata, counts: HeaderCounts::default() }));
            }
        };
        let response = MessageResponseBuilder::new(&request.queries, None).build_no_records(metadata);
        Some(response_handle.send_response(response).await.unwrap_or_else(|_| {
            let mut failed = Metadata::new(request.metadata.id, MessageType::Response, request.metadata.op_code);
            failed.response_code = ResponseCode::ServFail;
            ResponseInfo::from(Header { metadata: failed, counts: HeaderCounts::default() })
        }))
    }

    /// NXDOMAIN for a name no record holds, in a zone [`NameIndex`] covers: what
    /// hickory's catalog would send (authoritative, the SOA in the authority section,
    /// EDNS echoed with the DO bit), without its lookups. None: hickory answers.
    async fn nxdomain<R: ResponseHandler>(&self, request: &Request, response_handle: &mut R) -> Option<ResponseInfo> {
        let info = request.request_info().ok()?;
        if request.metadata.message_type != MessageType::Query
            || info.query.query_class() != hickory_proto::rr::DNSClass::IN
            || request.edns.as_ref().is_some_and(|e| e.version() > 0)
        {
            return None;
        }
        let index = self.index_for(info.query.name())?;
        if index.names.contains(info.query.name()) {
            return None;
        }
        let edns = request.edns.as_ref().map(|req| {
            let mut e = Edns::new();
            e.set_dnssec_ok(req.flags().dnssec_ok);
            e.set_max_payload(req.max_payload().max(512));
            e.set_version(0);
            e
        });
        let mut metadata = Metadata::response_from_request(&request.metadata);
        metadata.authoritative = true;
        metadata.response_code = ResponseCode::NXDomain;
        let response = MessageResponseBuilder::new(&request.queries, edns.as_ref()).build(
            metadata,
            std::iter::empty(),
            std::iter::once(&index.soa),
            std::iter::empty(),
            std::iter::empty(),
        );
        Some(response_handle.send_response(response).await.unwrap_or_else(|_| {
            let mut failed = Metadata::new(request.metadata.id, MessageType::Response, request.metadata.op_code);
            failed.response_code = ResponseCode::ServFail;
            ResponseInfo::from(Header { metadata: failed, counts: HeaderCounts::default() })
        }))
    }
}

#[async_trait::async_trait]
impl RequestHandler for LabDns {
    async fn handle_request<R: ResponseHandler, T: Time>(
        &self,
        request: &Request,
        mut response_handle: R,
    ) -> ResponseInfo {
        if let Some(sent) = self.fail(request, &mut response_handle).await {
            return sent;
        }
        let parent = request
            .request_info()
            .ok()
            .filter(|info| info.query.query_type() == RecordType::DS)
            .and_then(|info| self.parents.get(info.query.name()));
        if let Some(parent) = parent {
            return parent.handle_request::<R, T>(request, response_handle).await;
        }
        if let Some(sent) = self.nxdomain(request, &mut response_handle).await {
            return sent;
        }
        self.all.handle_request::<R, T>(request, response_handle).await
    }
}
