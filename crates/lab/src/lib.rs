//! The lab: a simulated internet of fictional companies on 127.0.0.0/8, for the
//! scanner's tests, the demo and the benchmarks. A declarative file names hosts (each
//! on its own loopback address) and the services they run; [`Lab::up`] binds them all
//! and [`Lab::down`] leaves nothing listening.
//!
//! This first part serves the TCP services with real banners and first exchanges
//! (SSH, FTP, SMTP, Telnet, Redis, memcached, MySQL, PostgreSQL, RDP). DNS, TLS and
//! HTTP hosts and the companies' ground truth come next. The lab never connects out,
//! and refuses any address outside 127.0.0.0/8.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use serde::Deserialize;
use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

pub mod dns;
pub mod holder;
pub mod http;
mod services;
pub mod tls;

pub use dns::{DnsConfig, Failure, FailureKind, TrustAnchor, Zone};
pub use http::{HttpSpec, Page};
pub use labtls::{CertVariant, LegacyConfig, TlsVersion};
pub use services::ServiceKind;
pub use tls::TlsSpec;

#[derive(Debug, thiserror::Error)]
pub enum LabError {
    #[error("lab file: {0}")]
    File(String),
    #[error("{host}: {address} is not a loopback address (127.0.0.0/8)")]
    NotLoopback { host: String, address: Ipv4Addr },
    #[error("{host}: binding {addr}: {source}")]
    Bind {
        host: String,
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    /// Another socket has the address: most often another demo or lab still running.
    #[error("the lab's address {addr} ({host}) is taken by {holder}: stop it, or give this lab other addresses")]
    Taken { host: String, addr: SocketAddr, holder: String },
}

impl LabError {
    /// The error of binding `addr` for `host`: [`LabError::Taken`], with the process
    /// that holds the address when it can be found, if the address is in use.
    pub fn bind(host: &str, addr: SocketAddr, source: std::io::Error) -> LabError {
        if source.kind() != std::io::ErrorKind::AddrInUse {
            return LabError::Bind { host: host.to_owned(), addr, source };
        }
        LabError::Taken { host: host.to_owned(), addr, holder: holder_text(addr) }
    }
}

/// "process 1234 (rampart demo …)", or "another process" when it cannot be found.
pub fn holder_text(addr: SocketAddr) -> String {
    match holder::socket_holder(addr) {
        Some((pid, command)) => format!("process {pid} ({command})"),
        None => "another process".into(),
    }
}

/// A lab file: hosts and the services each runs.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabFile {
    /// The lab's authoritative DNS server, when the file has zones.
    #[serde(default)]
    pub dns: Option<DnsConfig>,
    #[serde(default)]
    pub zones: Vec<Zone>,
    #[serde(default)]
    pub hosts: Vec<Host>,
    /// The fictional companies and the findings a scan of each must produce.
    #[serde(default)]
    pub companies: Vec<LabCompany>,
    /// Companies the lab serves that nobody has imported: the demo leaves them out, so
    /// that onboarding a company by its domain is shown on a fresh machine (docs/LAB.md,
    /// "Applicants"). Their ground truth is written like the companies'.
    #[serde(default)]
    pub applicants: Vec<LabCompany>,
    /// Standard port → the port the lab listens on, for ports a non-root user cannot
    /// bind. Ports not listed are used as they are, except below 1024, which become
    /// 10000 + port.
    #[serde(default)]
    pub port_map: BTreeMap<u16, u16>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Host {
    /// The host's DNS name.
    pub name: String,
    pub address: Ipv4Addr,
    #[serde(default)]
    pub services: Vec<Service>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Service {
    /// The standard port the service is known by (22, 25, 6379, …).
    pub port: u16,
    pub kind: ServiceKind,
    /// The product version the service announces, e.g. `OpenSSH_7.4` or `6.0.5`.
    #[serde(default)]
    pub version: Option<String>,
    /// What an `http` or `https` service answers.
    #[serde(default)]
    pub http: Option<HttpSpec>,
    /// The TLS of an `https`, `tls` or `smtp` (STARTTLS) service; `https` and `tls`
    /// default to a valid certificate on a modern host.
    #[serde(default)]
    pub tls: Option<TlsSpec>,
}

impl Service {
    fn tls_spec(&self) -> Option<TlsSpec> {
        match (self.kind, &self.tls) {
            (_, Some(spec)) => Some(spec.clone()),
            (ServiceKind::Https | ServiceKind::Tls, None) => Some(TlsSpec {
                cert: CertVariant::Valid,
                versions: Vec::new(),
                legacy: None,
                sans: Vec::new(),
                organization: None,
            }),
            _ => None,
        }
    }
}

/// A company of the lab: its profile (the record `rampart import companies` reads, see
/// docs/IMPORT.md) and the ground truth of a scan.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabCompany {
    pub company: serde_json::Value,
    /// Every finding a scan of the company must produce.
    #[serde(default)]
    pub expected: Vec<ExpectedFinding>,
    /// Assets that must produce no finding.
    #[serde(default)]
    pub clean: Vec<String>,
}

/// One finding of the ground truth (codes and asset notation: docs/FINDINGS.md).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedFinding {
    pub risk_vector: String,
    pub asset: String,
    pub code: String,
    pub severity: String,
    /// The CVE a `vulnerabilities.cve` or `certificate_cve` finding names.
    #[serde(default)]
    pub cve: Option<String>,
    /// The basis of a `vulnerabilities.cve` finding's CVE on the SBOM (`model::CveBasis`),
    /// where the ground truth names it (a distribution's package).
    #[serde(default)]
    pub basis: Option<String>,
}

impl LabCompany {
    /// The company's social id, as its record gives it.
    pub fn social_id(&self) -> &str {
        self.company.get("social_id").and_then(|v| v.as_str()).unwrap_or("")
    }
}

/// The built-in lab: the fictional companies, their internet presence and the ground
/// truth of their scans (docs/LAB.md).
pub const BUILTIN: &str = include_str!("../lab.json");

/// Real NVD records of the software the built-in lab runs, as `(what, gzipped file)` to
/// import in order (`vulndb::import::nvd_bytes_all`): every record of the NVD data in
/// ../shared/data whose configurations name a product the lab's software is detected as
/// (under any of its names), and the CVEs the lab's findings name, so that a machine
/// without the NVD feeds still answers with real records. An NVD 1.1 feed, then an NVD
/// 2.0 feed of the records whose 2.0 version superseded the 1.1 one or that no 1.1 feed
/// holds. NVD data is public (nvd.nist.gov); how the files are made:
/// `crates/lab/data/README.md`.
pub const NVD_RECORDS: &[(&str, &[u8])] = &[
    ("the lab's NVD 1.1 records", include_bytes!("../data/nvd-lab.json.gz")),
    ("the lab's NVD 2.0 records", include_bytes!("../data/nvd-lab-2.0.json.gz")),
];

/// The CISA Known Exploited Vulnerabilities catalogue (JSON, gzipped), version
/// 2025.08.25, as CISA publishes it (CC0 1.0; `crates/lab/data/README.md`): what
/// `vulndb::import::kev_bytes` reads.
pub const KEV_CATALOG: &[u8] = include_bytes!("../data/kev.json.gz");

/// A real FIRST EPSS sample: the first rows of a daily scores file (CSV), as published
/// (`crates/lab/data/README.md`; it covers CVE-1999-* only): what
/// `vulndb::import::epss_bytes` reads.
pub const EPSS_SAMPLE: &[u8] = include_bytes!("../data/epss-sample.csv");

/// The software vendors' own advisories for the lab's software (Apache httpd, nginx,
/// OpenSSL, npm jquery), verbatim, as a gzipped JSON object of file name → text
/// (`crates/lab/data/README.md`): what `vulndb::import::advisory_bundle` reads.
pub const ADVISORIES: &[u8] = include_bytes!("../data/advisories-lab.json.gz");

/// The endoflife.date lifecycles of the lab's software (data/README.md): what
/// `rampart import eol` reads, for the sbom component's findings on a machine without
/// ../shared/data.
pub const EOL_PRODUCTS: &str = include_str!("../data/eol-lab.json");

/// Fictional incident history of lab companies in VERIS format (file name, text): dates,
/// actions, data totals and references to the companies' lab sites. `rampart demo`
/// imports them (`intel::link::import_veris_texts`); each is linked by the victim's name.
pub const INCIDENTS: &[(&str, &str)] = &[
    ("granite-valley-water-2025.json", include_str!("../incidents/granite-valley-water-2025.json")),
    ("brightwater-college-2024.json", include_str!("../incidents/brightwater-college-2024.json")),
    ("tidepool-games-2025.json", include_str!("../incidents/tidepool-games-2025.json")),
    ("vantage-aerostructures-2023.json", include_str!("../incidents/vantage-aerostructures-2023.json")),
    ("kestrel-logistics-2024.json", include_str!("../incidents/kestrel-logistics-2024.json")),
];

/// The lab company the demo's Monitor key is bound to: it has a subsidiary
/// (kestrel-coldchain), findings in all twelve components (with [`EOL_PRODUCTS`]
/// imported), SBOM CVEs and an incident.
pub const DEMO_MONITOR_COMPANY: &str = "kestrel-logistics";

impl LabFile {
    /// The built-in lab file.
    pub fn builtin() -> Result<Self, LabError> {
        Self::parse(BUILTIN)
    }

    /// The built-in lab moved to 127.`octet`.*.* (hosts, DNS server and zone records),
    /// for tests that run beside another copy of it.
    pub fn builtin_at(octet: u8) -> Result<Self, LabError> {
        Self::parse(
            &BUILTIN
                .replace("127.78.", &format!("127.{octet}."))
                .replace("127.53.0.53", &format!("127.{octet}.255.53")),
        )
    }

    pub fn parse(json: &str) -> Result<Self, LabError> {
        let file: LabFile = serde_json::from_str(json).map_err(|e| LabError::File(e.to_string()))?;
        for h in &file.hosts {
            if h.address.octets()[0] != 127 {
                return Err(LabError::NotLoopback { host: h.name.clone(), address: h.address });
            }
        }
        let mut addresses = std::collections::BTreeSet::new();
        for h in &file.hosts {
            if !addresses.insert(h.address) {
                return Err(LabError::File(format!("{}: address {} is used by another host", h.name, h.address)));
            }
            for s in &h.services {
                match (s.kind, &s.http) {
                    (ServiceKind::Http | ServiceKind::Https, Some(spec)) => {
                        spec.validate(&h.name).map_err(LabError::File)?
                    }
                    (ServiceKind::Http | ServiceKind::Https, None) => {}
                    (kind, Some(_)) => {
                        return Err(LabError::File(format!("{}:{}: {kind:?} takes no \"http\"", h.name, s.port)));
                    }
                    _ => {}
                }
                match (s.kind, &s.tls) {
                    (ServiceKind::Https | ServiceKind::Tls | ServiceKind::Smtp, Some(spec)) => {
                        spec.check(&h.name).map_err(LabError::File)?
                    }
                    (_, None) => {}
                    (kind, Some(_)) => {
                        return Err(LabError::File(format!("{}:{}: {kind:?} takes no \"tls\"", h.name, s.port)));
                    }
                }
                if s.kind == ServiceKind::Smtp && s.tls.as_ref().is_some_and(|t| t.legacy.is_some()) {
                    return Err(LabError::File(format!("{}:{}: STARTTLS is served by rustls only", h.name, s.port)));
                }
            }
        }
        for c in file.every_company() {
            if c.social_id().is_empty() {
                return Err(LabError::File("a company has no social_id".to_owned()));
            }
        }
        if let Some(dns) = &file.dns {
            if dns.address.octets()[0] != 127 {
                return Err(LabError::NotLoopback { host: dns::NS_NAME.to_owned(), address: dns.address });
            }
        } else if !file.zones.is_empty() {
            return Err(LabError::File("zones need a \"dns\" server address".to_owned()));
        }
        Ok(file)
    }

    /// The companies and the applicants: every company the lab has a ground truth for.
    pub fn every_company(&self) -> impl Iterator<Item = &LabCompany> {
        self.companies.iter().chain(&self.applicants)
    }

    /// Every port the lab serves (DNS included), standard → lab port: the map a scanner
    /// in lab mode connects by.
    pub fn effective_port_map(&self) -> BTreeMap<u16, u16> {
        let mut map = self.port_map.clone();
        for s in self.hosts.iter().flat_map(|h| &h.services) {
            map.insert(s.port, self.lab_port(s.port));
        }
        if let Some(dns) = &self.dns {
            map.insert(dns.port, self.lab_port(dns.port));
        }
        map
    }

    /// The port the lab listens on for a standard port.
    pub fn lab_port(&self, standard: u16) -> u16 {
        match self.port_map.get(&standard) {
            Some(p) => *p,
            None if standard < 1024 => 10_000 + standard,
            None => standard,
        }
    }
}

/// Accepts clients until the lab goes down, each served by `serve` within the client
/// timeout.
async fn accept_loop<F, Fut>(listener: TcpListener, serve: F)
where
    F: Fn(tokio::net::TcpStream) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let mut clients = JoinSet::new();
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of descriptors or the like: let it pass rather than spin.
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let served = serve(stream);
        clients.spawn(async move {
            let _ = tokio::time::timeout(CLIENT_TIMEOUT, served).await;
        });
        // Reap finished clients so the set stays small.
        while clients.try_join_next().is_some() {}
    }
}

/// Elasticsearch's root document, as `GET /` answers it.
fn elasticsearch(host: &str, version: Option<&str>) -> HttpSpec {
    let v = version.unwrap_or("6.8.0");
    let body = serde_json::json!({
        "name": host,
        "cluster_name": "lab",
        "cluster_uuid": "lab-cluster-0001",
        "version": {"number": v, "build_flavor": "default", "lucene_version": "7.7.0"},
        "tagline": "You Know, for Search"
    });
    HttpSpec {
        headers: [("content-type".to_owned(), "application/json; charset=UTF-8".to_owned())].into(),
        pages: vec![Page { path: "/".to_owned(), status: 200, headers: Default::default(), body: body.to_string() }],
        redirect: None,
        any_path: false,
    }
}

/// What a scanner in lab mode needs, as `Lab::write_scanner_files` writes it to
/// `scanner.json` beside `lab-ca.pem` and `trust-anchor.txt`.
#[derive(Debug, Clone, serde::Serialize, Deserialize)]
pub struct ScannerFile {
    pub resolver: SocketAddr,
    /// Every port the lab serves: standard → lab port.
    pub port_map: BTreeMap<u16, u16>,
}

impl ScannerFile {
    pub const NAME: &'static str = "scanner.json";
}

/// A running lab.
pub struct Lab {
    tasks: JoinSet<()>,
    dns: Option<DnsThread>,
    /// Where the DNS server listens (UDP and TCP), when the lab has zones.
    pub resolver: Option<SocketAddr>,
    /// The DNSSEC trust anchors of the lab's signed zones.
    pub trust_anchors: Vec<TrustAnchor>,
    /// The lab CA's root certificate (PEM), when a service speaks TLS: the trust anchor
    /// a scanner loads in lab mode.
    pub ca_root_pem: Option<String>,
    /// The same root in DER.
    pub ca_root_der: Option<Vec<u8>>,
    /// Every service: (host name, standard port, where it listens).
    pub endpoints: Vec<(String, u16, SocketAddr)>,
}

/// The lab's DNS server, on a thread of its own with a single-threaded runtime, as one
/// authoritative server process would run beside the rest: its requests never wait
/// behind the web and TLS services, and (with two cores) a scanner under test keeps the
/// other core to itself instead of trading wake-ups between threads with it. Dropping
/// `stop` ends it; `done` says the sockets are closed.
struct DnsThread {
    stop: tokio::sync::oneshot::Sender<()>,
    done: tokio::sync::oneshot::Receiver<()>,
}

impl DnsThread {
    /// Serves `lab_dns` on the bound sockets from a new thread.
    fn start(lab_dns: dns::LabDns, udp: std::net::UdpSocket, tcp: std::net::TcpListener) -> std::io::Result<DnsThread> {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (finished, done) = tokio::sync::oneshot::channel::<()>();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        std::thread::Builder::new().name("lab-dns".to_owned()).spawn(move || {
            runtime.block_on(async move {
                let sockets = tokio::net::UdpSocket::from_std(udp).and_then(|u| Ok((u, TcpListener::from_std(tcp)?)));
                match sockets {
                    Ok((udp, tcp)) => {
                        let mut server = hickory_server::Server::new(lab_dns);
                        server.register_socket(udp);
                        server.register_listener(tcp, CLIENT_TIMEOUT, 64 * 1024);
                        // A dropped sender (the lab dropped without `down`) stops it too.
                        let _ = stopped.await;
                        if let Err(e) = server.shutdown_gracefully().await {
                            tracing::debug!(error = %e, "lab DNS server shut down");
                        }
                    }
                    Err(e) => tracing::error!(error = %e, "lab DNS sockets"),
                }
            });
            drop(runtime);
            let _ = finished.send(());
        })?;
        Ok(DnsThread { stop, done })
    }

    async fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.done.await;
    }
}

/// How long a lab service waits for a client before it closes the connection.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(10);

impl Lab {
    /// Binds every service of `file` and starts serving.
    pub async fn up(file: &LabFile) -> Result<Lab, LabError> {
        let mut tasks = JoinSet::new();
        let mut endpoints = Vec::new();
        let (mut dns_server, mut resolver, mut trust_anchors) = (None, None, Vec::new());
        let mut ca: Option<labtls::LabCa> = None;
        if let Some(config) = &file.dns {
            let hosts: Vec<(String, Ipv4Addr)> = file.hosts.iter().map(|h| (h.name.clone(), h.address)).collect();
            let lab_dns = dns::LabDns::build(&file.zones, &hosts, config.address)?;
            trust_anchors = lab_dns.trust_anchors.clone();
            let addr = SocketAddr::from((config.address, file.lab_port(config.port)));
            let udp = std::net::UdpSocket::bind(addr).map_err(|e| LabError::bind(dns::NS_NAME, addr, e))?;
            let addr = udp.local_addr().unwrap_or(addr);
            let tcp = std::net::TcpListener::bind(addr).map_err(|e| LabError::bind(dns::NS_NAME, addr, e))?;
            let start = |udp: std::net::UdpSocket, tcp: std::net::TcpListener| {
                udp.set_nonblocking(true)?;
                tcp.set_nonblocking(true)?;
                DnsThread::start(lab_dns, udp, tcp)
            };
            dns_server = Some(start(udp, tcp).map_err(|source| LabError::Bind {
                host: dns::NS_NAME.to_owned(),
                addr,
                source,
            })?);
            resolver = Some(addr);
        }
        for host in &file.hosts {
            for service in &host.services {
                let addr = SocketAddr::from((host.address, file.lab_port(service.port)));
                let listener = TcpListener::bind(addr).await.map_err(|e| LabError::bind(&host.name, addr, e))?;
                let addr = listener.local_addr().unwrap_or(addr);
                endpoints.push((host.name.clone(), service.port, addr));
                let (kind, version, name) = (service.kind, service.version.clone(), host.name.clone());
                let tls = match service.tls_spec() {
                    Some(spec) => {
                        if ca.is_none() {
                            ca = Some(labtls::LabCa::new().map_err(|e| LabError::File(format!("lab CA: {e}")))?);
                        }
                        let ca = ca.as_ref().ok_or_else(|| LabError::File("lab CA".to_owned()))?;
                        Some(spec.build(ca, &name).map_err(LabError::File)?)
                    }
                    None => None,
                };
                let web = match kind {
                    ServiceKind::Http | ServiceKind::Https => Some(Arc::new(service.http.clone().unwrap_or_default())),
                    ServiceKind::Elasticsearch => Some(Arc::new(elasticsearch(&name, version.as_deref()))),
                    _ => None,
                };
                let task = match (kind, tls, web) {
                    (_, Some(tls::Tls::Legacy(config, cert)), _) => accept_loop(listener, move |stream| {
                        let (config, cert) = (config.clone(), cert.clone());
                        async move {
                            if let Err(e) = labtls::serve_legacy(stream, &config, &cert).await {
                                tracing::debug!(error = %e, "lab legacy TLS client ended");
                            }
                        }
                    })
                    .boxed(),
                    (ServiceKind::Https, Some(tls::Tls::Modern(acceptor)), Some(spec)) => {
                        accept_loop(listener, move |stream| {
                            let (acceptor, spec) = (acceptor.clone(), spec.clone());
                            async move {
                                match acceptor.accept(stream).await {
                                    Ok(tls) => {
                                        if let Err(e) = http::serve(tls, spec).await {
                                            tracing::debug!(error = %e, "lab web client ended");
                                        }
                                    }
                                    Err(e) => tracing::debug!(error = %e, "lab TLS handshake failed"),
                                }
                            }
                        })
                        .boxed()
                    }
                    (ServiceKind::Tls, Some(tls::Tls::Modern(acceptor)), _) => accept_loop(listener, move |stream| {
                        let acceptor = acceptor.clone();
                        async move {
                            // The handshake, then the connection is held until the client leaves.
                            if let Ok(mut tls) = acceptor.accept(stream).await {
                                let mut sink = [0u8; 1024];
                                while matches!(tls.read(&mut sink).await, Ok(n) if n > 0) {}
                            }
                        }
                    })
                    .boxed(),
                    (_, tls, Some(spec)) if tls.is_none() => accept_loop(listener, move |stream| {
                        let spec = spec.clone();
                        async move {
                            if let Err(e) = http::serve(stream, spec).await {
                                tracing::debug!(error = %e, "lab web client ended");
                            }
                        }
                    })
                    .boxed(),
                    (_, tls, _) => {
                        let acceptor = match tls {
                            Some(tls::Tls::Modern(a)) => Some(a),
                            _ => None,
                        };
                        accept_loop(listener, move |stream| {
                            let (version, name, acceptor) = (version.clone(), name.clone(), acceptor.clone());
                            async move {
                                if let Err(e) = services::serve(kind, stream, version.as_deref(), &name, acceptor).await
                                {
                                    tracing::debug!(error = %e, "lab client ended");
                                }
                            }
                        })
                        .boxed()
                    }
                };
                tasks.spawn(task);
            }
        }
        let ca_root_pem = ca.as_ref().map(labtls::LabCa::root_pem);
        let ca_root_der = ca.as_ref().map(labtls::LabCa::root_der);
        Ok(Lab { tasks, dns: dns_server, resolver, trust_anchors, ca_root_pem, ca_root_der, endpoints })
    }

    /// Writes `scanner.json`, `lab-ca.pem` and `trust-anchor.txt` to `dir` (created):
    /// what `rampart probe … --lab DIR` reads. Returns the paths written.
    pub fn write_scanner_files(
        &self,
        file: &LabFile,
        dir: &std::path::Path,
    ) -> std::io::Result<Vec<std::path::PathBuf>> {
        std::fs::create_dir_all(dir)?;
        let mut written = Vec::new();
        if let Some(resolver) = self.resolver {
            let port_map = file.effective_port_map();
            let text =
                serde_json::to_string_pretty(&ScannerFile { resolver, port_map }).map_err(std::io::Error::other)?;
            let path = dir.join(ScannerFile::NAME);
            std::fs::write(&path, text)?;
            written.push(path);
        }
        if let Some(pem) = &self.ca_root_pem {
            let path = dir.join("lab-ca.pem");
            std::fs::write(&path, pem)?;
            written.push(path);
        }
        if !self.trust_anchors.is_empty() {
            let path = dir.join("trust-anchor.txt");
            std::fs::write(&path, self.trust_anchor_text())?;
            written.push(path);
        }
        Ok(written)
    }

    /// The DNSSEC trust anchors as a trust-anchor file (DNSKEY lines).
    pub fn trust_anchor_text(&self) -> String {
        self.trust_anchors.iter().map(|a| a.dnskey_line() + "\n").collect()
    }

    /// Where a host's service listens.
    pub fn endpoint(&self, host: &str, standard_port: u16) -> Option<SocketAddr> {
        self.endpoints.iter().find(|(h, p, _)| h == host && *p == standard_port).map(|(_, _, a)| *a)
    }

    /// Stops every service; nothing is left listening when this returns.
    pub async fn down(mut self) {
        if let Some(server) = self.dns.take() {
            server.stop().await;
        }
        self.tasks.abort_all();
        while self.tasks.join_next().await.is_some() {}
    }
}
