//! Which process holds a local address: read from `/proc` (Linux), so that a lab that
//! cannot bind says who has its addresses (another demo, a lab left running) instead of
//! "Address already in use".

use std::net::{IpAddr, SocketAddr};

/// Most processes and descriptors looked at: the search is bounded on a busy machine.
const MAX_ENTRIES: usize = 200_000;

/// The process holding a socket bound to `addr` (TCP listening, or UDP): its id and
/// command line. `None` when it cannot be found (not Linux, another user's process,
/// IPv6).
pub fn socket_holder(addr: SocketAddr) -> Option<(u32, String)> {
    let inode = socket_inode(addr)?;
    let wanted = format!("socket:[{inode}]");
    let mut seen = 0usize;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else { continue };
        for fd in fds.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return None;
            }
            if std::fs::read_link(fd.path()).is_ok_and(|target| target.as_os_str() == wanted.as_str()) {
                return Some((pid, command_line(pid)));
            }
        }
    }
    None
}

/// The inode of the socket bound to `addr`: a listening TCP socket, else a UDP one.
fn socket_inode(addr: SocketAddr) -> Option<u64> {
    let IpAddr::V4(ip) = addr.ip() else { return None };
    // /proc/net prints an IPv4 address as the 32-bit word in host order, the port big-endian.
    let local = format!("{:08X}:{:04X}", u32::from_ne_bytes(ip.octets()), addr.port());
    for (table, listening) in [("/proc/net/tcp", Some("0A")), ("/proc/net/udp", None)] {
        let Ok(text) = std::fs::read_to_string(table) else { continue };
        for line in text.lines().skip(1).take(MAX_ENTRIES) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // sl local rem st tx:rx tr:when retrnsmt uid timeout inode …
            let (Some(l), Some(st), Some(inode)) = (fields.get(1), fields.get(3), fields.get(9)) else { continue };
            if l.eq_ignore_ascii_case(&local)
                && listening.is_none_or(|s| st.eq_ignore_ascii_case(s))
                && let Some(inode) = inode.parse::<u64>().ok().filter(|&i| i != 0)
            {
                return Some(inode);
            }
        }
    }
    None
}

/// A process's command line, arguments joined by spaces (at most 120 characters).
fn command_line(pid: u32) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let text: String =
        raw.split(|&b| b == 0).filter(|a| !a.is_empty()).map(String::from_utf8_lossy).collect::<Vec<_>>().join(" ");
    let mut line: String = text.chars().filter(|c| !c.is_control()).take(120).collect();
    if line.is_empty() {
        line = "?".into();
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn finds_this_process_holding_a_tcp_and_a_udp_address() {
        let tcp = std::net::TcpListener::bind("127.77.90.1:0").unwrap();
        let (pid, command) = socket_holder(tcp.local_addr().unwrap()).expect("the listener's holder");
        assert_eq!(pid, std::process::id());
        assert!(!command.is_empty());
        let udp = std::net::UdpSocket::bind("127.77.90.2:0").unwrap();
        assert_eq!(socket_holder(udp.local_addr().unwrap()).map(|h| h.0), Some(std::process::id()));
        // Nobody on it.
        assert_eq!(socket_holder("127.77.90.3:9".parse().unwrap()), None);
    }
}
