//! Internet addresses: which special-purpose range an address is in. The network guard
//! decides by it what may be connected to (`egress::guard`, whose tests name every
//! range); the API refuses such an address as a company's asset, and a webhook as its
//! host.

use std::net::{IpAddr, Ipv4Addr};

/// Why an address is special, or `None` for an ordinary public unicast address.
pub fn special_range(addr: IpAddr) -> Option<&'static str> {
    match addr {
        IpAddr::V4(a) => special_v4(a),
        IpAddr::V6(a) => {
            if let Some(v4) = a.to_ipv4_mapped() {
                return special_v4(v4);
            }
            let s = a.segments();
            if a.is_loopback() {
                Some("loopback")
            } else if a.is_unspecified() {
                Some("unspecified")
            } else if s[..6] == [0; 6] {
                // `::a.b.c.d`: deprecated (RFC 4291 §2.5.5.1); some stacks still route it
                // to the embedded IPv4 address, which no check would have seen.
                Some("IPv4-compatible (RFC 4291)")
            } else if a.is_multicast() {
                Some("multicast")
            } else if s[0] & 0xfe00 == 0xfc00 {
                Some("unique local (RFC 4193)")
            } else if s[0] & 0xffc0 == 0xfe80 {
                Some("link-local")
            } else if s[0] & 0xffc0 == 0xfec0 {
                Some("site-local (RFC 3879)")
            } else if s[0] == 0x2001 && s[1] == 0x0db8 {
                Some("documentation (RFC 3849)")
            } else if s[0] == 0x0064 && s[1] == 0xff9b && s[2] == 0x0001 {
                Some("local-use NAT64 (RFC 8215)")
            } else if s[0] == 0x0064 && s[1] == 0xff9b {
                Some("NAT64 (RFC 6052)")
            } else if s[0] == 0x2002 || (s[0] == 0x2001 && s[1] == 0) {
                Some("6to4/Teredo relay")
            } else if s[0] == 0x0100 && s[1] == 0 && s[2] == 0 && s[3] == 0 {
                Some("discard (RFC 6666)")
            } else {
                None
            }
        }
    }
}

fn special_v4(a: Ipv4Addr) -> Option<&'static str> {
    let o = a.octets();
    if a.is_loopback() {
        Some("loopback")
    } else if a.is_private() {
        Some("private (RFC 1918)")
    } else if a.is_link_local() {
        Some("link-local")
    } else if a.is_multicast() {
        Some("multicast")
    } else if a.is_broadcast() {
        Some("broadcast")
    } else if a.is_unspecified() || o[0] == 0 {
        Some("this network (0.0.0.0/8)")
    } else if o[0] == 100 && (o[1] & 0xc0) == 64 {
        Some("shared address space (RFC 6598)")
    } else if (o[0], o[1], o[2]) == (192, 0, 2)
        || (o[0], o[1], o[2]) == (198, 51, 100)
        || (o[0], o[1], o[2]) == (203, 0, 113)
    {
        Some("documentation (RFC 5737)")
    } else if o[0] == 198 && (o[1] & 0xfe) == 18 {
        Some("benchmarking (RFC 2544)")
    } else if (o[0], o[1], o[2]) == (192, 0, 0) {
        Some("IETF protocol assignments")
    } else if (o[0], o[1], o[2]) == (192, 88, 99) {
        Some("6to4 relay anycast (RFC 7526)")
    } else if o[0] >= 240 {
        Some("reserved (240.0.0.0/4)")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn public_addresses_are_not_special_and_mapped_ones_are_read_as_ipv4() {
        let range = |a: &str| super::special_range(a.parse().unwrap());
        assert_eq!(range("8.8.8.8"), None);
        assert_eq!(range("2606:4700::1111"), None);
        assert_eq!(range("10.0.0.1"), Some("private (RFC 1918)"));
        assert_eq!(range("::ffff:127.0.0.1"), Some("loopback"));
    }
}
