//! CISA Known Exploited Vulnerabilities (KEV) catalog: one JSON document
//! (`known_exploited_vulnerabilities.json`, about 1.3 MB) with the catalog version, its
//! release time and, under `vulnerabilities`, one record per CVE known to be exploited in
//! the wild, with the action CISA requires and its due date. cve-search shows a record
//! as the `kev` field of a CVE, which [`KevEntry::to_json`] produces.

use std::io::Read;

use serde::Deserialize;
use serde_json::json;

use crate::FeedError;
use crate::cwe::support::{cap_text, excerpt, json_error};

const WHAT: &str = "KEV catalog";

/// The largest catalog accepted, in bytes (the 2025 catalog is about 1.3 MB).
pub const MAX_KEV_BYTES: u64 = 64 * 1024 * 1024;

/// A whole KEV catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KevCatalog {
    /// `catalogVersion`, such as `2025.08.25`.
    pub catalog_version: String,
    /// `dateReleased`, such as `2025-08-25T17:04:19.9796Z`, as written.
    pub date_released: String,
    /// The catalog records, in file order.
    pub entries: Vec<KevEntry>,
}

/// One KEV record. Text fields are kept as written, each capped at 64 KiB; the optional
/// `knownRansomwareCampaignUse`, `notes` and `cwes` are empty when absent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KevEntry {
    /// `cveID`.
    pub cve_id: model::CveId,
    /// `vendorProject`.
    pub vendor_project: String,
    /// `product`.
    pub product: String,
    /// `vulnerabilityName`.
    pub vulnerability_name: String,
    /// `dateAdded` (`YYYY-MM-DD`).
    pub date_added: String,
    /// `shortDescription`.
    pub short_description: String,
    /// `requiredAction`.
    pub required_action: String,
    /// `dueDate` (`YYYY-MM-DD`).
    pub due_date: String,
    /// `knownRansomwareCampaignUse`: `Known` or `Unknown`.
    pub known_ransomware_campaign_use: String,
    /// `notes`.
    pub notes: String,
    /// `cwes`, such as `CWE-59`.
    pub cwes: Vec<String>,
}

impl KevEntry {
    /// The record as cve-search shows it in a CVE's `kev` field (the KEV record without
    /// its `cveID`).
    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "dateAdded": self.date_added,
            "dueDate": self.due_date,
            "vendorProject": self.vendor_project,
            "product": self.product,
            "vulnerabilityName": self.vulnerability_name,
            "shortDescription": self.short_description,
            "requiredAction": self.required_action,
            "knownRansomwareCampaignUse": self.known_ransomware_campaign_use,
            "notes": self.notes,
            "cwes": self.cwes,
        })
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawCatalog {
    catalog_version: String,
    date_released: String,
    vulnerabilities: Vec<RawEntry>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawEntry {
    #[serde(rename = "cveID")]
    cve_id: String,
    vendor_project: String,
    product: String,
    vulnerability_name: String,
    date_added: String,
    short_description: String,
    required_action: String,
    due_date: String,
    #[serde(default)]
    known_ransomware_campaign_use: String,
    #[serde(default)]
    notes: String,
    #[serde(default)]
    cwes: Vec<String>,
}

/// Parses a KEV catalog of at most [`MAX_KEV_BYTES`].
///
/// JSON errors are positioned by line and column; a record whose `cveID` is not a CVE id
/// is an error positioned at `record N`, its index in `vulnerabilities` (from 0).
pub fn parse_kev<R: Read>(reader: R) -> Result<KevCatalog, FeedError> {
    let mut limited = reader.take(MAX_KEV_BYTES + 1);
    let parsed = serde_json::from_reader::<_, RawCatalog>(&mut limited);
    if limited.limit() == 0 {
        return Err(FeedError::format(WHAT, format!("byte {MAX_KEV_BYTES}"), "the catalog is too large"));
    }
    let raw = parsed.map_err(|e| json_error(WHAT, e))?;
    let entries = raw
        .vulnerabilities
        .into_iter()
        .enumerate()
        .map(|(index, entry)| {
            let cve_id = model::CveId::parse(&entry.cve_id).map_err(|_| {
                FeedError::format(
                    WHAT,
                    format!("record {index}"),
                    format!("cveID {} is not a CVE id", excerpt(&entry.cve_id)),
                )
            })?;
            Ok(KevEntry {
                cve_id,
                vendor_project: cap_text(entry.vendor_project),
                product: cap_text(entry.product),
                vulnerability_name: cap_text(entry.vulnerability_name),
                date_added: cap_text(entry.date_added),
                short_description: cap_text(entry.short_description),
                required_action: cap_text(entry.required_action),
                due_date: cap_text(entry.due_date),
                known_ransomware_campaign_use: cap_text(entry.known_ransomware_campaign_use),
                notes: cap_text(entry.notes),
                cwes: entry.cwes.into_iter().map(cap_text).collect(),
            })
        })
        .collect::<Result<_, FeedError>>()?;
    Ok(KevCatalog {
        catalog_version: cap_text(raw.catalog_version),
        date_released: cap_text(raw.date_released),
        entries,
    })
}

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::io::BufReader;

    use proptest::prelude::*;

    use super::*;
    use crate::cwe::support::shared_data;

    const SMALL: &str = r#"{
        "title": "CISA Catalog of Known Exploited Vulnerabilities",
        "catalogVersion": "2025.08.25",
        "dateReleased": "2025-08-25T17:04:19.9796Z",
        "count": 2,
        "vulnerabilities": [
            {"cveID": "CVE-2025-48384", "vendorProject": "Git", "product": "Git",
             "vulnerabilityName": "Git Link Following Vulnerability", "dateAdded": "2025-08-25",
             "shortDescription": "Git contains a link following vulnerability.",
             "requiredAction": "Apply mitigations.", "dueDate": "2025-09-15",
             "knownRansomwareCampaignUse": "Unknown", "notes": "https://example.org", "cwes": ["CWE-59", "CWE-436"]},
            {"cveID": "CVE-2021-44228", "vendorProject": "Apache", "product": "Log4j2",
             "vulnerabilityName": "Log4Shell", "dateAdded": "2021-12-10", "shortDescription": "JNDI.",
             "requiredAction": "Patch.", "dueDate": "2021-12-24"}
        ]
    }"#;

    #[test]
    fn small_catalog() {
        let catalog = parse_kev(SMALL.as_bytes()).unwrap();
        assert_eq!(catalog.catalog_version, "2025.08.25");
        assert_eq!(catalog.date_released, "2025-08-25T17:04:19.9796Z");
        assert_eq!(catalog.entries.len(), 2);
        let git = &catalog.entries[0];
        assert_eq!(git.cve_id.as_str(), "CVE-2025-48384");
        assert_eq!(
            git.to_json(),
            json!({
                "dateAdded": "2025-08-25", "dueDate": "2025-09-15", "vendorProject": "Git", "product": "Git",
                "vulnerabilityName": "Git Link Following Vulnerability",
                "shortDescription": "Git contains a link following vulnerability.",
                "requiredAction": "Apply mitigations.", "knownRansomwareCampaignUse": "Unknown",
                "notes": "https://example.org", "cwes": ["CWE-59", "CWE-436"]
            })
        );
        let log4j = &catalog.entries[1];
        assert_eq!((log4j.notes.as_str(), log4j.cwes.len()), ("", 0));
    }

    #[test]
    fn bad_cve_id_names_the_record() {
        let bad = SMALL.replace("CVE-2021-44228", "CVE-21-44228");
        match parse_kev(bad.as_bytes()) {
            Err(FeedError::Format { position, message, .. }) => {
                assert_eq!(position, "record 1");
                assert!(message.contains("CVE-21-44228"), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn missing_field_is_a_format_error() {
        let bad = SMALL.replace(r#""product": "Log4j2","#, "");
        let err = parse_kev(bad.as_bytes()).unwrap_err();
        assert!(matches!(&err, FeedError::Format { message, .. } if message.contains("product")), "{err}");
    }

    #[test]
    fn real_catalog() {
        let Some(path) = shared_data("kev/known_exploited_vulnerabilities.json") else { return };
        let catalog = parse_kev(BufReader::new(File::open(path).unwrap())).unwrap();
        assert_eq!(catalog.catalog_version, "2025.08.25");
        assert_eq!(catalog.entries.len(), 1404);
        let first = &catalog.entries[0];
        assert_eq!(first.cve_id.as_str(), "CVE-2025-48384");
        assert_eq!(first.to_json()["cwes"][0], "CWE-59");
    }

    #[test]
    fn truncated_real_catalog_is_a_format_error() {
        let Some(path) = shared_data("kev/known_exploited_vulnerabilities.json") else { return };
        let head: Vec<u8> = std::fs::read(path).unwrap().into_iter().take(5000).collect();
        let err = parse_kev(head.as_slice()).unwrap_err();
        assert!(matches!(err, FeedError::Format { .. }), "{err}");
    }

    proptest! {
        #[test]
        fn never_panics(cut in 0..SMALL.len(), junk in "[\\[\\]{}\",:a-z0-9 ]{0,20}") {
            let mut text = SMALL.as_bytes()[..cut].to_vec();
            text.extend_from_slice(junk.as_bytes());
            let _ = parse_kev(text.as_slice());
        }
    }
}
