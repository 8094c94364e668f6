//! The network guard (docs/SECURITY.md §1). Every connection the scanner makes goes
//! through it: a name is resolved once, every address is checked against the policy, and
//! the connection goes to the checked address — so a name that resolves to a public
//! address for the check and to 127.0.0.1 for the connection (DNS rebinding) cannot
//! redirect a probe. Connects and reads have timeouts, reads are bounded, and concurrency
//! is limited globally and per host.

use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::dns::Dns;

/// The User-Agent of every HTTP request the scanner makes.
pub const USER_AGENT: &str = concat!("Rampart-Scanner/", env!("CARGO_PKG_VERSION"), " (+https://rampart.test/scanner)");

#[derive(Debug, thiserror::Error)]
pub enum GuardError {
    #[error("{host}: {addr} is refused ({why}); scanning it needs --allow-private")]
    Refused { host: String, addr: IpAddr, why: &'static str },
    #[error("{0}: the name has no address")]
    NoAddress(String),
    /// A target that is neither an IP address nor a host name `model::Domain` accepts
    /// (an escaped dot, a backslash, an all-numeric last label, …): never resolved.
    #[error("{0:?} is not a host name; it is not resolved or connected to")]
    BadName(String),
    #[error("{host}: {source}")]
    Dns {
        host: String,
        #[source]
        source: crate::dns::DnsError,
    },
    #[error("{addr}: connect: {source}")]
    Connect {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}: connect timed out")]
    Timeout(SocketAddr),
}

/// What the guard admits.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Loopback, private, link-local and the other internal ranges are admitted
    /// (`--allow-private`, and lab mode).
    pub allow_private: bool,
    /// Lab mode: only the lab's own range (127.0.0.0/8 and ::1) is admitted; a public
    /// address or another internal range is refused, so a lab zone cannot turn the
    /// scanner on the internet or on the machine's networks.
    pub lab_only: bool,
    /// Standard port → the port actually connected to (the lab's port map). Findings
    /// always name the standard port.
    pub port_map: BTreeMap<u16, u16>,
    pub connect_timeout: Duration,
    pub read_timeout: Duration,
    /// Connections open at once, over all hosts and per address.
    pub global_limit: usize,
    pub per_host_limit: usize,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            allow_private: false,
            lab_only: false,
            port_map: BTreeMap::new(),
            connect_timeout: Duration::from_secs(3),
            read_timeout: Duration::from_secs(5),
            global_limit: 256,
            per_host_limit: 8,
        }
    }
}

/// Why an address is special, or `None` for an ordinary public unicast address (the
/// classification is `model`'s: the API checks addresses by it too, without this crate).
pub use model::net::special_range;

/// Ranges no probe connects to in any mode: they route nowhere real.
pub fn unroutable(why: &str) -> bool {
    matches!(
        why,
        "multicast"
            | "broadcast"
            | "this network (0.0.0.0/8)"
            | "unspecified"
            | "documentation (RFC 5737)"
            | "documentation (RFC 3849)"
            | "benchmarking (RFC 2544)"
            | "IETF protocol assignments"
            | "reserved (240.0.0.0/4)"
            | "discard (RFC 6666)"
            | "NAT64 (RFC 6052)"
            | "local-use NAT64 (RFC 8215)"
            | "6to4/Teredo relay"
            | "6to4 relay anycast (RFC 7526)"
            | "IPv4-compatible (RFC 4291)"
            | "site-local (RFC 3879)"
    )
}

/// Is `addr` in the lab's range (127.0.0.0/8, ::1)?
pub fn in_lab(addr: IpAddr) -> bool {
    match addr {
        IpAddr::V4(a) => a.is_loopback(),
        IpAddr::V6(a) => a.is_loopback() || a.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()),
    }
}

/// An address the guard refuses, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub addr: IpAddr,
    pub why: &'static str,
}

impl Refusal {
    /// Whether the refused address is an internal one (private, loopback, unique local,
    /// link-local, shared): a public name that publishes it discloses the inside of a
    /// network. (In lab mode a public address is refused too: that is not internal.)
    pub fn internal(&self) -> bool {
        special_range(self.addr).is_some()
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.why {
            "outside the lab (127.0.0.0/8)" => write!(f, "refused: {} is outside the lab (127.0.0.0/8)", self.addr),
            why => write!(f, "refused: {} is a {why} address", self.addr),
        }
    }
}

/// The guard: shared by every probe of a scan.
#[derive(Clone)]
pub struct Guard {
    policy: Arc<Policy>,
    dns: Dns,
    global: Arc<Semaphore>,
    per_host: Arc<Mutex<HashMap<IpAddr, Arc<Semaphore>>>>,
}

/// A connection the guard made. It is the stream (reads and writes go through it) and
/// it holds the guard's permits for as long as it is open: the stream cannot be taken
/// out of it, so no probe can keep a connection while the permits go back.
pub struct Connection {
    stream: TcpStream,
    pub addr: SocketAddr,
    _permits: Permits,
}

/// A global and a per-address permit of the guard, held together.
pub struct Permits {
    _host: OwnedSemaphorePermit,
    _global: OwnedSemaphorePermit,
}

impl tokio::io::AsyncRead for Connection {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl tokio::io::AsyncWrite for Connection {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// Addresses the per-address table keeps before it drops those not in use.
const PER_HOST_TABLE: usize = 4096;

impl Guard {
    pub fn new(policy: Policy, dns: Dns) -> Guard {
        let global = Arc::new(Semaphore::new(policy.global_limit.max(1)));
        Guard { policy: Arc::new(policy), dns, global, per_host: Arc::default() }
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    pub fn dns(&self) -> &Dns {
        &self.dns
    }

    /// The port connected to for a standard port.
    pub fn port(&self, standard: u16) -> u16 {
        self.policy.port_map.get(&standard).copied().unwrap_or(standard)
    }

    /// Checks one address against the policy. Internal ranges (loopback, private,
    /// link-local, unique local, shared) are admitted only in lab mode; ranges that are
    /// never routable (documentation, reserved, multicast, broadcast, unspecified) are
    /// refused in every mode.
    pub fn check(&self, host: &str, addr: IpAddr) -> Result<(), GuardError> {
        let refused = |why| Err(GuardError::Refused { host: host.to_owned(), addr, why });
        match special_range(addr) {
            Some(why) if unroutable(why) || !self.policy.allow_private => refused(why),
            _ if self.policy.lab_only && !in_lab(addr) => {
                refused(special_range(addr).unwrap_or("outside the lab (127.0.0.0/8)"))
            }
            _ => Ok(()),
        }
    }

    /// Why a host with these addresses (as discovery resolved them) is not probed: the
    /// first address the policy refuses, as [`Guard::resolve`] would refuse it
    /// (never-routable addresses are dropped, not refusing). `None`: every address is
    /// admitted. One internal address beside public ones refuses the whole host, so
    /// what the scanner could not probe is told apart from what it probed and found
    /// clean.
    pub fn refusal(&self, host: &str, addrs: &[IpAddr]) -> Option<Refusal> {
        addrs.iter().filter(|a| !special_range(**a).is_some_and(unroutable)).find_map(|a| match self.check(host, *a) {
            Err(GuardError::Refused { addr, why, .. }) => Some(Refusal { addr, why }),
            _ => None,
        })
    }

    /// Resolves `host` once and checks every address; the checked addresses are the
    /// only ones a probe may connect to. Never-routable addresses (a documentation
    /// AAAA, say) are dropped; one internal address outside lab mode refuses the host: a
    /// name that mixes public and internal addresses is what a rebinding attack looks like.
    /// `host` is an IP address or a name `model::Domain` accepts; anything else (a name
    /// from DNS with an escaped dot that prints as an address, say) is refused unresolved.
    pub async fn resolve(&self, host: &str) -> Result<Vec<IpAddr>, GuardError> {
        self.resolve_target(host, &target(host)?).await
    }

    /// [`Guard::resolve`] of a target parsed already (`host` names it in errors).
    pub async fn resolve_target(&self, host: &str, target: &Target) -> Result<Vec<IpAddr>, GuardError> {
        let mut addrs = match target {
            Target::Ip(ip) => vec![*ip],
            Target::Name(name) => self
                .dns
                .addresses(name.as_str())
                .await
                .map_err(|source| GuardError::Dns { host: host.to_owned(), source })?,
        };
        let given = addrs.len();
        addrs.retain(|a| !special_range(*a).is_some_and(unroutable));
        if addrs.is_empty() {
            return match given {
                0 => Err(GuardError::NoAddress(host.to_owned())),
                _ => Err(GuardError::NoAddress(format!("{host} (only never-routable addresses)"))),
            };
        }
        for a in &addrs {
            self.check(host, *a)?;
        }
        Ok(addrs)
    }

    /// The permits for one exchange with `ip`: the address's first, then a global one,
    /// so a task waiting on a busy (or silent) address never holds a global permit that
    /// scans of other hosts need. HTTP requests take them too.
    pub async fn permits(&self, ip: IpAddr) -> Result<Permits, GuardError> {
        let host_limit = {
            let mut map = self.per_host.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if map.len() >= PER_HOST_TABLE {
                // Only the table holds an entry nobody uses: drop those.
                map.retain(|_, s| Arc::strong_count(s) > 1);
            }
            map.entry(ip).or_insert_with(|| Arc::new(Semaphore::new(self.policy.per_host_limit.max(1)))).clone()
        };
        let closed = || GuardError::Timeout(SocketAddr::new(ip, 0));
        let host = host_limit.acquire_owned().await.map_err(|_| closed())?;
        let global = self.global.clone().acquire_owned().await.map_err(|_| closed())?;
        Ok(Permits { _host: host, _global: global })
    }

    /// Addresses in the per-address table (for the test of its pruning).
    #[cfg(test)]
    fn tracked_addresses(&self) -> usize {
        self.per_host.lock().unwrap_or_else(std::sync::PoisonError::into_inner).len()
    }

    /// Connects to the first reachable of `addrs` (already checked by [`Guard::resolve`])
    /// on the lab port for `standard_port`, within the connect timeout and the limits.
    pub async fn connect(&self, host: &str, addrs: &[IpAddr], standard_port: u16) -> Result<Connection, GuardError> {
        let port = self.port(standard_port);
        let mut last = None;
        for ip in addrs {
            self.check(host, *ip)?;
            let addr = SocketAddr::new(*ip, port);
            let permits = self.permits(*ip).await?;
            match tokio::time::timeout(self.policy.connect_timeout, TcpStream::connect(addr)).await {
                Ok(Ok(stream)) => {
                    return Ok(Connection { stream, addr, _permits: permits });
                }
                Ok(Err(source)) => last = Some(GuardError::Connect { addr, source }),
                Err(_) => last = Some(GuardError::Timeout(addr)),
            }
        }
        Err(last.unwrap_or_else(|| GuardError::NoAddress(host.to_owned())))
    }

    /// Resolves, checks and connects.
    pub async fn connect_host(&self, host: &str, standard_port: u16) -> Result<Connection, GuardError> {
        let addrs = self.resolve(host).await?;
        self.connect(host, &addrs, standard_port).await
    }
}

/// What a connection may be asked for: an IP address, or a host name that parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Ip(IpAddr),
    Name(model::Domain),
}

/// Parses a connection target: an IP address (`192.0.2.7`, `2001:db8::7`, `[2001:db8::7]`)
/// or a host name as `model::Domain` takes it (a trailing dot and capitals are allowed).
pub fn target(host: &str) -> Result<Target, GuardError> {
    let bare = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Ok(Target::Ip(ip));
    }
    model::Domain::parse(host).map(Target::Name).map_err(|_| GuardError::BadName(printable(host)))
}

/// A name from the network as it may be shown: printable ASCII as it is (so a DNS
/// presentation form such as `127.0.0.1\.x.zone` reads as DNS tools print it), control
/// and non-ASCII characters escaped, at most 300 characters.
pub fn printable(raw: &str) -> String {
    let mut out = String::new();
    for c in raw.chars().take(300) {
        if c.is_ascii_graphic() || c == ' ' {
            out.push(c);
        } else {
            out.extend(c.escape_default());
        }
    }
    if raw.chars().count() > 300 {
        out.push('…');
    }
    out
}

/// Reads at most `limit` bytes within `timeout` (whatever arrived when either ends).
pub async fn read_bounded<R: tokio::io::AsyncRead + Unpin>(
    reader: &mut R,
    limit: usize,
    timeout: Duration,
) -> std::io::Result<Vec<u8>> {
    use tokio::io::AsyncReadExt;
    let mut buf = Vec::with_capacity(limit.min(8192));
    let read = async {
        let mut chunk = [0u8; 4096];
        while buf.len() < limit {
            let n = reader.read(&mut chunk).await?;
            if n == 0 {
                break;
            }
            let take = n.min(limit - buf.len());
            buf.extend_from_slice(&chunk[..take]);
        }
        Ok::<_, std::io::Error>(())
    };
    match tokio::time::timeout(timeout, read).await {
        Ok(r) => r.map(|()| buf),
        Err(_) => Ok(buf),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_ranges_are_named() {
        for (a, want) in [
            ("127.0.0.1", Some("loopback")),
            ("10.1.2.3", Some("private (RFC 1918)")),
            ("172.16.0.1", Some("private (RFC 1918)")),
            ("192.168.1.1", Some("private (RFC 1918)")),
            ("169.254.169.254", Some("link-local")),
            ("100.64.0.1", Some("shared address space (RFC 6598)")),
            ("192.0.2.1", Some("documentation (RFC 5737)")),
            ("198.18.0.1", Some("benchmarking (RFC 2544)")),
            ("224.0.0.1", Some("multicast")),
            ("255.255.255.255", Some("broadcast")),
            ("240.0.0.1", Some("reserved (240.0.0.0/4)")),
            ("0.1.2.3", Some("this network (0.0.0.0/8)")),
            ("::1", Some("loopback")),
            ("::ffff:10.0.0.1", Some("private (RFC 1918)")),
            ("fd00::1", Some("unique local (RFC 4193)")),
            ("fe80::1", Some("link-local")),
            ("2001:db8::1", Some("documentation (RFC 3849)")),
            ("::127.0.0.1", Some("IPv4-compatible (RFC 4291)")),
            ("::8.8.8.8", Some("IPv4-compatible (RFC 4291)")),
            ("64:ff9b:1::a00:1", Some("local-use NAT64 (RFC 8215)")),
            ("64:ff9b::808:808", Some("NAT64 (RFC 6052)")),
            ("fec0::1", Some("site-local (RFC 3879)")),
            ("feff::1", Some("site-local (RFC 3879)")),
            ("192.88.99.1", Some("6to4 relay anycast (RFC 7526)")),
            ("192.88.98.1", None),
            ("8.8.8.8", None),
            ("2606:4700::1111", None),
        ] {
            assert_eq!(special_range(a.parse().unwrap()), want, "{a}");
        }
    }

    #[test]
    fn every_special_range_outside_the_lab_ranges_is_refused_in_lab_mode_too() {
        let guard = Guard::new(
            Policy { allow_private: true, ..Policy::default() },
            Dns::with_server("127.0.0.1:1".parse().unwrap()).unwrap(),
        );
        for a in ["::127.0.0.1", "64:ff9b:1::7f00:1", "fec0::1", "192.88.99.1", "64:ff9b::7f00:1"] {
            assert!(matches!(guard.check("x.test", a.parse().unwrap()), Err(GuardError::Refused { .. })), "{a}");
        }
        assert!(guard.check("x.test", "127.0.0.1".parse().unwrap()).is_ok());
    }

    /// Lab mode admits the lab's range only: no public address, no other internal one
    /// (docs/SECURITY.md §2: a lab zone, or the demo's, must not send the scanner out).
    #[test]
    fn lab_mode_admits_the_lab_range_only() {
        let guard = Guard::new(
            Policy { allow_private: true, lab_only: true, ..Policy::default() },
            Dns::with_server("127.0.0.1:1".parse().unwrap()).unwrap(),
        );
        for ok in ["127.0.0.1", "127.77.1.9", "::1", "::ffff:127.0.0.2"] {
            assert!(guard.check("x.test", ok.parse().unwrap()).is_ok(), "{ok}");
        }
        for no in ["10.0.0.1", "192.168.1.1", "fd00::1", "169.254.1.1", "100.64.0.1", "8.8.8.8", "2606:4700::1"] {
            assert!(matches!(guard.check("x.test", no.parse().unwrap()), Err(GuardError::Refused { .. })), "{no}");
        }
        let addrs: Vec<IpAddr> = vec!["127.0.0.9".parse().unwrap(), "10.0.0.1".parse().unwrap()];
        let r = guard.refusal("www.x.test", &addrs).unwrap();
        assert_eq!(r.to_string(), "refused: 10.0.0.1 is a private (RFC 1918) address");
        assert!(r.internal());
        let public = guard.refusal("www.x.test", &["8.8.8.8".parse().unwrap()]).unwrap();
        assert_eq!(public.to_string(), "refused: 8.8.8.8 is outside the lab (127.0.0.0/8)");
        assert!(!public.internal());
        // A documentation address is dropped (as resolve drops it), not refusing.
        assert_eq!(guard.refusal("www.x.test", &["127.0.0.9".parse().unwrap(), "192.0.2.1".parse().unwrap()]), None);
        // Outside lab mode one internal address beside a public one refuses the host.
        let public_guard = offline_guard(4, 4);
        let mixed: Vec<IpAddr> = vec!["8.8.8.8".parse().unwrap(), "fd12::1".parse().unwrap()];
        assert_eq!(
            public_guard.refusal("h.x.test", &mixed).unwrap().to_string(),
            "refused: fd12::1 is a unique local (RFC 4193) address"
        );
    }

    fn offline_guard(global: usize, per_host: usize) -> Guard {
        let policy = Policy { global_limit: global, per_host_limit: per_host, ..Policy::default() };
        Guard::new(policy, Dns::with_server("127.0.0.1:1".parse().unwrap()).unwrap())
    }

    /// A task waiting for a busy address holds no global permit: another address is
    /// served at once.
    #[tokio::test]
    async fn waiting_on_one_address_holds_no_global_permit() {
        let guard = offline_guard(2, 1);
        let busy: IpAddr = "198.51.100.1".parse().unwrap();
        let held = guard.permits(busy).await.unwrap();
        let waiter = {
            let guard = guard.clone();
            tokio::spawn(async move { guard.permits(busy).await.map(|_| ()) })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        let other = tokio::time::timeout(Duration::from_secs(1), guard.permits("198.51.100.2".parse().unwrap())).await;
        assert!(other.is_ok(), "another address waited behind the busy one");
        drop(held);
        drop(other);
        assert!(tokio::time::timeout(Duration::from_secs(1), waiter).await.is_ok());
    }

    #[tokio::test]
    async fn the_per_address_table_is_pruned() {
        let guard = offline_guard(8, 1);
        let kept: IpAddr = "198.51.100.1".parse().unwrap();
        let held = guard.permits(kept).await.unwrap();
        for i in 0..(PER_HOST_TABLE as u32 + 100) {
            drop(guard.permits(IpAddr::V4(std::net::Ipv4Addr::from(0x0b00_0000 + i))).await.unwrap());
        }
        assert!(guard.tracked_addresses() <= PER_HOST_TABLE, "{}", guard.tracked_addresses());
        // The address in use kept its semaphore: a second permit for it still waits.
        let again = tokio::time::timeout(Duration::from_millis(100), guard.permits(kept)).await;
        assert!(again.is_err(), "the busy address's limit was lost in the pruning");
        drop(held);
    }

    #[test]
    fn targets_are_addresses_or_names_that_parse() {
        assert_eq!(target("192.0.2.7").unwrap(), Target::Ip("192.0.2.7".parse().unwrap()));
        assert_eq!(target("[2001:db8::7]").unwrap(), Target::Ip("2001:db8::7".parse().unwrap()));
        assert_eq!(target("WWW.Acme.test.").unwrap(), Target::Name(model::Domain::parse("www.acme.test").unwrap()));
        // What hickory prints for the labels `127`,`0`,`0`,`1.x`: an escaped dot.
        for bad in [
            "127.0.0.1\\.x.evil.test",
            "a\\b.test",
            "a\\046b.test",
            "1.2.3.4.5",
            "x.123",
            "a b.test",
            "a/b.test",
            "a..test",
            "",
            "localhost",
            &format!("{}.test", "a".repeat(64)),
            &"a.".repeat(130),
        ] {
            assert!(matches!(target(bad), Err(GuardError::BadName(_))), "{bad:?}");
        }
        assert_eq!(printable("a\\.b\u{7}\u{e9}\n"), "a\\.b\\u{7}\\u{e9}\\n");
    }
}
