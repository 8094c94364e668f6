//! Disputes of findings and corrections of a company's footprint: what a rated company
//! may say against what Rampart found, and what came of it.

use std::fmt;
use std::net::IpAddr;

use serde::{Deserialize, Serialize};

use crate::{Domain, OffsetDateTimeText, RiskVector, UnknownValue};

/// The longest explanation a dispute or footprint change may carry (characters).
pub const MAX_EXPLANATION: usize = 2000;

/// Why a company disputes a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DisputeReason {
    /// Fixed since: a rescan of its host and risk vector decides it.
    Fixed,
    /// Mitigated by a control the scan cannot see: an operator decides; accepted, the
    /// finding stays visible and weighs nothing.
    CompensatingControl,
    /// The asset is not the company's: an operator decides; accepted, the asset leaves
    /// the company and its future scans.
    NotOurs,
    /// The check is wrong: an operator decides; accepted, the finding is closed as a
    /// false positive of its check.
    Incorrect,
}

impl DisputeReason {
    pub const ALL: [DisputeReason; 4] =
        [DisputeReason::Fixed, DisputeReason::CompensatingControl, DisputeReason::NotOurs, DisputeReason::Incorrect];

    pub fn as_str(self) -> &'static str {
        match self {
            DisputeReason::Fixed => "fixed",
            DisputeReason::CompensatingControl => "compensating_control",
            DisputeReason::NotOurs => "not_ours",
            DisputeReason::Incorrect => "incorrect",
        }
    }

    pub fn parse(s: &str) -> Result<Self, UnknownValue> {
        Self::ALL
            .into_iter()
            .find(|r| r.as_str() == s.trim())
            .ok_or_else(|| UnknownValue { what: "reason", allowed: Self::ALL.map(Self::as_str).join(", ") })
    }

    /// Does an operator decide it (every reason but `fixed`, which a rescan decides)?
    pub fn needs_operator(self) -> bool {
        self != DisputeReason::Fixed
    }
}

impl fmt::Display for DisputeReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a dispute stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DisputeState {
    Open,
    Accepted,
    Rejected,
}

impl DisputeState {
    pub fn as_str(self) -> &'static str {
        match self {
            DisputeState::Open => "open",
            DisputeState::Accepted => "accepted",
            DisputeState::Rejected => "rejected",
        }
    }

    pub fn parse(s: &str) -> Result<Self, UnknownValue> {
        match s {
            "open" => Ok(DisputeState::Open),
            "accepted" => Ok(DisputeState::Accepted),
            "rejected" => Ok(DisputeState::Rejected),
            _ => Err(UnknownValue { what: "state", allowed: "open, accepted, rejected".into() }),
        }
    }
}

impl fmt::Display for DisputeState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A dispute: of one finding, or (a footprint removal, reason `not_ours`) of an asset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dispute {
    pub id: i64,
    pub company: crate::SocialId,
    /// The finding disputed; none for the removal of an asset.
    pub finding_id: Option<i64>,
    /// The finding's asset, or the asset whose removal is asked.
    pub asset: String,
    /// What the finding was (none for a removal).
    pub risk_vector: Option<RiskVector>,
    pub code: Option<String>,
    pub title: Option<String>,
    pub reason: DisputeReason,
    pub explanation: String,
    pub state: DisputeState,
    pub opened_at: OffsetDateTimeText,
    /// The key that opened it (its name).
    pub opened_by: String,
    pub decided_at: Option<OffsetDateTimeText>,
    /// Who decided: an operator's name, or `rescan`.
    pub decided_by: Option<String>,
    /// Why it was decided so (a rejected `fixed`: what the rescan saw again).
    pub note: Option<String>,
}

/// An asset a company names in its footprint: a domain or host name, an IP address, or
/// a range of addresses (CIDR, at most 256 addresses).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FootprintAsset {
    Name(Domain),
    Ip(IpAddr),
    Range { network: IpAddr, prefix: u8 },
}

/// The widest range a company may add or remove at once: /24 (IPv4), /120 (IPv6).
pub const MAX_RANGE_ADDRESSES: u32 = 256;

impl FootprintAsset {
    /// Parses a host or domain name (a web address is taken for its host), an IP
    /// address, or a CIDR range (its host bits zero).
    pub fn parse(raw: &str) -> Result<Self, String> {
        let raw = raw.trim();
        if let Some((_, rest)) = raw.split_once("://") {
            let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
            let host = match authority.strip_prefix('[') {
                Some(v6) => v6.split(']').next().unwrap_or(v6),
                None => authority.rsplit_once(':').map_or(authority, |(h, _)| h),
            };
            if host.is_empty() || host.contains('/') {
                return Err(format!("{raw:?} names no host"));
            }
            return FootprintAsset::parse(host).and_then(|a| match a {
                FootprintAsset::Range { .. } => Err(format!("{raw:?} names no host")),
                a => Ok(a),
            });
        }
        if let Some((net, prefix)) = raw.split_once('/')
            && let Ok(network) = net.parse::<IpAddr>()
        {
            let prefix: u8 = prefix.parse().map_err(|_| format!("{raw:?} is not a CIDR range"))?;
            let bits: u8 = if network.is_ipv4() { 32 } else { 128 };
            if prefix > bits {
                return Err(format!("{raw:?}: the prefix is longer than the address"));
            }
            if bits - prefix > 8 {
                return Err(format!("{raw:?}: a range may hold at most {MAX_RANGE_ADDRESSES} addresses (/24, /120)"));
            }
            let range = FootprintAsset::Range { network, prefix };
            if range.addresses().first() != Some(&network) {
                return Err(format!("{raw:?}: the address has bits set below the prefix"));
            }
            return Ok(range);
        }
        if let Ok(ip) = raw.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>() {
            return Ok(FootprintAsset::Ip(ip));
        }
        Domain::parse(raw)
            .map(FootprintAsset::Name)
            .map_err(|e| format!("{raw:?} is not a host name, IP address or range: {e}"))
    }

    /// `name`, `ip` or `range`.
    pub fn kind(&self) -> &'static str {
        match self {
            FootprintAsset::Name(_) => "name",
            FootprintAsset::Ip(_) => "ip",
            FootprintAsset::Range { .. } => "range",
        }
    }

    /// The addresses it names (none for a name).
    pub fn addresses(&self) -> Vec<IpAddr> {
        match *self {
            FootprintAsset::Name(_) => Vec::new(),
            FootprintAsset::Ip(ip) => vec![ip],
            FootprintAsset::Range { network, prefix } => match network {
                IpAddr::V4(a) => {
                    let size = 1u32 << (32 - u32::from(prefix));
                    let base = u32::from(a) & !(size - 1);
                    (0..size).map(|i| IpAddr::V4((base + i).into())).collect()
                }
                IpAddr::V6(a) => {
                    let size = 1u128 << (128 - u32::from(prefix));
                    let base = u128::from(a) & !(size - 1);
                    (0..size).map(|i| IpAddr::V6((base + i).into())).collect()
                }
            },
        }
    }

    /// Does it cover `asset` (a finding's or endpoint's asset: a host, `host:port`, an
    /// origin URL, an address)?
    pub fn covers(&self, asset: &str) -> bool {
        match self {
            FootprintAsset::Name(d) => crate::asset_under(asset, d.as_str()),
            _ => asset_address(asset).is_some_and(|ip| self.covers_address(ip)),
        }
    }

    /// Does it cover the address `ip`?
    pub fn covers_address(&self, ip: IpAddr) -> bool {
        match *self {
            FootprintAsset::Name(_) => false,
            FootprintAsset::Ip(a) => a == ip,
            FootprintAsset::Range { network, prefix } => match (network, ip) {
                (IpAddr::V4(n), IpAddr::V4(a)) => {
                    let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
                    u32::from(n) & mask == u32::from(a) & mask
                }
                (IpAddr::V6(n), IpAddr::V6(a)) => {
                    let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
                    u128::from(n) & mask == u128::from(a) & mask
                }
                _ => false,
            },
        }
    }
}

impl fmt::Display for FootprintAsset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FootprintAsset::Name(d) => f.write_str(d.as_str()),
            FootprintAsset::Ip(ip) => write!(f, "{ip}"),
            FootprintAsset::Range { network, prefix } => write!(f, "{network}/{prefix}"),
        }
    }
}

/// The address an asset names, when it is one (`127.0.0.1`, `127.0.0.1:22`,
/// `[::1]:443`, `https://127.0.0.1/`).
pub fn asset_address(asset: &str) -> Option<IpAddr> {
    let host = asset.split_once("://").map_or(asset, |(_, rest)| rest.split('/').next().unwrap_or(rest));
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Some(ip);
    }
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next()?.parse().ok();
    }
    host.rsplit_once(':').and_then(|(h, _)| h.parse::<IpAddr>().ok()).filter(IpAddr::is_ipv4)
}

/// The host name of a finding's asset (`www.acme.test:443`, `https://www.acme.test/x`,
/// `s1._domainkey.acme.test` → the name its records live under), or none for an address.
pub fn asset_host(asset: &str) -> Option<Domain> {
    if asset_address(asset).is_some() {
        return None;
    }
    let host = asset.split_once("://").map_or(asset, |(_, rest)| rest.split('/').next().unwrap_or(rest));
    let host = host.split(':').next().unwrap_or(host);
    // Records below a host (`_dmarc.`, `s1._domainkey.`): the host they belong to.
    let host = match host.rfind("._") {
        Some(i) => host[i + 2..].split_once('.').map_or(host, |(_, rest)| rest),
        None => host.strip_prefix('_').and_then(|h| h.split_once('.')).map_or(host, |(_, rest)| rest),
    };
    Domain::parse(host).ok()
}

/// What the company changed in its footprint: an asset added (scanned as the company's)
/// or removed (kept out of its scans, by an accepted dispute).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FootprintChange {
    /// The asset as stored (`FootprintAsset`'s text).
    pub asset: String,
    /// `added` or `removed`.
    pub change: String,
    pub reason: String,
    /// The key (its name) or operator that made it.
    pub by: String,
    pub at: OffsetDateTimeText,
    /// The dispute that removed it.
    pub dispute_id: Option<i64>,
}

impl FootprintChange {
    /// The asset, parsed (stored text that no longer parses is skipped by callers).
    pub fn parsed(&self) -> Option<FootprintAsset> {
        FootprintAsset::parse(&self.asset).ok()
    }
}

/// Checks an explanation: not empty, at most [`MAX_EXPLANATION`] characters, no control
/// characters but line breaks and tabs.
pub fn explanation(raw: &str) -> Result<String, String> {
    let text = raw.trim();
    if text.is_empty() {
        return Err("an explanation is required".into());
    }
    if text.chars().count() > MAX_EXPLANATION {
        return Err(format!("the explanation is longer than {MAX_EXPLANATION} characters"));
    }
    if text.chars().any(|c| c.is_control() && !matches!(c, '\n' | '\t' | '\r')) {
        return Err("the explanation holds control characters".into());
    }
    Ok(text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assets_parse_and_cover() {
        let r = FootprintAsset::parse("127.86.3.0/24").unwrap();
        assert_eq!(r.addresses().len(), 256);
        assert!(r.covers("127.86.3.9:3389"));
        assert!(r.covers("https://127.86.3.200/"));
        assert!(!r.covers("127.86.4.1:22"));
        assert!(FootprintAsset::parse("127.86.3.1/24").is_err(), "host bits set");
        assert!(FootprintAsset::parse("10.0.0.0/8").is_err(), "too wide");
        assert!(FootprintAsset::parse("::/0").is_err());
        assert_eq!(FootprintAsset::parse("fd00::/120").unwrap().addresses().len(), 256);
        let n = FootprintAsset::parse("shop.acme.test").unwrap();
        assert!(n.covers("api.shop.acme.test:443") && !n.covers("acme.test"));
        assert_eq!(FootprintAsset::parse("[::1]").unwrap(), FootprintAsset::Ip("::1".parse().unwrap()));
        assert!(FootprintAsset::parse("not a name").is_err());
        // A web address is taken for its host.
        let named = |s: &str| FootprintAsset::parse(s).map(|a| a.to_string());
        assert_eq!(named("https://shop.acme.test:8443/x?y").as_deref(), Ok("shop.acme.test"));
        assert_eq!(named("http://[fd00::1]:80/").as_deref(), Ok("fd00::1"));
        assert_eq!(named("https://127.0.0.1/").as_deref(), Ok("127.0.0.1"));
        assert!(FootprintAsset::parse("https:///x").is_err());
        assert!(FootprintAsset::parse("shop.acme.test/24").is_err());
        for s in ["127.86.3.0/24", "shop.acme.test", "127.0.0.1", "fd00::/120"] {
            assert_eq!(FootprintAsset::parse(s).unwrap().to_string(), s);
        }
    }

    #[test]
    fn hosts_of_assets() {
        let h = |a: &str| asset_host(a).map(|d| d.as_str().to_owned());
        assert_eq!(h("www.acme.test:443").as_deref(), Some("www.acme.test"));
        assert_eq!(h("https://www.acme.test/backup/").as_deref(), Some("www.acme.test"));
        assert_eq!(h("s1._domainkey.acme.test").as_deref(), Some("acme.test"));
        assert_eq!(h("_dmarc.acme.test").as_deref(), Some("acme.test"));
        assert_eq!(h("127.0.0.1:22"), None);
        assert_eq!(asset_address("[::1]:443"), Some("::1".parse().unwrap()));
    }

    #[test]
    fn reasons_and_explanations() {
        for r in DisputeReason::ALL {
            assert_eq!(DisputeReason::parse(r.as_str()), Ok(r));
        }
        assert!(DisputeReason::parse("nope").is_err());
        assert!(explanation("  ").is_err());
        assert!(explanation(&"x".repeat(MAX_EXPLANATION + 1)).is_err());
        assert!(explanation("a\u{0}b").is_err());
        assert_eq!(explanation(" behind a VPN\n").unwrap(), "behind a VPN");
    }

    proptest::proptest! {
        #[test]
        fn any_text_parses_or_fails_without_panic(s in "\\PC{0,80}") {
            let _ = FootprintAsset::parse(&s);
            let _ = asset_host(&s);
            let _ = asset_address(&s);
            let _ = explanation(&s);
        }
    }
}
