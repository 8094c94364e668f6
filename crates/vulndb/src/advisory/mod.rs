//! Vendors' and distributions' own statements of which versions a CVE affects, read from
//! the formats they publish, into one model: a [`Statement`] per CVE and product (or
//! package), with the versions stated affected, not affected and of unknown status.
//! NVD's CPE configurations are a third party's reading of those statements, often late
//! or coarse; a publisher's own statement can later override them, as VEX does.
//!
//! The readers, one per format:
//! - [`parse_httpd`]: Apache httpd's per-CVE JSON (CVE JSON 4.0 with `version_affected`
//!   operators, or CVE JSON 5);
//! - [`parse_nginx`]: nginx.org's `security_advisories.xml`;
//! - [`parse_cve5`]: any CVE JSON 5 record (OpenSSL publishes these);
//! - [`parse_osv`]: OSV records (GitHub advisories, Ubuntu's USN and UBUNTU-CVE records);
//! - [`parse_debian_tracker`]: the Debian security tracker's JSON export;
//! - [`parse_any`]: one of the above, recognised by the content.
//!
//! Versions are kept as written, in the product's own scheme; [`Statement::verdict`]
//! compares them with [`model::version::Version`] for upstream releases and with
//! [`model::dpkg::DpkgVersion`] for Debian and Ubuntu packages. The input is untrusted:
//! every reader returns a [`FeedError`] for what it cannot read, never panics, and refuses
//! more than [`MAX_STATEMENTS`] statements (the Debian tracker: `debian::MAX_TRACKER_STATEMENTS`) or a
//! version longer than [`MAX_VERSION_BYTES`].

use std::cmp::Ordering;
use std::fmt;

use model::CveId;
use model::dpkg::DpkgVersion;
use model::version::Version;
use serde::de::{DeserializeOwned, IgnoredAny};
use serde::{Deserialize, Serialize};
use store::cve::AdvisoryRow;

use crate::FeedError;
use crate::cwe::support::{cap_text, excerpt, json_error};

mod cve4;
mod cve5;
mod debian;
mod nginx;
mod osv;

#[cfg(test)]
mod data_tests;

pub use cve4::parse_httpd;
pub use cve5::parse_cve5;
pub use debian::parse_debian_tracker;
pub use nginx::parse_nginx;
pub use osv::parse_osv;

/// The most statements one file may hold; a file with more is refused rather than read
/// into memory (a vendor's per-CVE file holds a handful).
pub const MAX_STATEMENTS: usize = 10_000;
/// The longest version string accepted, in bytes.
pub const MAX_VERSION_BYTES: usize = 64 * 1024;

/// Where a statement comes from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Source {
    /// The Apache HTTP Server project (its per-CVE JSON, CVE JSON 4 or 5).
    Httpd,
    /// nginx.org's security advisories.
    Nginx,
    /// The OpenSSL project (its CVE JSON 5 records).
    Openssl,
    /// A CVE record (JSON 4 or 5) about a product none of the above: the record's vendor
    /// and product names, as written.
    Cna { vendor: String, product: String },
    /// An OSV record of `ecosystem` (`npm`, `Ubuntu:20.04:LTS`, …). `distro` is the
    /// `distro` qualifier of the package's purl when it has one (`focal`,
    /// `fips-updates/xenial`): Ubuntu names two channels of one release by the same
    /// ecosystem (`Ubuntu:Pro:FIPS:16.04:LTS` holds both `fips/xenial` and
    /// `fips-updates/xenial`, one fixed and one not), so the statement keeps which one.
    Osv { ecosystem: String, distro: Option<String> },
    /// The Debian security tracker, for one release by its code name (`bookworm`).
    Debian { release: String },
}

impl Source {
    /// The version order the statement's versions are in: Debian and Ubuntu package
    /// versions are dpkg versions, everything else an upstream release number.
    pub fn scheme(&self) -> Scheme {
        match self {
            Source::Debian { .. } => Scheme::Dpkg,
            Source::Osv { ecosystem, .. } => {
                let family = ecosystem.split(':').next().unwrap_or_default();
                if family == "Ubuntu" || family == "Debian" { Scheme::Dpkg } else { Scheme::Upstream }
            }
            Source::Httpd | Source::Nginx | Source::Openssl | Source::Cna { .. } => Scheme::Upstream,
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Httpd => f.write_str("httpd"),
            Source::Nginx => f.write_str("nginx"),
            Source::Openssl => f.write_str("openssl"),
            Source::Cna { vendor, product } => write!(f, "cve record {vendor} / {product}"),
            Source::Osv { ecosystem, .. } => write!(f, "osv {ecosystem}"),
            Source::Debian { release } => write!(f, "debian {release}"),
        }
    }
}

/// A version order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// [`model::version::Version`]: upstream release numbers (`2.4.49`, `1.0.1g`).
    Upstream,
    /// [`model::dpkg::DpkgVersion`]: Debian package versions (`1:8.2p1-4ubuntu0.5`).
    Dpkg,
}

/// A version bound or set, in the product's own version scheme.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Affected {
    /// One version.
    Exact(String),
    /// The versions from `introduced` (inclusive; `None`: from the first) below `fixed`
    /// (exclusive) and up to `last_affected` (inclusive); an absent bound does not bound.
    Range { introduced: Option<String>, fixed: Option<String>, last_affected: Option<String> },
    /// Every version.
    All,
}

impl Affected {
    /// Whether `version` is in the set, compared in `scheme`. A bound that does not parse
    /// in `scheme` contains nothing (the readers check every bound, so that only happens to
    /// a hand-made value).
    pub fn contains(&self, scheme: Scheme, version: &str) -> bool {
        match scheme {
            Scheme::Upstream => self.contains_by(&Version::parse(version), |s| Some(Version::parse(s))),
            Scheme::Dpkg => match DpkgVersion::parse(version) {
                Ok(v) => self.contains_by(&v, |s| DpkgVersion::parse(s).ok()),
                Err(_) => false,
            },
        }
    }

    fn contains_by<T: Ord>(&self, version: &T, parse: impl Fn(&str) -> Option<T>) -> bool {
        let holds = |bound: &Option<String>, test: fn(Ordering) -> bool| match bound {
            None => true,
            Some(b) => parse(b).is_some_and(|b| test(version.cmp(&b))),
        };
        match self {
            Affected::All => true,
            Affected::Exact(v) => parse(v).is_some_and(|v| v == *version),
            Affected::Range { introduced, fixed, last_affected } => {
                holds(introduced, Ordering::is_ge)
                    && holds(fixed, Ordering::is_lt)
                    && holds(last_affected, Ordering::is_le)
            }
        }
    }

    /// The version strings the set names.
    fn versions(&self) -> impl Iterator<Item = &str> {
        let (a, b, c) = match self {
            Affected::All => (None, None, None),
            Affected::Exact(v) => (Some(v), None, None),
            Affected::Range { introduced, fixed, last_affected } => {
                (introduced.as_ref(), fixed.as_ref(), last_affected.as_ref())
            }
        };
        [a, b, c].into_iter().flatten().map(String::as_str)
    }
}

/// One publisher's statement about one CVE and one product (or package). The store keeps
/// it as its JSON (`Statement::row`, `Statement::from_row`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Statement {
    pub cve: CveId,
    pub source: Source,
    /// The CPE vendor and product NVD uses for the product: `apache`/`http_server`,
    /// `f5`/`nginx` (NVD's current records use F5's name; the old 1.1 feeds said
    /// `nginx`/`nginx`), `openssl`/`openssl`, `jquery`/`jquery`; `None` for a
    /// distribution package and for products this module does not know.
    pub cpe_product: Option<(String, String)>,
    /// The package name for OSV and Debian records (npm name, Ubuntu or Debian source
    /// package).
    pub package: Option<String>,
    /// The platform the statement is limited to, when the publisher limits it (nginx's
    /// `nginx/Windows`, httpd's `Windows`, CVE 5 `platforms`): on other platforms the
    /// statement says nothing. [`Statement::verdict`] answers for that platform.
    pub platform: Option<String>,
    /// Versions the publisher states are affected.
    pub affected: Vec<Affected>,
    /// Versions the publisher states are NOT affected (nginx "not vulnerable", CVE 5
    /// `unaffected` entries, httpd `!` operators). They win over `affected`: nginx lists a
    /// fixed stable branch inside the vulnerable range (`0.7.62+` in `0.1.0-0.8.14`).
    pub unaffected: Vec<Affected>,
    /// Versions whose status the publisher states it does not know (httpd `?=`, CVE 5
    /// `unknown` entries, Debian `undetermined`).
    pub unknown: Vec<Affected>,
    /// What the publisher says of a version in none of the lists: `Some(false)` when the
    /// statement is a complete list of the affected versions (httpd, nginx, CVE 5 with
    /// `defaultStatus` `unaffected`, OSV), `Some(true)` for CVE 5 `defaultStatus`
    /// `affected`, `None` when it is silent.
    pub otherwise: Option<bool>,
}

impl Statement {
    /// What the publisher says of `version`: `Some(true)` affected, `Some(false)` not
    /// affected, `None` silent or unknown. Upstream versions compare with
    /// [`model::version::Version`]; Ubuntu/Debian ecosystems with
    /// [`model::dpkg::DpkgVersion`] (a version that is not a dpkg version gets `None`).
    pub fn verdict(&self, version: &str) -> Option<bool> {
        let scheme = self.source.scheme();
        if scheme == Scheme::Dpkg && DpkgVersion::parse(version).is_err() {
            return None;
        }
        let hit = |list: &[Affected]| list.iter().any(|a| a.contains(scheme, version));
        if hit(&self.unaffected) {
            Some(false)
        } else if hit(&self.affected) {
            Some(true)
        } else if hit(&self.unknown) {
            None
        } else {
            self.otherwise
        }
    }

    /// Every version string the statement names.
    pub fn versions(&self) -> impl Iterator<Item = &str> {
        self.affected.iter().chain(&self.unaffected).chain(&self.unknown).flat_map(Affected::versions)
    }
}

impl fmt::Display for Affected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Affected::All => f.write_str("every version"),
            Affected::Exact(v) => f.write_str(v),
            Affected::Range { introduced, fixed, last_affected } => {
                let mut parts = Vec::new();
                if let Some(i) = introduced {
                    parts.push(format!("from {i}"));
                }
                if let Some(l) = last_affected {
                    parts.push(format!("through {l}"));
                }
                if let Some(x) = fixed {
                    parts.push(format!("before {x}"));
                }
                if parts.is_empty() { f.write_str("every version") } else { f.write_str(&parts.join(" ")) }
            }
        }
    }
}

impl Source {
    /// A short, stable name of the publisher and channel, part of a statement's key.
    fn key(&self) -> String {
        match self {
            Source::Httpd | Source::Nginx | Source::Openssl => self.to_string(),
            Source::Cna { vendor, product } => format!("cna:{vendor}:{product}"),
            Source::Osv { ecosystem, distro } => match distro {
                Some(d) => format!("osv:{ecosystem}:{d}"),
                None => format!("osv:{ecosystem}"),
            },
            Source::Debian { release } => format!("debian:{release}"),
        }
    }

    /// Whether the publisher is the product's vendor and lists every CVE of its product
    /// (Apache httpd, nginx, OpenSSL do): a CVE it does not list is not one it confirms.
    pub fn lists_every_cve(&self) -> bool {
        matches!(self, Source::Httpd | Source::Nginx | Source::Openssl)
    }

    /// The publisher as a reader names it: "the Apache httpd security team",
    /// "Ubuntu (Ubuntu:20.04:LTS)".
    pub fn publisher(&self) -> String {
        match self {
            Source::Httpd => "the Apache HTTP Server project".into(),
            Source::Nginx => "nginx.org".into(),
            Source::Openssl => "the OpenSSL project".into(),
            Source::Cna { vendor, .. } => vendor.clone(),
            Source::Osv { ecosystem, distro } => {
                let family = ecosystem.split(':').next().unwrap_or_default();
                let channel = distro.as_deref().map(|d| format!(" {d}")).unwrap_or_default();
                if family == "Ubuntu" || family == "Debian" {
                    format!("{family} ({ecosystem}{channel})")
                } else {
                    format!("the {ecosystem} advisory database")
                }
            }
            Source::Debian { release } => format!("Debian ({release})"),
        }
    }
}

impl Statement {
    /// The CPE product it speaks of: the publisher's product, or for a distribution's
    /// package the upstream product the package ships (`crate::aliases::package_product`).
    pub fn product(&self) -> Option<(String, String)> {
        self.cpe_product.clone().or_else(|| {
            let package = self.package.as_deref()?;
            (self.source.scheme() == Scheme::Dpkg)
                .then(|| crate::aliases::package_product(package))
                .flatten()
                .map(|(v, p)| (v.to_owned(), p.to_owned()))
        })
    }

    /// Unique per CVE: the publisher and channel, the product or package, the platform.
    pub fn key(&self) -> String {
        let what = match (&self.package, &self.cpe_product) {
            (Some(package), _) => package.clone(),
            (None, Some((v, p))) => format!("{v}:{p}"),
            (None, None) => String::new(),
        };
        let platform = self.platform.as_deref().unwrap_or("");
        format!("{} {what} {platform}", self.source.key()).trim_end().to_owned()
    }

    /// What the store keeps of it.
    pub fn row(&self) -> Result<AdvisoryRow, serde_json::Error> {
        let product = self.product();
        Ok(AdvisoryRow {
            cve_id: self.cve.clone(),
            key: self.key(),
            vendor: product.as_ref().map(|(v, _)| v.clone()),
            product: product.map(|(_, p)| p),
            package: self.package.clone(),
            statement: serde_json::to_string(self)?,
        })
    }

    /// The statement a stored row keeps.
    pub fn from_row(row: &AdvisoryRow) -> Result<Self, serde_json::Error> {
        serde_json::from_str(&row.statement)
    }

    /// Why the publisher's word on `version` is what [`Statement::verdict`] says, for a
    /// finding's evidence: "the Apache HTTP Server project states 2.4.49 affected (from
    /// 2.4.49 before 2.4.50)".
    pub fn explain(&self, version: &str) -> String {
        let scheme = self.source.scheme();
        let first = |list: &[Affected]| list.iter().find(|a| a.contains(scheme, version)).map(ToString::to_string);
        let on = self.platform.as_deref().map(|p| format!(" on {p}")).unwrap_or_default();
        let publisher = self.source.publisher();
        let subject = self.package.as_deref().map(|p| format!("package {p} ")).unwrap_or_default();
        match (first(&self.unaffected), first(&self.affected)) {
            (Some(range), _) => format!("{publisher} states {subject}{version}{on} not affected ({range})"),
            (None, Some(range)) => format!("{publisher} states {subject}{version}{on} affected ({range})"),
            (None, None) => match self.otherwise {
                Some(false) => {
                    format!("{publisher} lists the affected versions{on}; {subject}{version} is not among them")
                }
                Some(true) => format!("{publisher} states every version{on} affected but those it lists"),
                None => format!("{publisher} does not say whether {subject}{version}{on} is affected"),
            },
        }
    }
}

/// Reads any of the formats above by sniffing the content: XML is nginx's advisories;
/// JSON is a CVE 5 record (`dataType`/`cveMetadata`), a CVE 4 record (`CVE_data_meta`),
/// an OSV record (`id` and `affected`) or else the Debian tracker (an object of package
/// names). `name` (a file name) only labels the errors.
pub fn parse_any(name: &str, bytes: &[u8]) -> Result<Vec<Statement>, FeedError> {
    let label = |e: FeedError| match e {
        FeedError::Format { what, position, message } => {
            FeedError::Format { what: format!("{} ({what})", excerpt(name)), position, message }
        }
        other => other,
    };
    let text = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let first = text.iter().find(|b| !b.is_ascii_whitespace());
    match first {
        Some(b'<') => parse_nginx(bytes).map_err(label),
        Some(b'{') => {
            #[derive(serde::Deserialize)]
            struct Sniff {
                #[serde(rename = "dataType")]
                data_type: Option<IgnoredAny>,
                #[serde(rename = "cveMetadata")]
                cve_metadata: Option<IgnoredAny>,
                #[serde(rename = "CVE_data_meta")]
                cve_data_meta: Option<IgnoredAny>,
                id: Option<IgnoredAny>,
                affected: Option<IgnoredAny>,
            }
            let sniff: Sniff = json("advisory", text).map_err(label)?;
            if sniff.data_type.is_some() || sniff.cve_metadata.is_some() {
                parse_cve5(text).map_err(label)
            } else if sniff.cve_data_meta.is_some() {
                parse_httpd(text).map_err(label)
            } else if sniff.id.is_some() && sniff.affected.is_some() {
                parse_osv(text).map_err(label)
            } else {
                parse_debian_tracker(text).map_err(label)
            }
        }
        _ => Err(label(FeedError::format("advisory", "byte 0", "neither a JSON object nor an XML document"))),
    }
}

/// Deserializes a whole JSON document, positioning errors by line and column.
fn json<T: DeserializeOwned>(what: &str, bytes: &[u8]) -> Result<T, FeedError> {
    serde_json::from_slice(bytes).map_err(|e| json_error(what, e))
}

/// A CVE id as a [`CveId`], or an error at `position`.
fn cve_id(what: &str, position: &str, raw: &str) -> Result<CveId, FeedError> {
    CveId::parse(raw).map_err(|_| FeedError::format(what, position, format!("{} is not a CVE id", excerpt(raw))))
}

/// The CVE an id names: a CVE id itself, or an id made of a prefix and a CVE id
/// (`UBUNTU-CVE-2023-38408`, `DEBIAN-CVE-…`).
fn cve_in(id: &str) -> Option<CveId> {
    let upper = id.trim().to_ascii_uppercase();
    let at = if upper.starts_with("CVE-") { 0 } else { upper.find("-CVE-")? + 1 };
    CveId::parse(&upper[at..]).ok()
}

/// A version string as written (trimmed), refused when longer than
/// [`MAX_VERSION_BYTES`] or empty, and in the dpkg scheme when dpkg would not read it.
fn version(what: &str, position: &str, scheme: Scheme, raw: &str) -> Result<String, FeedError> {
    if raw.len() > MAX_VERSION_BYTES {
        return Err(FeedError::format(what, position, format!("a version is longer than {MAX_VERSION_BYTES} bytes")));
    }
    let v = raw.trim();
    if v.is_empty() {
        return Err(FeedError::format(what, position, "a version is empty"));
    }
    if scheme == Scheme::Dpkg
        && let Err(e) = DpkgVersion::parse(v)
    {
        return Err(FeedError::format(what, position, format!("{} is not a Debian version: {e}", excerpt(v))));
    }
    Ok(v.to_owned())
}

/// A lower bound: `None` for the bounds that mean "from the first version" (`0` in OSV
/// and CVE 5, and the placeholders CVE 5 records use).
fn lower_bound(what: &str, position: &str, scheme: Scheme, raw: &str) -> Result<Option<String>, FeedError> {
    if is_placeholder(raw) || raw.trim() == "0" { Ok(None) } else { version(what, position, scheme, raw).map(Some) }
}

/// The version placeholders CVE records write when the publisher gives no version.
fn is_placeholder(raw: &str) -> bool {
    matches!(raw.trim().to_ascii_lowercase().as_str(), "" | "*" | "-" | "n/a" | "unspecified" | "unknown")
}

/// The CPE vendor and product NVD uses for a product named by its publisher.
fn known_cpe(vendor: &str, product: &str) -> Option<(String, String)> {
    let pair = |v: &str, p: &str| Some((v.to_owned(), p.to_owned()));
    let (vendor, product) = (vendor.trim().to_ascii_lowercase(), product.trim().to_ascii_lowercase());
    match (vendor.as_str(), product.as_str()) {
        ("apache software foundation", "apache http server") => pair("apache", "http_server"),
        ("openssl", "openssl") => pair("openssl", "openssl"),
        ("npm" | "nuget", "jquery") => pair("jquery", "jquery"),
        ("maven", "org.webjars.npm:jquery" | "org.webjars:jquery" | "org.webjars.bower:jquery") => {
            pair("jquery", "jquery")
        }
        _ => None,
    }
}

/// The statements of one file, refused past [`MAX_STATEMENTS`].
struct Statements {
    what: &'static str,
    list: Vec<Statement>,
}

impl Statements {
    fn new(what: &'static str) -> Self {
        Self { what, list: Vec::new() }
    }

    fn push(&mut self, position: &str, statement: Statement) -> Result<(), FeedError> {
        if self.list.len() >= MAX_STATEMENTS {
            return Err(too_many(self.what, position));
        }
        self.list.push(statement);
        Ok(())
    }

    fn finish(self) -> Vec<Statement> {
        self.list
    }
}

fn too_many(what: &str, position: &str) -> FeedError {
    FeedError::format(what, position, format!("the file holds more than {MAX_STATEMENTS} statements"))
}

/// Publisher-given names (vendor, product, platform, package), capped like other text.
fn name(raw: &str) -> String {
    cap_text(raw.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn statement(
        source: Source,
        affected: Vec<Affected>,
        unaffected: Vec<Affected>,
        otherwise: Option<bool>,
    ) -> Statement {
        Statement {
            cve: CveId::parse("CVE-2024-0001").unwrap(),
            source,
            cpe_product: None,
            package: None,
            platform: None,
            affected,
            unaffected,
            unknown: vec![Affected::Exact("1.5".into())],
            otherwise,
        }
    }

    fn range(i: Option<&str>, f: Option<&str>, l: Option<&str>) -> Affected {
        Affected::Range { introduced: i.map(Into::into), fixed: f.map(Into::into), last_affected: l.map(Into::into) }
    }

    #[test]
    fn advisory_verdict_precedence() {
        let s = statement(
            Source::Nginx,
            vec![range(Some("1.0"), None, Some("2.0")), Affected::Exact("3.0".into())],
            vec![range(Some("1.8"), Some("1.9"), None)],
            Some(false),
        );
        assert_eq!(s.verdict("0.9"), Some(false));
        assert_eq!(s.verdict("1.0"), Some(true));
        assert_eq!(s.verdict("1.5"), Some(true), "affected wins over unknown");
        assert_eq!(s.verdict("1.8.3"), Some(false), "unaffected wins over affected");
        assert_eq!(s.verdict("1.9"), Some(true));
        assert_eq!(s.verdict("2.0"), Some(true));
        assert_eq!(s.verdict("2.0.1"), Some(false));
        assert_eq!(s.verdict("3.0.0"), Some(true));
        let silent = Statement { otherwise: None, ..s.clone() };
        assert_eq!(silent.verdict("2.5"), None);
        let unknown = Statement { affected: vec![], ..s };
        assert_eq!(unknown.verdict("1.5"), None);
    }

    #[test]
    fn advisory_dpkg_scheme() {
        let ubuntu = Source::Osv { ecosystem: "Ubuntu:20.04:LTS".into(), distro: None };
        assert_eq!(ubuntu.scheme(), Scheme::Dpkg);
        assert_eq!(Source::Osv { ecosystem: "npm".into(), distro: None }.scheme(), Scheme::Upstream);
        let s = statement(ubuntu, vec![range(None, Some("1:8.2p1-4ubuntu0.8"), None)], vec![], Some(false));
        assert_eq!(s.verdict("1:8.2p1-4ubuntu0.5"), Some(true));
        assert_eq!(s.verdict("1:8.2p1-4ubuntu0.11"), Some(false), "0.11 > 0.8 for dpkg");
        assert_eq!(s.verdict("8.2p1-4ubuntu0.5"), Some(true), "no epoch is epoch 0");
        assert_eq!(s.verdict("1:8.2p1-4ubuntu0.8~rc"), Some(true), "~ sorts first");
        assert_eq!(s.verdict("not a version!"), None);
        assert!(!Affected::Exact("bad version!".into()).contains(Scheme::Dpkg, "1.0"));
    }

    #[test]
    fn advisory_cve_ids_in_other_ids() {
        assert_eq!(cve_in("UBUNTU-CVE-2023-38408").unwrap().as_str(), "CVE-2023-38408");
        assert_eq!(cve_in("cve-2019-11358").unwrap().as_str(), "CVE-2019-11358");
        assert!(cve_in("USN-6242-1").is_none());
        assert!(cve_in("GHSA-6c3j-c64m-qhgq").is_none());
    }

    #[test]
    fn advisory_parse_any_refuses_other_content() {
        for bad in [&b""[..], b"   ", b"[1,2]", b"hello", b"\xff\xfe"] {
            assert!(parse_any("x", bad).is_err(), "{bad:?}");
        }
        let err = parse_any("file.json", b"{\"id\": 1, \"affected\": []}").unwrap_err();
        assert!(err.to_string().starts_with("\"file.json\" (OSV record)"), "{err}");
    }
}
