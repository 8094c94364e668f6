//! The vulnerability database: CPE matching (NISTIR 7695/7696 names, NVD
//! configurations with version ranges), the projection of NVD records to the
//! cve-search shape the API serves, and the importers for NVD CVE (2.0 and 1.1), CISA KEV,
//! FIRST EPSS, MITRE CWE and CAPEC.
//!
//! Feed bytes are untrusted: every parser reports a bad file with its position and
//! never panics. This crate never opens a socket (downloads live in `rampart sync`).

pub mod advisory;
pub mod aliases;
pub mod capec;
pub mod cwe;
pub mod epss;
pub mod import;
pub mod kev;
pub mod matching;
pub mod nvd;
pub mod render;
pub mod search;
pub mod split;
mod store_rows;
/// The version order lives in `model` (the scanner compares versions too).
pub use model::version;

pub use store::cve::ServedCve;
pub use store_rows::{from_cve_search, into_stored, stored};

/// A feed file that cannot be read as what it claims to be.
#[derive(Debug, thiserror::Error)]
pub enum FeedError {
    #[error("reading {what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    /// `position` says where: a line, a record index, or a byte offset.
    #[error("{what}: {position}: {message}")]
    Format { what: String, position: String, message: String },
}

impl FeedError {
    pub fn format(what: impl Into<String>, position: impl Into<String>, message: impl Into<String>) -> Self {
        FeedError::Format { what: what.into(), position: position.into(), message: message.into() }
    }
}

/// A stream that may be gzip-compressed, recognised by its magic bytes.
pub type FeedReader = Box<dyn std::io::BufRead + Send>;

/// Reads a possibly gzip-compressed stream: gzip is recognised by its magic bytes.
pub fn maybe_gzip<R: std::io::BufRead + Send + 'static>(mut reader: R) -> std::io::Result<FeedReader> {
    let head = reader.fill_buf()?;
    if head.starts_with(&[0x1f, 0x8b]) {
        Ok(Box::new(std::io::BufReader::with_capacity(1 << 16, flate2::bufread::MultiGzDecoder::new(reader))))
    } else {
        Ok(Box::new(reader))
    }
}
