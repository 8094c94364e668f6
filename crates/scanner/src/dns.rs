//! The scanner's DNS client: hickory's resolver pointed at the system's servers or, in
//! lab mode, at one given server; answers without caching between scans, with a
//! timeout on every query. NXDOMAIN and "no records" are answers (an empty list), not
//! errors: the SPF void-lookup rule needs to tell them apart from a server failure.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use hickory_resolver::config::{NameServerConfig, ResolverConfig, ResolverOpts};
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::proto::rr::{RData, Record, RecordType};
use hickory_resolver::{Resolver, TokioResolver};

/// How long one query may take (each of `ATTEMPTS` tries).
const QUERY_TIMEOUT: Duration = Duration::from_secs(2);
const ATTEMPTS: usize = 2;

#[derive(Debug, thiserror::Error)]
pub enum DnsError {
    #[error("DNS: {0}")]
    Failed(String),
    #[error("DNS name {0:?} is not valid")]
    BadName(String),
}

#[derive(Clone)]
pub struct Dns {
    resolver: TokioResolver,
}

impl std::fmt::Debug for Dns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Dns")
    }
}

impl Dns {
    /// A client of one name server (the lab's, or any given `--resolver IP:PORT`),
    /// over UDP with TCP for truncated answers.
    pub fn with_server(server: SocketAddr) -> Result<Dns, DnsError> {
        let mut ns = NameServerConfig::udp_and_tcp(server.ip());
        for c in &mut ns.connections {
            c.port = server.port();
        }
        Self::build(ResolverConfig::from_parts(None, vec![], vec![ns]))
    }

    /// A client of the system's resolvers (/etc/resolv.conf).
    pub fn system() -> Result<Dns, DnsError> {
        let builder = Resolver::builder_tokio().map_err(|e| DnsError::Failed(e.to_string()))?;
        let mut opts = ResolverOpts::default();
        tune(&mut opts);
        let resolver = builder.with_options(opts).build().map_err(|e| DnsError::Failed(e.to_string()))?;
        Ok(Dns { resolver })
    }

    fn build(config: ResolverConfig) -> Result<Dns, DnsError> {
        let mut opts = ResolverOpts::default();
        tune(&mut opts);
        let resolver = Resolver::builder_with_config(config, TokioRuntimeProvider::default())
            .with_options(opts)
            .build()
            .map_err(|e| DnsError::Failed(e.to_string()))?;
        Ok(Dns { resolver })
    }

    /// The records of `kind` at `name` (absolute or not; a trailing dot is added).
    /// The records of `kind` at `name`; none when the name or the type does not exist.
    pub async fn lookup(&self, name: &str, kind: RecordType) -> Result<Vec<Record>, DnsError> {
        let name = name.trim_end_matches('.');
        if name.is_empty() || name.len() > 253 {
            return Err(DnsError::BadName(name.to_owned()));
        }
        match self.resolver.lookup(format!("{name}."), kind).await {
            Ok(lookup) => Ok(lookup.answers().iter().filter(|r| r.record_type() == kind).cloned().collect()),
            Err(e) if e.is_nx_domain() || e.is_no_records_found() => Ok(Vec::new()),
            Err(e) => Err(DnsError::Failed(format!("{name} {kind}: {e}"))),
        }
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
        Ok(mx.into_iter().map(|(_, h)| h).filter(|h| !h.is_empty()).collect())
    }
}

fn tune(opts: &mut ResolverOpts) {
    opts.timeout = QUERY_TIMEOUT;
    opts.attempts = ATTEMPTS;
    // Every scan sees the zone as it is now.
    opts.cache_size = 0;
}

/// A DNS name as findings write it: lower case, no trailing dot.
pub fn host_name(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}
