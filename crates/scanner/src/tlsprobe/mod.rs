//! The TLS prober: what sslyze and testssl.sh see, by raw ClientHellos.
//!
//! For each protocol version (SSLv2's own hello format, SSLv3 to TLS 1.3) it sends
//! ClientHellos and reads the ServerHello or alert: the versions accepted, each version's
//! cipher suites (offer many, remove the chosen one, repeat: one connection per accepted
//! suite plus one per offered chunk), the server's preference order, key-exchange groups
//! and DH sizes, secure renegotiation, compression, OCSP stapling, ALPN, TLS_FALLBACK_SCSV
//! and a Heartbleed heartbeat. The certificate chain comes from the first Certificate
//! message (TLS ≤ 1.2) or a rustls handshake (TLS 1.3). No handshake is completed except
//! rustls's; nothing is sent after the first flight but the heartbeat probe.
//!
//! Every connection goes through the guard (checked address, connect timeout, limits);
//! every read has the guard's read timeout, and a flight is bounded to 256 KiB.

pub mod cert;
pub mod starttls;
pub mod suites;
pub mod wire;

use std::net::IpAddr;
use std::time::Duration;

use crate::guard::Connection;
use serde::Serialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::guard::{Guard, GuardError};
pub use starttls::Starttls;

/// The most of one server flight read.
const MAX_FLIGHT: usize = 256 * 1024;
/// Suites offered in one ClientHello (some servers drop longer hellos).
const CHUNK: usize = 128;
/// Connections spent on one version's suites at most.
const MAX_CONNECTIONS_PER_VERSION: usize = 400;
/// Preference order is worked out for at most this many accepted suites.
const MAX_ORDERED: usize = 48;
/// Hellos in a row left unanswered (timed out) before the endpoint is given up: a
/// black hole must not cost a timeout per suite chunk and version.
const SILENT_LIMIT: usize = 3;

/// A protocol version, oldest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Version {
    #[serde(rename = "SSLv2")]
    Ssl2,
    #[serde(rename = "SSLv3")]
    Ssl3,
    #[serde(rename = "TLS 1.0")]
    Tls10,
    #[serde(rename = "TLS 1.1")]
    Tls11,
    #[serde(rename = "TLS 1.2")]
    Tls12,
    #[serde(rename = "TLS 1.3")]
    Tls13,
}

impl Version {
    pub const ALL: [Version; 6] =
        [Version::Ssl2, Version::Ssl3, Version::Tls10, Version::Tls11, Version::Tls12, Version::Tls13];

    pub fn wire(self) -> u16 {
        match self {
            Version::Ssl2 => 0x0002,
            Version::Ssl3 => 0x0300,
            Version::Tls10 => 0x0301,
            Version::Tls11 => 0x0302,
            Version::Tls12 => 0x0303,
            Version::Tls13 => 0x0304,
        }
    }

    pub fn from_wire(v: u16) -> Option<Version> {
        Version::ALL.into_iter().find(|x| x.wire() == v)
    }

    pub fn name(self) -> &'static str {
        match self {
            Version::Ssl2 => "SSLv2",
            Version::Ssl3 => "SSLv3",
            Version::Tls10 => "TLS 1.0",
            Version::Tls11 => "TLS 1.1",
            Version::Tls12 => "TLS 1.2",
            Version::Tls13 => "TLS 1.3",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error(transparent)]
    Guard(#[from] GuardError),
    #[error("{target}: STARTTLS: {message}")]
    Starttls { target: String, message: String },
    #[error("{target}: no answer to {SILENT_LIMIT} ClientHellos in a row within the read timeout")]
    Silent { target: String },
}

/// One endpoint to probe.
#[derive(Debug, Clone)]
pub struct Target {
    /// The host connected to (resolved through the guard) and, unless `sni` says
    /// otherwise, the name sent in SNI and checked against the certificate.
    pub host: String,
    /// The standard port (the lab port is the guard's business).
    pub port: u16,
    pub sni: Option<String>,
    pub starttls: Option<Starttls>,
}

impl Target {
    pub fn new(host: &str, port: u16) -> Target {
        Target { host: crate::dns::host_name(host), port, sni: None, starttls: Starttls::for_port(port) }
    }

    /// `host:port`, the asset the findings are on.
    pub fn asset(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    fn server_name(&self) -> &str {
        self.sni.as_deref().unwrap_or(&self.host)
    }
}

/// One version's accepted suites, in the server's preference order when it has one.
#[derive(Debug, Clone, Serialize)]
pub struct VersionSuites {
    pub version: Version,
    pub suites: Vec<String>,
    #[serde(skip)]
    pub ids: Vec<u16>,
    /// Whether the server picks by its own order (`None`: fewer than two suites).
    pub server_preference: Option<bool>,
}

/// Everything the prober saw on one endpoint.
#[derive(Debug, Clone, Serialize)]
pub struct TlsReport {
    pub target: String,
    pub ip: Option<IpAddr>,
    pub versions: Vec<Version>,
    pub suites: Vec<VersionSuites>,
    /// SSLv2 cipher kinds, when SSLv2 is accepted.
    pub ssl2_ciphers: Vec<String>,
    /// Named groups accepted for (EC)DHE, TLS 1.3 key shares included.
    pub groups: Vec<String>,
    /// The smallest finite-field DH prime among accepted DHE suites, in bits.
    pub dh_bits: Option<usize>,
    /// Suites whose DH prime is smaller than 2048 bits, with the size.
    #[serde(skip)]
    pub weak_dh: Vec<(u16, usize)>,
    pub secure_renegotiation: Option<bool>,
    pub compression: bool,
    pub ocsp_stapling: bool,
    pub alpn_h2: bool,
    /// TLS_FALLBACK_SCSV honoured (`None`: fewer than two versions to fall back between).
    pub fallback_scsv: Option<bool>,
    pub heartbleed: Option<HeartbleedResult>,
    pub certificate: Option<cert::CertReport>,
    /// The Mozilla server-side TLS profile the configuration meets.
    pub mozilla_profile: &'static str,
    /// TCP connections the probe made.
    pub connections: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct HeartbleedResult {
    pub vulnerable: bool,
    /// Bytes of the heartbeat response beyond the 3 sent (the leak).
    pub leaked: usize,
}

impl TlsReport {
    pub fn accepts(&self, v: Version) -> bool {
        self.versions.contains(&v)
    }

    /// Accepted suites of SSLv3 to TLS 1.2, with their version.
    pub fn legacy_suites(&self) -> impl Iterator<Item = (Version, &'static suites::Suite)> + '_ {
        self.suites
            .iter()
            .filter(|s| s.version < Version::Tls13)
            .flat_map(|s| s.ids.iter().filter_map(move |id| suites::by_id(*id).map(|x| (s.version, x))))
    }
}

/// What one ClientHello brought back.
enum Answer {
    Flight(wire::Flight),
    /// Closed, reset or silent before a complete answer.
    Nothing(String),
}

/// The connection-level work of one probe.
pub struct Prober<'a> {
    guard: &'a Guard,
    target: &'a Target,
    addrs: Vec<IpAddr>,
    pub connections: usize,
    ip: Option<IpAddr>,
    /// Hellos in a row that timed out.
    silent: usize,
}

impl<'a> Prober<'a> {
    pub async fn new(guard: &'a Guard, target: &'a Target) -> Result<Prober<'a>, ProbeError> {
        let addrs = guard.resolve(&target.host).await?;
        Ok(Prober { guard, target, addrs, connections: 0, ip: None, silent: 0 })
    }

    /// A connection ready for a ClientHello (STARTTLS done when the target needs it).
    pub async fn connect(&mut self) -> Result<Connection, ProbeError> {
        let c = self.guard.connect(&self.target.host, &self.addrs, self.target.port).await?;
        self.connections += 1;
        self.ip = Some(c.addr.ip());
        let mut stream = c;
        if let Some(kind) = self.target.starttls {
            starttls::negotiate(&mut stream, kind, self.guard.policy().read_timeout)
                .await
                .map_err(|message| ProbeError::Starttls { target: self.target.asset(), message })?;
        }
        Ok(stream)
    }

    fn timeout(&self) -> Duration {
        self.guard.policy().read_timeout
    }

    /// Sends `hello` on a new connection and reads the server's first flight.
    async fn ask(&mut self, hello: &[u8]) -> Result<(Answer, Connection), ProbeError> {
        if self.silent >= SILENT_LIMIT {
            return Err(ProbeError::Silent { target: self.target.asset() });
        }
        let mut stream = self.connect().await?;
        if let Err(e) = stream.write_all(hello).await {
            return Ok((Answer::Nothing(format!("send: {e}")), stream));
        }
        let answer = read_flight(&mut stream, self.timeout()).await;
        match &answer {
            Answer::Nothing(why) if why == TIMED_OUT => self.silent += 1,
            _ => self.silent = 0,
        }
        if let Answer::Nothing(why) = &answer {
            tracing::trace!(target = %self.target.asset(), why, "no flight");
        }
        Ok((answer, stream))
    }

    async fn hello(&mut self, h: &wire::Hello<'_>) -> Result<Answer, ProbeError> {
        Ok(self.ask(&wire::client_hello(h)).await?.0)
    }
}

const TIMED_OUT: &str = "no complete answer in time";

/// Reads the server's first flight; `timeout` bounds the whole read, not each chunk, so
/// a server that trickles a byte at a time cannot hold the probe.
async fn read_flight(stream: &mut Connection, timeout: Duration) -> Answer {
    let deadline = tokio::time::Instant::now() + timeout;
    let mut buf = Vec::with_capacity(8192);
    let mut chunk = vec![0u8; 16384];
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut chunk)).await {
            Err(_) => return Answer::Nothing(TIMED_OUT.into()),
            Ok(Err(e)) => return Answer::Nothing(format!("receive: {e}")),
            Ok(Ok(0)) => return Answer::Nothing("closed".into()),
            Ok(Ok(n)) => {
                buf.extend_from_slice(&chunk[..n]);
                match wire::flight(&buf) {
                    Ok(Some(flight)) => return Answer::Flight(flight),
                    Ok(None) if buf.len() < MAX_FLIGHT => {}
                    Ok(None) => {
                        return Answer::Nothing(format!("more than {MAX_FLIGHT} bytes without a complete flight"));
                    }
                    Err(e) => return Answer::Nothing(e),
                }
            }
        }
    }
}

fn random32() -> [u8; 32] {
    rand::random()
}

/// A ClientHello description for `version` offering `suites`.
fn hello<'a>(
    target: &'a Target,
    version: Version,
    suites: &'a [u16],
    groups: &'a [u16],
    key: &'a [u8],
) -> wire::Hello<'a> {
    let sni = target.server_name();
    wire::Hello {
        version,
        suites,
        fallback_scsv: false,
        sni: (sni.parse::<IpAddr>().is_err()).then_some(sni),
        groups,
        deflate: true,
        random: random32(),
        key_share: key,
    }
}

fn all_groups() -> Vec<u16> {
    wire::GROUPS.iter().map(|(g, _)| *g).collect()
}

/// What the enumeration of one version found, besides the suites.
#[derive(Default)]
struct VersionFacts {
    accepted: Vec<u16>,
    first_flight: Option<wire::Flight>,
    dh: Vec<(u16, usize)>,
}

/// Probes one endpoint completely.
pub async fn probe(
    guard: &Guard,
    target: &Target,
    lab_root: Option<&[u8]>,
    now: time::OffsetDateTime,
) -> Result<TlsReport, ProbeError> {
    let mut p = Prober::new(guard, target).await?;
    // Reachable at all? A refused connection is an error, not "no TLS".
    drop(p.connect().await?);
    let mut report = TlsReport {
        target: target.asset(),
        ip: None,
        versions: Vec::new(),
        suites: Vec::new(),
        ssl2_ciphers: Vec::new(),
        groups: Vec::new(),
        dh_bits: None,
        weak_dh: Vec::new(),
        secure_renegotiation: None,
        compression: false,
        ocsp_stapling: false,
        alpn_h2: false,
        fallback_scsv: None,
        heartbleed: None,
        certificate: None,
        mozilla_profile: "none",
        connections: 0,
    };
    // SSLv2.
    let challenge: [u8; 16] = rand::random();
    let mut stream = p.connect().await?;
    if stream.write_all(&wire::ssl2_client_hello(&challenge)).await.is_ok()
        && let Some((ciphers, _cert)) = read_ssl2(&mut stream, p.timeout()).await
    {
        report.versions.push(Version::Ssl2);
        report.ssl2_ciphers = ciphers;
    }
    drop(stream);

    let mut chain: Vec<Vec<u8>> = Vec::new();
    let mut highest_legacy: Option<(Version, wire::ServerHello)> = None;
    for version in [Version::Ssl3, Version::Tls10, Version::Tls11, Version::Tls12, Version::Tls13] {
        let facts = enumerate(&mut p, target, version).await?;
        if facts.accepted.is_empty() {
            continue;
        }
        report.versions.push(version);
        if let Some(flight) = &facts.first_flight {
            if chain.is_empty() && !flight.certificates.is_empty() {
                chain = flight.certificates.clone();
            }
            report.ocsp_stapling |= flight.stapled;
            if let Some(h) = &flight.hello {
                report.alpn_h2 |= h.alpn.as_deref() == Some("h2");
                if version < Version::Tls13 {
                    report.compression |= h.compression == 1;
                    highest_legacy = Some((version, h.clone()));
                }
            }
        }
        for (suite, bits) in &facts.dh {
            report.dh_bits = Some(report.dh_bits.map_or(*bits, |b: usize| b.min(*bits)));
            if *bits < 2048 {
                report.weak_dh.push((*suite, *bits));
            }
        }
        let order = preference(&mut p, target, version, &facts.accepted).await?;
        report.suites.push(VersionSuites {
            version,
            suites: order.0.iter().map(|id| suites::name(*id)).collect(),
            ids: order.0,
            server_preference: order.1,
        });
    }
    if let Some((_, h)) = &highest_legacy {
        report.secure_renegotiation = Some(h.secure_renegotiation);
    }
    report.groups = groups(&mut p, target, &report).await?;
    report.fallback_scsv = fallback(&mut p, target, &report).await?;
    if let Some((version, h)) = &highest_legacy
        && h.extensions.contains(&wire::EXT_HEARTBEAT)
    {
        let suites = report.suites.iter().find(|s| s.version == *version).map(|s| s.ids.clone()).unwrap_or_default();
        report.heartbleed = heartbleed(&mut p, target, *version, &suites).await?;
    } else if highest_legacy.is_some() {
        report.heartbleed = Some(HeartbleedResult { vulnerable: false, leaked: 0 });
    }
    // TLS 1.2/1.3 through rustls: the chain when no Certificate message was seen, and
    // stapling/ALPN that TLS 1.3 encrypts.
    if (report.accepts(Version::Tls13) || report.accepts(Version::Tls12))
        && let Ok(stream) = p.connect().await
    {
        match cert::rustls_handshake(stream, target.server_name(), p.timeout()).await {
            Ok(seen) => {
                if chain.is_empty() {
                    chain = seen.chain;
                }
                report.ocsp_stapling |= seen.stapled;
                report.alpn_h2 |= seen.alpn.as_deref() == Some(b"h2".as_slice());
            }
            Err(e) => tracing::debug!(target = %target.asset(), error = %e, "rustls handshake"),
        }
    }
    if !chain.is_empty() {
        report.certificate = Some(cert::analyse(&chain, target.server_name(), lab_root, now));
    }
    report.mozilla_profile = mozilla_profile(&report);
    report.ip = p.ip;
    report.connections = p.connections;
    Ok(report)
}

/// Suites allowed by Mozilla's intermediate profile (v5.7) in TLS 1.2.
const MOZILLA_INTERMEDIATE: &[u16] = &[0xc02b, 0xc02f, 0xc02c, 0xc030, 0xcca9, 0xcca8, 0x009e, 0x009f, 0xccaa];

/// The Mozilla server-side TLS profile the configuration meets: `modern` (TLS 1.3
/// only), `intermediate` (TLS 1.2/1.3 with the intermediate suites, DH ≥ 2048),
/// `old` (TLS 1.0 or later, no NULL/anonymous/EXPORT/RC4), or `none`.
pub fn mozilla_profile(r: &TlsReport) -> &'static str {
    let tls: Vec<Version> = r.versions.iter().copied().filter(|v| *v >= Version::Ssl3).collect();
    if tls.is_empty() {
        return "none";
    }
    if r.accepts(Version::Ssl2) || r.accepts(Version::Ssl3) {
        return "none";
    }
    let legacy: Vec<&suites::Suite> = r.legacy_suites().map(|(_, s)| s).collect();
    if legacy.iter().any(|s| s.null_cipher || s.anonymous() || s.export || s.rc4) {
        return "none";
    }
    if tls == [Version::Tls13] {
        return "modern";
    }
    let only_new = tls.iter().all(|v| *v >= Version::Tls12);
    let suites_ok = legacy.iter().all(|s| MOZILLA_INTERMEDIATE.contains(&s.id));
    if only_new && suites_ok && r.dh_bits.is_none_or(|b| b >= 2048) {
        return "intermediate";
    }
    "old"
}

async fn read_ssl2(stream: &mut Connection, timeout: Duration) -> Option<wire::Ssl2Hello> {
    let deadline = tokio::time::Instant::now() + timeout;
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 8192];
    loop {
        let n = tokio::time::timeout_at(deadline, stream.read(&mut chunk)).await.ok()?.ok()?;
        if n == 0 || buf.len() > MAX_FLIGHT {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        match wire::ssl2_server_hello(&buf) {
            Ok(Some(found)) => return Some(found),
            Ok(None) => {}
            Err(_) => return None,
        }
    }
}

/// The suites `version` accepts: offer a chunk, note the chosen suite, remove it, again.
async fn enumerate(p: &mut Prober<'_>, target: &Target, version: Version) -> Result<VersionFacts, ProbeError> {
    let mut facts = VersionFacts::default();
    let groups = all_groups();
    let key: [u8; 32] = rand::random();
    let offered = suites::for_version(version);
    let mut spent = 0;
    for chunk in offered.chunks(CHUNK) {
        let mut remaining: Vec<u16> = chunk.to_vec();
        while !remaining.is_empty() && spent < MAX_CONNECTIONS_PER_VERSION {
            spent += 1;
            let h = hello(target, version, &remaining, &groups, &key);
            let Answer::Flight(flight) = p.hello(&h).await? else { break };
            let Some(sh) = &flight.hello else { break };
            if Version::from_wire(sh.version) != Some(version) || !remaining.contains(&sh.suite) {
                // Another version answered: this one is not accepted (or a broken server).
                return Ok(facts);
            }
            let suite = sh.suite;
            remaining.retain(|s| *s != suite);
            facts.accepted.push(suite);
            if let (Some(body), Some(info)) = (&flight.key_exchange_body, suites::by_id(suite))
                && let Some(wire::KeyExchange::Dh { bits }) = wire::server_key_exchange(body, info.kx)
            {
                facts.dh.push((suite, bits));
            }
            if facts.first_flight.is_none() {
                facts.first_flight = Some(flight);
            }
        }
        if version == Version::Tls13 {
            break;
        }
    }
    Ok(facts)
}

/// The accepted suites in the server's order when it has one (else as accepted), and
/// whether it does.
async fn preference(
    p: &mut Prober<'_>,
    target: &Target,
    version: Version,
    accepted: &[u16],
) -> Result<(Vec<u16>, Option<bool>), ProbeError> {
    if accepted.len() < 2 {
        return Ok((accepted.to_vec(), None));
    }
    let groups = all_groups();
    let key: [u8; 32] = rand::random();
    let chosen = |a: Answer| match a {
        Answer::Flight(f) => f.hello.map(|h| h.suite),
        Answer::Nothing(_) => None,
    };
    let forward = chosen(p.hello(&hello(target, version, accepted, &groups, &key)).await?);
    let reversed: Vec<u16> = accepted.iter().rev().copied().collect();
    let backward = chosen(p.hello(&hello(target, version, &reversed, &groups, &key)).await?);
    let server_order = forward.is_some() && forward == backward;
    if !server_order || accepted.len() > MAX_ORDERED {
        return Ok((accepted.to_vec(), Some(server_order)));
    }
    let mut order = Vec::with_capacity(accepted.len());
    let mut remaining = accepted.to_vec();
    while remaining.len() > 1 {
        let Some(next) = chosen(p.hello(&hello(target, version, &remaining, &groups, &key)).await?) else { break };
        if !remaining.contains(&next) {
            break;
        }
        order.push(next);
        remaining.retain(|s| *s != next);
    }
    order.extend(remaining);
    Ok((order, Some(true)))
}

/// Named groups: TLS 1.3 by HelloRetryRequest (an empty key share names the group the
/// server wants), TLS 1.2 by the ServerKeyExchange of an ECDHE suite.
async fn groups(p: &mut Prober<'_>, target: &Target, report: &TlsReport) -> Result<Vec<String>, ProbeError> {
    let mut found: Vec<u16> = Vec::new();
    let suites_of =
        |v: Version| report.suites.iter().find(|s| s.version == v).map(|s| s.ids.clone()).unwrap_or_default();
    if report.accepts(Version::Tls13) {
        let suites = suites_of(Version::Tls13);
        for (g, _) in wire::GROUPS {
            let h = hello(target, Version::Tls13, &suites, std::slice::from_ref(g), &[]);
            if let Answer::Flight(f) = p.hello(&h).await?
                && let Some(sh) = f.hello
                && sh.version == Version::Tls13.wire()
                && sh.key_share_group == Some(*g)
                && !found.contains(g)
            {
                found.push(*g);
            }
        }
    }
    let ecdhe: Vec<u16> = suites_of(Version::Tls12)
        .into_iter()
        .filter(|id| suites::by_id(*id).is_some_and(|s| s.kx == suites::Kx::Ecdhe))
        .collect();
    if !ecdhe.is_empty() {
        for (g, _) in wire::GROUPS.iter().filter(|(g, _)| *g < 0x0100) {
            let h = hello(target, Version::Tls12, &ecdhe, std::slice::from_ref(g), &[]);
            if let Answer::Flight(f) = p.hello(&h).await?
                && let (Some(sh), Some(body)) = (&f.hello, &f.key_exchange_body)
                && let Some(wire::KeyExchange::Ecdh { group }) = wire::server_key_exchange(body, suites::Kx::Ecdhe)
                && group == *g
                && sh.version == Version::Tls12.wire()
                && !found.contains(g)
            {
                found.push(*g);
            }
        }
    }
    Ok(found.into_iter().map(wire::group_name).collect())
}

/// TLS_FALLBACK_SCSV: a hello at the second-highest accepted version carrying the SCSV
/// must be refused with `inappropriate_fallback` (86).
async fn fallback(p: &mut Prober<'_>, target: &Target, report: &TlsReport) -> Result<Option<bool>, ProbeError> {
    let mut versions: Vec<Version> = report.versions.iter().copied().filter(|v| *v != Version::Ssl2).collect();
    versions.sort();
    if versions.len() < 2 {
        return Ok(None);
    }
    let lower = versions[versions.len() - 2];
    let suites = report.suites.iter().find(|s| s.version == lower).map(|s| s.ids.clone()).unwrap_or_default();
    let groups = all_groups();
    let mut h = hello(target, lower, &suites, &groups, &[]);
    h.fallback_scsv = true;
    Ok(match p.hello(&h).await? {
        Answer::Flight(f) => match (f.alert, f.hello) {
            (Some(86), _) => Some(true),
            (_, Some(_)) => Some(false),
            // Another alert or nothing: it refused the connection, which protects too.
            _ => Some(true),
        },
        Answer::Nothing(_) => Some(true),
    })
}

/// Heartbleed: after the first flight, a heartbeat request that claims 16 KiB of
/// payload and carries none. A server that answers with more than it got leaks memory.
async fn heartbleed(
    p: &mut Prober<'_>,
    target: &Target,
    version: Version,
    suites: &[u16],
) -> Result<Option<HeartbleedResult>, ProbeError> {
    let groups = all_groups();
    let h = hello(target, version, suites, &groups, &[]);
    let (answer, mut stream) = p.ask(&wire::client_hello(&h)).await?;
    let Answer::Flight(f) = answer else { return Ok(None) };
    if !f.done {
        return Ok(None);
    }
    // The probe claims 16 KiB and sends none; a well-formed request with a short
    // payload follows, so a server that rightly drops the first answers the second
    // (an echo of 4 bytes) and the wait ends there.
    let mut request = Vec::new();
    for body in [
        &[1u8, 0x40, 0x00][..],
        &[1, 0x00, 0x04, b'r', b'm', b'p', b't', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    ] {
        request.push(wire::RECORD_HEARTBEAT);
        request.extend_from_slice(&version.wire().to_be_bytes());
        request.extend_from_slice(&u16::try_from(body.len()).unwrap_or(0).to_be_bytes());
        request.extend_from_slice(body);
    }
    if stream.write_all(&request).await.is_err() {
        return Ok(Some(HeartbleedResult { vulnerable: false, leaked: 0 }));
    }
    let deadline = tokio::time::Instant::now() + p.timeout().min(Duration::from_secs(3));
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 8192];
    let leaked = loop {
        // A heartbeat response larger than the echo of the well-formed request is a leak;
        // its header is enough to know.
        let mut rest: &[u8] = &buf;
        let mut verdict = None;
        while let Some(header) = rest.get(..5) {
            let len = usize::from(u16::from_be_bytes([header[3], header[4]]));
            if header[0] == wire::RECORD_HEARTBEAT {
                verdict = Some(len.saturating_sub(3 + 4 + 16));
                break;
            }
            if header[0] == wire::RECORD_ALERT {
                verdict = Some(0);
                break;
            }
            rest = rest.get(5 + len..).unwrap_or_default();
        }
        if let Some(v) = verdict {
            break v;
        }
        match tokio::time::timeout_at(deadline, stream.read(&mut chunk)).await {
            Ok(Ok(n)) if n > 0 && buf.len() < MAX_FLIGHT => buf.extend_from_slice(&chunk[..n]),
            _ => break 0,
        }
    };
    Ok(Some(HeartbleedResult { vulnerable: leaked > 0, leaked }))
}
