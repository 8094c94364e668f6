//! Why a CVE is attributed to a detected product, and whether it counts
//! (docs/METHODOLOGY.md, "Vulnerabilities: the basis of a CVE").
//!
//! NVD's configurations are written for search: a wildcard entry with no version bounds,
//! an entry for a Windows build, or an AND with a platform make a CVE "match" software
//! its vendor never said was affected. A company is charged only with what its
//! software's vendor, or a bounded NVD entry, says affects the version seen; the rest is
//! listed with its basis and never scored. A distribution's package its distribution
//! has said nothing of is charged on the upstream word with a lower confidence.

use serde::{Deserialize, Serialize};

use crate::CveId;

/// The basis of one attribution, strongest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CveBasis {
    /// The vendor's own advisory names the version as affected.
    Vendor,
    /// An NVD entry names the version, a pattern of versions or a bounded range.
    NvdRange,
    /// As `nvd-range` (or the upstream vendor's word), for a distribution's package
    /// (`Apache/2.4.41 (Ubuntu)`) whose distribution has said nothing Rampart holds of
    /// this CVE and package version: a backported fix is possible, so the attribution is
    /// scored with a lower confidence shown to the reader.
    DistributionBackportUnknown,
    /// It holds only together with a platform (an AND configuration) the scan did not
    /// observe on the host.
    PlatformConditional,
    /// The covering NVD entry has a wildcard version with no bounds, or is restricted to
    /// an edition or target platform the detection does not name.
    Unbounded,
    /// Matched by NVD, but the software's vendor publishes its own list of the product's
    /// CVEs (Apache httpd, nginx, OpenSSL) and this one is not on it: often another
    /// product NVD's configuration names too, or a protocol flaw the scan checks on its
    /// own (POODLE, Logjam).
    VendorUnlisted,
}

impl CveBasis {
    pub const ALL: [CveBasis; 6] = [
        Self::Vendor,
        Self::NvdRange,
        Self::DistributionBackportUnknown,
        Self::PlatformConditional,
        Self::Unbounded,
        Self::VendorUnlisted,
    ];

    /// Whether it opens a finding and counts in the rating.
    pub fn scored(self) -> bool {
        matches!(self, Self::Vendor | Self::NvdRange | Self::DistributionBackportUnknown)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Vendor => "vendor",
            Self::NvdRange => "nvd-range",
            Self::DistributionBackportUnknown => "distribution-backport-unknown",
            Self::PlatformConditional => "platform-conditional",
            Self::Unbounded => "unbounded",
            Self::VendorUnlisted => "vendor-unlisted",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|b| b.as_str() == raw)
    }
}

impl std::fmt::Display for CveBasis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A CVE attributed to a component, with its basis. Read from an id alone (an imported
/// SBOM names the CVEs it asserts): the basis is then `nvd-range`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct AttributedCve {
    pub id: CveId,
    pub basis: CveBasis,
}

impl AttributedCve {
    pub fn new(id: CveId, basis: CveBasis) -> Self {
        Self { id, basis }
    }
}

impl<'de> Deserialize<'de> for AttributedCve {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Id(CveId),
            Full { id: CveId, basis: CveBasis },
        }
        Ok(match Raw::deserialize(d)? {
            Raw::Id(id) => Self { id, basis: CveBasis::NvdRange },
            Raw::Full { id, basis } => Self { id, basis },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_vendor_and_bounded_nvd_attributions_count() {
        let scored: Vec<_> = CveBasis::ALL.into_iter().filter(|b| b.scored()).collect();
        assert_eq!(scored, [CveBasis::Vendor, CveBasis::NvdRange, CveBasis::DistributionBackportUnknown]);
        for b in CveBasis::ALL {
            assert_eq!(CveBasis::parse(b.as_str()), Some(b));
            assert_eq!(serde_json::to_value(b).unwrap(), b.as_str());
        }
        assert_eq!(CveBasis::parse("nvd"), None);
    }

    #[test]
    fn an_attribution_reads_from_an_id_or_in_full() {
        let id = CveId::parse("CVE-2021-41773").unwrap();
        let bare: AttributedCve = serde_json::from_str("\"CVE-2021-41773\"").unwrap();
        assert_eq!(bare, AttributedCve::new(id.clone(), CveBasis::NvdRange));
        let full: AttributedCve = serde_json::from_str(r#"{"id":"CVE-2021-41773","basis":"unbounded"}"#).unwrap();
        assert_eq!(full, AttributedCve::new(id, CveBasis::Unbounded));
        assert_eq!(serde_json::to_string(&full).unwrap(), r#"{"id":"CVE-2021-41773","basis":"unbounded"}"#);
        assert!(serde_json::from_str::<AttributedCve>(r#"{"id":"CVE-2021-41773","basis":"guess"}"#).is_err());
        assert!(serde_json::from_str::<AttributedCve>("\"not-a-cve\"").is_err());
    }
}
