//! open_ports: a TCP connect scan of a curated port list, a bounded-time banner grab,
//! and active identification where no banner is volunteered (HTTP, TLS, Redis `PING` /
//! `INFO`, memcached `version`, the MySQL handshake, a PostgreSQL SSLRequest, MongoDB
//! `isMaster`, SMB2 NEGOTIATE, an RDP X.224 connection request). Each open port gets a
//! service and, where the answer says, a product and version; `crate::checks::open_ports`
//! judges the exposures.

use std::time::Duration;

use crate::guard::Connection;
use serde::Serialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::guard::{Guard, USER_AGENT};

/// The default list: risky services, remote administration, file sharing, databases
/// and caches, and the usual web and mail ports.
pub const DEFAULT_PORTS: &[u16] = &[
    21, 22, 23, 25, 80, 110, 111, 135, 139, 143, 389, 443, 445, 465, 587, 636, 873, 993, 995, 1080, 1433, 1521, 1723,
    2049, 2375, 2376, 3000, 3306, 3389, 4369, 5000, 5432, 5601, 5672, 5900, 5984, 6379, 6443, 7001, 8000, 8008, 8080,
    8081, 8443, 8888, 9000, 9042, 9090, 9200, 9300, 10250, 11211, 15672, 27017, 50000,
];

/// The ports of a quick scan: remote access, mail, the web, file sharing and the
/// databases most often left open.
pub const QUICK_PORTS: &[u16] =
    &[21, 22, 23, 25, 80, 443, 445, 1433, 3306, 3389, 5432, 5900, 6379, 8080, 8443, 9200, 11211, 27017];

/// Ports scanned at once on one host (the guard's per-host limit also applies).
const CONCURRENT_PORTS: usize = 16;
/// How long an open port is given to volunteer a banner.
const BANNER_WAIT: Duration = Duration::from_millis(600);
/// The most of one answer read.
const MAX_ANSWER: usize = 16 * 1024;

/// An open port and what answers there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OpenPort {
    pub host: String,
    pub ip: std::net::IpAddr,
    /// The standard port (the lab's mapped one is the guard's business).
    pub port: u16,
    /// `ssh`, `ftp`, `smtp`, `http`, `tls`, `redis`, … or `unknown`.
    pub service: String,
    pub product: Option<String>,
    pub version: Option<String>,
    /// What identified it: the banner, or the answer to a probe (printable, bounded).
    pub banner: String,
}

/// What one probe concluded.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Identified {
    service: &'static str,
    product: Option<String>,
    version: Option<String>,
    banner: String,
}

/// The printable ASCII of an answer (control bytes and anything else become spaces),
/// whitespace collapsed, at most 200 characters.
fn printable(bytes: &[u8]) -> String {
    let text: String =
        bytes.iter().take(400).map(|b| if b.is_ascii_graphic() { char::from(*b) } else { ' ' }).collect();
    let mut out = text.split_whitespace().collect::<Vec<_>>().join(" ");
    out.truncate(200);
    out
}

/// `OpenSSH_8.2p1 Ubuntu-4ubuntu0.5` → (OpenSSH, 8.2p1).
fn ssh_software(banner: &str) -> (Option<String>, Option<String>) {
    let software = banner.trim().splitn(3, '-').nth(2).unwrap_or("");
    let first = software.split_whitespace().next().unwrap_or("");
    match first.split_once('_') {
        Some((p, v)) => (Some(p.to_owned()), Some(v.to_owned()).filter(|v| !v.is_empty())),
        None => (Some(first.to_owned()).filter(|p| !p.is_empty()), None),
    }
}

/// The first `word/version` or `word version` pair whose version starts with a digit.
fn product_version(text: &str, products: &[&str]) -> (Option<String>, Option<String>) {
    let words: Vec<&str> =
        text.split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == ',').filter(|w| !w.is_empty()).collect();
    for (i, w) in words.iter().enumerate() {
        for p in products {
            if let Some(rest) = w.strip_prefix(p) {
                let version = match rest.strip_prefix('/').or_else(|| rest.strip_prefix('_')) {
                    Some(v) => Some(v),
                    None if rest.is_empty() => words.get(i + 1).copied(),
                    None => None,
                };
                let version = version
                    .filter(|v| v.starts_with(|c: char| c.is_ascii_digit()))
                    .map(|v| v.trim_end_matches(|c: char| !c.is_ascii_alphanumeric()).to_owned());
                return (Some((*p).to_owned()), version);
            }
        }
    }
    (None, None)
}

/// After the first bytes of an answer, how long more bytes are waited for.
const GRACE: Duration = Duration::from_millis(40);

/// How long the rest of an answer may take after its first bytes, in all: a service
/// that trickles a byte within every [`GRACE`] ends here.
const REST_OF_ANSWER: Duration = Duration::from_secs(2);

/// Reads an answer: the first bytes within `wait`, then whatever follows without a
/// pause longer than [`GRACE`] (or until the peer closes, [`MAX_ANSWER`], or
/// [`REST_OF_ANSWER`] after the first bytes).
async fn read_answer(stream: &mut Connection, wait: Duration) -> Vec<u8> {
    let mut out = Vec::new();
    let mut chunk = [0u8; 4096];
    let mut rest_until = None;
    while out.len() < MAX_ANSWER {
        let now = tokio::time::Instant::now();
        let until = match rest_until {
            None => now + wait,
            Some(end) => (now + GRACE).min(end),
        };
        match tokio::time::timeout_at(until, stream.read(&mut chunk)).await {
            Ok(Ok(n)) if n > 0 => {
                out.extend_from_slice(&chunk[..n.min(MAX_ANSWER - out.len())]);
                rest_until.get_or_insert(tokio::time::Instant::now() + REST_OF_ANSWER);
            }
            _ => break,
        }
    }
    out
}

/// Sends `request` and reads the answer.
async fn exchange(stream: &mut Connection, request: &[u8], wait: Duration) -> Vec<u8> {
    if stream.write_all(request).await.is_err() {
        return Vec::new();
    }
    read_answer(stream, wait).await
}

/// A banner the server sent by itself.
fn from_banner(b: &[u8], port: u16) -> Option<Identified> {
    let text = String::from_utf8_lossy(b);
    let banner = printable(b);
    if text.starts_with("SSH-") {
        let (product, version) = ssh_software(text.lines().next().unwrap_or(""));
        return Some(Identified { service: "ssh", product, version, banner });
    }
    if b.first() == Some(&255) && b.get(1).is_some_and(|c| (251..=254).contains(c)) {
        return Some(Identified { service: "telnet", product: None, version: None, banner });
    }
    // MySQL: a packet (3-byte length, sequence 0) holding protocol 10 and the version.
    if b.len() > 5 && b[3] == 0 && b[4] == 10 {
        let end = b[5..].iter().position(|c| *c == 0).map(|p| 5 + p)?;
        let version_text = String::from_utf8_lossy(&b[5..end]).into_owned();
        let version = version_text.split('-').next().map(str::to_owned).filter(|v| !v.is_empty());
        let product = if version_text.to_ascii_lowercase().contains("mariadb") { "MariaDB" } else { "MySQL" };
        return Some(Identified { service: "mysql", product: Some(product.into()), version, banner: version_text });
    }
    if text.starts_with("220") {
        let upper = text.to_ascii_uppercase();
        if upper.contains("FTP") || port == 21 {
            let (product, version) =
                product_version(&text, &["vsFTPd", "ProFTPD", "Pure-FTPd", "FileZilla", "Microsoft"]);
            return Some(Identified { service: "ftp", product, version, banner });
        }
        if upper.contains("SMTP") || matches!(port, 25 | 465 | 587) {
            let (product, version) = product_version(&text, &["Exim", "Postfix", "Sendmail", "Microsoft", "OpenSMTPD"]);
            return Some(Identified { service: "smtp", product, version, banner });
        }
    }
    if text.starts_with("+OK") {
        return Some(Identified { service: "pop3", product: None, version: None, banner });
    }
    if text.starts_with("* OK") {
        return Some(Identified { service: "imap", product: None, version: None, banner });
    }
    None
}

/// The active probes, tried in this order unless the port suggests one first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Probe {
    Http,
    Tls,
    Redis,
    Memcached,
    Postgres,
    Mongo,
    Smb,
    Rdp,
}

/// Ports whose usual service waits for the client (web, TLS, databases, caches, SMB,
/// RDP): the probe goes first, and a banner is waited for only if it does not match.
fn client_first(port: u16) -> bool {
    !hint(port).is_empty()
}

/// The probe a port's usual service answers.
fn hint(port: u16) -> &'static [Probe] {
    use Probe::*;
    match port {
        80 | 8000 | 8008 | 8080 | 8081 | 8888 | 9000 | 9090 | 9200 | 5601 | 3000 | 5000 | 5984 | 15672 | 2375 => {
            &[Http]
        }
        443 | 8443 | 6443 | 10250 | 2376 | 636 | 993 | 995 | 465 => &[Tls],
        6379 => &[Redis],
        11211 => &[Memcached],
        5432 => &[Postgres],
        27017 => &[Mongo],
        445 | 139 => &[Smb],
        3389 => &[Rdp],
        _ => &[],
    }
}

fn probes_for(port: u16) -> Vec<Probe> {
    use Probe::*;
    let mut out = hint(port).to_vec();
    for p in [Http, Tls, Redis, Memcached] {
        if !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

async fn run_probe(probe: Probe, stream: &mut Connection, host: &str, wait: Duration) -> Option<Identified> {
    match probe {
        Probe::Http => {
            let request = format!("GET / HTTP/1.0\r\nHost: {host}\r\nUser-Agent: {USER_AGENT}\r\nAccept: */*\r\n\r\n");
            let answer = exchange(stream, request.as_bytes(), wait).await;
            let text = String::from_utf8_lossy(&answer);
            if !text.starts_with("HTTP/1.") {
                return None;
            }
            let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
            if body.contains("\"cluster_name\"") && body.contains("\"number\"") {
                let version = serde_json::from_str::<serde_json::Value>(body)
                    .ok()
                    .and_then(|v| v["version"]["number"].as_str().map(str::to_owned));
                return Some(Identified {
                    service: "elasticsearch",
                    product: Some("Elasticsearch".into()),
                    version,
                    banner: printable(body.as_bytes()),
                });
            }
            let server = head.lines().find_map(|l| {
                l.split_once(':')
                    .filter(|(k, _)| k.trim().eq_ignore_ascii_case("server"))
                    .map(|(_, v)| v.trim().to_owned())
            });
            let (product, version) = server.as_deref().and_then(super::web::server_product).unzip();
            Some(Identified {
                service: "http",
                product,
                version: version.flatten(),
                banner: printable(head.lines().next().unwrap_or("").as_bytes())
                    + &server.map(|s| format!("; Server: {s}")).unwrap_or_default(),
            })
        }
        Probe::Tls => {
            let suites = crate::tlsprobe::suites::for_version(crate::tlsprobe::Version::Tls12);
            let groups: Vec<u16> = crate::tlsprobe::wire::GROUPS.iter().map(|(g, _)| *g).collect();
            let hello = crate::tlsprobe::wire::Hello {
                version: crate::tlsprobe::Version::Tls12,
                suites: &suites[..suites.len().min(128)],
                fallback_scsv: false,
                sni: host.parse::<std::net::IpAddr>().is_err().then_some(host),
                groups: &groups,
                deflate: false,
                random: rand::random(),
                key_share: &[],
            };
            let answer = exchange(stream, &crate::tlsprobe::wire::client_hello(&hello), wait).await;
            match crate::tlsprobe::wire::record(&answer) {
                Ok(Some((rec, _)))
                    if rec.kind == crate::tlsprobe::wire::RECORD_HANDSHAKE
                        || rec.kind == crate::tlsprobe::wire::RECORD_ALERT =>
                {
                    Some(Identified {
                        service: "tls",
                        product: None,
                        version: None,
                        banner: format!("TLS record type {}", rec.kind),
                    })
                }
                _ => None,
            }
        }
        Probe::Redis => {
            let answer = exchange(stream, b"PING\r\n", wait).await;
            let text = String::from_utf8_lossy(&answer).into_owned();
            if !(text.starts_with("+PONG") || text.starts_with("-NOAUTH") || text.starts_with("-DENIED")) {
                return None;
            }
            let info = exchange(stream, b"INFO server\r\n", wait).await;
            let info = String::from_utf8_lossy(&info);
            let version = info.lines().find_map(|l| l.strip_prefix("redis_version:")).map(|v| v.trim().to_owned());
            Some(Identified {
                service: "redis",
                product: Some("Redis".into()),
                version,
                banner: printable(text.as_bytes()),
            })
        }
        Probe::Memcached => {
            let answer = exchange(stream, b"version\r\n", wait).await;
            let text = String::from_utf8_lossy(&answer);
            let version = text.strip_prefix("VERSION ")?.trim().to_owned();
            Some(Identified {
                service: "memcached",
                product: Some("memcached".into()),
                version: Some(version),
                banner: printable(&answer),
            })
        }
        Probe::Postgres => {
            // SSLRequest: a PostgreSQL server answers one byte, 'S' or 'N'.
            let answer = exchange(stream, &[0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f], wait).await;
            (answer.as_slice() == b"N" || answer.as_slice() == b"S").then(|| Identified {
                service: "postgresql",
                product: Some("PostgreSQL".into()),
                version: None,
                banner: format!("SSLRequest answered {:?}", char::from(answer[0])),
            })
        }
        Probe::Mongo => {
            let answer = exchange(stream, &mongo_is_master(), wait).await;
            // OP_REPLY (1) or OP_MSG (2013) with a BSON document.
            let opcode = i32::from_le_bytes(answer.get(12..16)?.try_into().ok()?);
            if opcode != 1 && opcode != 2013 {
                return None;
            }
            let version = bson_string(&answer, "version");
            Some(Identified {
                service: "mongodb",
                product: Some("MongoDB".into()),
                version,
                banner: format!("isMaster answered (opcode {opcode})"),
            })
        }
        Probe::Smb => {
            let answer = exchange(stream, &smb2_negotiate(), wait).await;
            let body = answer.get(4..)?;
            (body.starts_with(b"\xfeSMB") || body.starts_with(b"\xffSMB")).then(|| Identified {
                service: "smb",
                product: None,
                version: None,
                banner: "SMB NEGOTIATE answered".into(),
            })
        }
        Probe::Rdp => {
            // TPKT + X.224 Connection Request with an RDP negotiation request (TLS).
            let request = [3, 0, 0, 19, 14, 0xe0, 0, 0, 0, 0, 0, 1, 0, 8, 0, 1, 0, 0, 0];
            let answer = exchange(stream, &request, wait).await;
            (answer.first() == Some(&3) && answer.get(5) == Some(&0xd0)).then(|| Identified {
                service: "rdp",
                product: None,
                version: None,
                banner: "X.224 Connection Confirm".into(),
            })
        }
    }
}

/// `isMaster` as an OP_QUERY on `admin.$cmd`.
fn mongo_is_master() -> Vec<u8> {
    let mut doc = Vec::new();
    doc.push(0x10);
    doc.extend_from_slice(b"isMaster\0");
    doc.extend_from_slice(&1i32.to_le_bytes());
    doc.push(0);
    let mut bson = (i32::try_from(doc.len() + 4).unwrap_or(0)).to_le_bytes().to_vec();
    bson.extend_from_slice(&doc);
    let mut body = 0u32.to_le_bytes().to_vec();
    body.extend_from_slice(b"admin.$cmd\0");
    body.extend_from_slice(&0u32.to_le_bytes());
    body.extend_from_slice(&1i32.to_le_bytes());
    body.extend_from_slice(&bson);
    let mut msg = (i32::try_from(body.len() + 16).unwrap_or(0)).to_le_bytes().to_vec();
    msg.extend_from_slice(&1i32.to_le_bytes());
    msg.extend_from_slice(&0i32.to_le_bytes());
    msg.extend_from_slice(&2004i32.to_le_bytes());
    msg.extend_from_slice(&body);
    msg
}

/// The string value of `key` in the first BSON document inside `bytes` (a scan for
/// the element, bounded by the bytes).
fn bson_string(bytes: &[u8], key: &str) -> Option<String> {
    let mut pattern = vec![0x02];
    pattern.extend_from_slice(key.as_bytes());
    pattern.push(0);
    let at = bytes.windows(pattern.len()).position(|w| w == pattern.as_slice())? + pattern.len();
    let len = usize::try_from(i32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?)).ok()?;
    let text = bytes.get(at + 4..at + 4 + len.checked_sub(1)?)?;
    Some(String::from_utf8_lossy(text).into_owned())
}

/// An SMB2 NEGOTIATE request (dialects 2.0.2, 2.1, 3.0) in a NetBIOS session message.
fn smb2_negotiate() -> Vec<u8> {
    let mut h = b"\xfeSMB".to_vec();
    h.extend_from_slice(&64u16.to_le_bytes()); // structure size
    h.extend_from_slice(&[0; 2]); // credit charge
    h.extend_from_slice(&[0; 4]); // status
    h.extend_from_slice(&0u16.to_le_bytes()); // NEGOTIATE
    h.extend_from_slice(&1u16.to_le_bytes()); // credits
    h.extend_from_slice(&[0; 4]); // flags
    h.extend_from_slice(&[0; 4]); // next command
    h.extend_from_slice(&[0; 8]); // message id
    h.extend_from_slice(&[0; 4]); // process id
    h.extend_from_slice(&[0; 4]); // tree id
    h.extend_from_slice(&[0; 8]); // session id
    h.extend_from_slice(&[0; 16]); // signature
    let mut b = 36u16.to_le_bytes().to_vec();
    b.extend_from_slice(&3u16.to_le_bytes()); // dialect count
    b.extend_from_slice(&1u16.to_le_bytes()); // security mode: signing enabled
    b.extend_from_slice(&[0; 2]);
    b.extend_from_slice(&[0; 4]); // capabilities
    b.extend_from_slice(&[0x52; 16]); // client GUID
    b.extend_from_slice(&[0; 8]); // client start time
    for d in [0x0202u16, 0x0210, 0x0300] {
        b.extend_from_slice(&d.to_le_bytes());
    }
    h.extend_from_slice(&b);
    let len = u32::try_from(h.len()).unwrap_or(0).to_be_bytes();
    let mut out = vec![0, len[1], len[2], len[3]];
    out.extend_from_slice(&h);
    out
}

/// Scans `ports` on `host` (resolved once through the guard): every port that accepts a
/// connection, identified. A host the guard refuses, or whose name did not resolve for
/// another reason than having no address, is not scanned: that is an error (the why of
/// a check not assessable), never "no port open". A name without an address has no
/// port open.
pub async fn scan(guard: &Guard, host: &str, ports: &[u16]) -> Result<Vec<OpenPort>, Unreached> {
    let addrs = reach(guard, host).await?;
    Ok(scan_addresses(guard, host, &addrs, ports).await)
}

/// The addresses of `host` the guard admits (none for a name without an address), or
/// why the host is not reached: the guard refuses one of its addresses, or its name
/// fails to resolve.
pub async fn reach(guard: &Guard, host: &str) -> Result<Vec<std::net::IpAddr>, Unreached> {
    match guard.resolve(host).await {
        Ok(addrs) => Ok(addrs),
        Err(crate::guard::GuardError::NoAddress(_)) => Ok(Vec::new()),
        Err(e) => Err(Unreached::of(&e)),
    }
}

/// Why a host was not probed, as a check's reason says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreached(pub String);

impl Unreached {
    pub fn of(e: &crate::guard::GuardError) -> Unreached {
        match e {
            crate::guard::GuardError::Refused { addr, why, .. } => {
                Unreached(crate::guard::Refusal { addr: *addr, why }.to_string())
            }
            other => Unreached(format!("not reached: {other}")),
        }
    }
}

impl std::fmt::Display for Unreached {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

async fn scan_addresses(guard: &Guard, host: &str, addrs: &[std::net::IpAddr], ports: &[u16]) -> Vec<OpenPort> {
    use futures_util::StreamExt;
    let wait = guard.policy().read_timeout.min(BANNER_WAIT);
    let mut open: Vec<OpenPort> = futures_util::stream::iter(ports.iter().copied())
        .map(|port| async move {
            let conn = guard.connect(host, addrs, port).await.ok()?;
            let ip = conn.addr.ip();
            // Where the client speaks first (web and TLS ports) the probes go first; a
            // banner is waited for only when they do not identify the service.
            let mut first = Some(conn);
            let mut found = None;
            let mut banner = Vec::new();
            if !client_first(port)
                && let Some(mut stream) = first.take()
            {
                banner = read_answer(&mut stream, wait).await;
                found = from_banner(&banner, port);
            }
            if found.is_none() && banner.is_empty() {
                for probe in probes_for(port) {
                    let mut s = match first.take() {
                        Some(s) => s,
                        None => match guard.connect(host, addrs, port).await {
                            Ok(c) => c,
                            Err(_) => break,
                        },
                    };
                    found = run_probe(probe, &mut s, host, wait).await;
                    if found.is_some() {
                        break;
                    }
                }
            }
            if found.is_none()
                && client_first(port)
                && let Ok(c) = guard.connect(host, addrs, port).await
            {
                let mut s = c;
                banner = read_answer(&mut s, wait).await;
                found = from_banner(&banner, port);
            }
            let id = found.unwrap_or(Identified {
                service: "unknown",
                product: None,
                version: None,
                banner: printable(&banner),
            });
            Some(OpenPort {
                host: host.to_owned(),
                ip,
                port,
                service: id.service.to_owned(),
                product: id.product,
                version: id.version,
                banner: id.banner,
            })
        })
        .buffer_unordered(CONCURRENT_PORTS)
        .filter_map(|p| async move { p })
        .collect()
        .await;
    open.sort_by_key(|p| p.port);
    open
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn banners_name_their_software() {
        assert_eq!(
            ssh_software("SSH-2.0-OpenSSH_8.2p1 Ubuntu-4ubuntu0.5"),
            (Some("OpenSSH".into()), Some("8.2p1".into()))
        );
        assert_eq!(ssh_software("SSH-2.0-dropbear"), (Some("dropbear".into()), None));
        let ftp = from_banner(b"220 (vsFTPd 2.3.4)\r\n", 21).unwrap();
        assert_eq!(
            (ftp.service, ftp.product.as_deref(), ftp.version.as_deref()),
            ("ftp", Some("vsFTPd"), Some("2.3.4"))
        );
        let smtp = from_banner(b"220 mail.x.test ESMTP Exim 4.92 Mon, 1 Jan 2026\r\n", 25).unwrap();
        assert_eq!(
            (smtp.service, smtp.product.as_deref(), smtp.version.as_deref()),
            ("smtp", Some("Exim"), Some("4.92"))
        );
        let telnet = from_banner(&[255, 253, 24, 255, 253, 32], 23).unwrap();
        assert_eq!(telnet.service, "telnet");
        let mut mysql = vec![0x4a, 0, 0, 0, 10];
        mysql.extend_from_slice(b"5.7.33-0ubuntu0.18.04.1\0rest");
        let m = from_banner(&mysql, 3306).unwrap();
        assert_eq!((m.service, m.version.as_deref()), ("mysql", Some("5.7.33")));
        assert!(from_banner(b"", 80).is_none());
        assert!(from_banner(&[0, 0, 0, 0, 10], 3306).is_none(), "no terminator: not a handshake");
    }

    #[test]
    fn bson_strings_are_found_and_bounded() {
        let mut doc = vec![0x02];
        doc.extend_from_slice(b"version\0");
        doc.extend_from_slice(&6i32.to_le_bytes());
        doc.extend_from_slice(b"3.6.8\0");
        assert_eq!(bson_string(&doc, "version").as_deref(), Some("3.6.8"));
        let mut bad = doc.clone();
        bad[9..13].copy_from_slice(&i32::MAX.to_le_bytes());
        assert_eq!(bson_string(&bad, "version"), None);
        assert_eq!(bson_string(&doc[..10], "version"), None);
    }

    #[test]
    fn identification_never_panics() {
        use proptest::prelude::*;
        proptest!(|(bytes in proptest::collection::vec(any::<u8>(), 0..300), port in any::<u16>())| {
            let _ = from_banner(&bytes, port);
            let _ = bson_string(&bytes, "version");
        });
    }
}
