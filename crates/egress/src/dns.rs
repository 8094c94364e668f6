//! The scanner's DNS client: questions to the system's name servers or, in lab mode, to
//! one given server, over the long-lived sockets of [`crate::wire`]; no cache, so every
//! scan sees the zones as they are now; a timeout on every try. NXDOMAIN and "no
//! records" are answers (an empty list), not errors: the SPF void-lookup rule needs to
//! tell them apart from a server failure. A CNAME is followed (up to 8 links) when the
//! server's answer stops at it.

use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;
use std::time::Duration;

use hickory_resolver::proto::op::{Edns, Message, Query, ResponseCode};
use hickory_resolver::proto::rr::{Name, RData, Record, RecordType};

use crate::wire::{ExchangeError, Exchanger};

/// How long one try may take, and how many tries a question gets.
const QUERY_TIMEOUT: Duration = Duration::from_secs(2);
const ATTEMPTS: usize = 2;
/// The EDNS payload size announced (the DNS flag day 2020 value).
const PAYLOAD: u16 = 1232;
/// CNAME links followed at most.
const MAX_CNAME_LINKS: usize = 8;

#[derive(Debug, thiserror::Error)]
pub enum DnsError {
    #[error("DNS: {0}")]
    Failed(String),
    #[error("DNS name {0:?} is not valid")]
    BadName(String),
    /// The name does not exist (NXDOMAIN, so no SOA either): a company domain like this
    /// is not rated — every "missing record" verdict on it would be false.
    #[error("the domain {0} does not exist (NXDOMAIN): nothing to rate; check the company's domain")]
    NoSuchDomain(String),
}

#[derive(Clone, Debug)]
pub struct Dns {
    exchanger: Exchanger,
}

impl Dns {
    /// A client of one name server (the lab's, or any given `--resolver IP:PORT`),
    /// over UDP with TCP for truncated answers.
    pub fn with_server(server: SocketAddr) -> Result<Dns, DnsError> {
        Ok(Dns { exchanger: Exchanger::new(vec![server], QUERY_TIMEOUT, ATTEMPTS) })
    }

    /// A client of the system's name servers (/etc/resolv.conf), tried in turn.
    pub fn system() -> Result<Dns, DnsError> {
        let (config, _) =
            hickory_resolver::system_conf::read_system_conf().map_err(|e| DnsError::Failed(e.to_string()))?;
        let mut servers = Vec::new();
        for ns in config.name_servers() {
            let port = ns.connections.first().map_or(53, |c| c.port);
            let addr = SocketAddr::new(ns.ip, port);
            if !servers.contains(&addr) {
                servers.push(addr);
            }
        }
        if servers.is_empty() {
            return Err(DnsError::Failed("no name server in the system configuration".into()));
        }
        let tries = ATTEMPTS.max(servers.len());
        Ok(Dns { exchanger: Exchanger::new(servers, QUERY_TIMEOUT, tries) })
    }

    /// The records of `kind` at `name`; none when the name or the type does not exist.
    pub async fn lookup(&self, name: &str, kind: RecordType) -> Result<Vec<Record>, DnsError> {
        let trimmed = name.trim_end_matches('.');
        if trimmed.is_empty() || trimmed.len() > 253 {
            return Err(DnsError::BadName(trimmed.to_owned()));
        }
        let mut owner = Name::from_str(&format!("{trimmed}.")).map_err(|_| DnsError::BadName(trimmed.to_owned()))?;
        for _ in 0..=MAX_CNAME_LINKS {
            let answer = self.ask(&owner, kind).await?;
            let records: Vec<Record> = answer.answers.iter().filter(|r| r.record_type() == kind).cloned().collect();
            if !records.is_empty() || kind == RecordType::CNAME {
                return Ok(records);
            }
            // The answer stops at a CNAME (its target lies in another zone): follow it.
            let Some(target) = last_cname(&answer.answers, &owner) else { return Ok(Vec::new()) };
            owner = target;
        }
        Err(DnsError::Failed(format!("{trimmed} {kind}: more than {MAX_CNAME_LINKS} CNAME links")))
    }

    /// One question; NXDOMAIN is an empty answer, any other failure code an error.
    async fn ask(&self, name: &Name, kind: RecordType) -> Result<Message, DnsError> {
        let mut query = Message::query();
        query.metadata.recursion_desired = true;
        query.add_query(Query::query(name.clone(), kind));
        let mut edns = Edns::new();
        edns.set_max_payload(PAYLOAD);
        query.set_edns(edns);
        let fail = |e: String| DnsError::Failed(format!("{name} {kind}: {e}"));
        let answer = self.exchanger.exchange(query, name, kind).await.map_err(|e| match e {
            ExchangeError::Failed(e) | ExchangeError::Malformed(e) => fail(e),
        })?;
        match answer.metadata.response_code {
            ResponseCode::NoError | ResponseCode::NXDomain => Ok(answer),
            code => Err(fail(format!("the server answered {code}"))),
        }
    }

    /// Does `name` (or the end of its CNAME chain) not exist (NXDOMAIN)? A name with
    /// records of any type, or without addresses but existing (NODATA), is not dangling.
    pub async fn nxdomain(&self, name: &str) -> Result<bool, DnsError> {
        let trimmed = name.trim_end_matches('.');
        if trimmed.is_empty() || trimmed.len() > 253 {
            return Err(DnsError::BadName(trimmed.to_owned()));
        }
        let mut owner = Name::from_str(&format!("{trimmed}.")).map_err(|_| DnsError::BadName(trimmed.to_owned()))?;
        for _ in 0..=MAX_CNAME_LINKS {
            let answer = self.ask(&owner, RecordType::A).await?;
            // RFC 6604: the code speaks of the last name of the chain in the answer.
            if answer.metadata.response_code == ResponseCode::NXDomain {
                return Ok(true);
            }
            if answer.answers.iter().any(|r| r.record_type() == RecordType::A) {
                return Ok(false);
            }
            let Some(target) = last_cname(&answer.answers, &owner) else { return Ok(false) };
            owner = target;
        }
        Err(DnsError::Failed(format!("{trimmed}: more than {MAX_CNAME_LINKS} CNAME links")))
    }

    /// The TXT records at `name`, each the concatenation of its character-strings
    /// (RFC 7208 §3.3), lossily decoded.
    pub async fn txt(&self, name: &str) -> Result<Vec<String>, DnsError> {
        Ok(self
            .lookup(name, RecordType::TXT)
            .await?
            .iter()
            .filter_map(|r| match &r.data {
                RData::TXT(txt) => {
                    Some(txt.txt_data.iter().map(|s| String::from_utf8_lossy(s)).collect::<Vec<_>>().concat())
                }
                _ => None,
            })
            .collect())
    }

    /// The addresses of `name` (A and AAAA).
    pub async fn addresses(&self, name: &str) -> Result<Vec<IpAddr>, DnsError> {
        let mut out = Vec::new();
        for kind in [RecordType::A, RecordType::AAAA] {
            for r in self.lookup(name, kind).await? {
                match r.data {
                    RData::A(a) => out.push(IpAddr::V4(a.0)),
                    RData::AAAA(a) => out.push(IpAddr::V6(a.0)),
                    _ => {}
                }
            }
        }
        Ok(out)
    }

    /// The MX targets of `name`, lowest preference first (lower case, no trailing dot).
    /// A target that is not a host name (`model::Domain` refuses it: an escaped dot, an
    /// address-like name) is left out: probes connect to these hosts. Discovery notes it.
    pub async fn mx(&self, name: &str) -> Result<Vec<String>, DnsError> {
        let mut mx: Vec<(u16, String)> = self
            .lookup(name, RecordType::MX)
            .await?
            .iter()
            .filter_map(|r| match &r.data {
                RData::MX(mx) => Some((mx.preference, host_name(&mx.exchange.to_ascii()))),
                _ => None,
            })
            .collect();
        mx.sort();
        Ok(mx.into_iter().map(|(_, h)| h).filter(|h| model::Domain::parse(h).is_ok()).collect())
    }
}

/// The end of the CNAME chain from `owner` in `records`.
fn last_cname(records: &[Record], owner: &Name) -> Option<Name> {
    let mut at = owner.clone();
    let mut moved = false;
    for _ in 0..=MAX_CNAME_LINKS {
        let next = records.iter().find_map(|r| match &r.data {
            RData::CNAME(c) if r.name == at => Some(c.0.clone()),
            _ => None,
        });
        match next {
            Some(n) => {
                at = n;
                moved = true;
            }
            None => break,
        }
    }
    moved.then_some(at)
}

/// A DNS name as findings write it: lower case, no trailing dot.
pub fn host_name(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}
