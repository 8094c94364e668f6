//! Rampart's scanner: discovery of a company's internet-facing assets, the network guard
//! every connection goes through (docs/SECURITY.md §1), and the checks of the twelve
//! risk vectors. A scan (`scan`) is gather (`gather`, with the probes of `probes`), then
//! the checks (`checks`, one module per risk vector). Findings use the codes of
//! docs/FINDINGS.md.

pub mod check;
pub mod checks;
pub mod discovery;
pub mod dnssec;
pub mod finding;
pub mod fingerprint;
pub mod gather;
pub mod identity;
pub mod mail;
pub mod probes;
pub mod scan;
pub mod software;
pub mod tls;
pub mod tlsprobe;

// The network side lives in `egress`, the one door out; these are its modules under
// the names the scanner has always used.
pub use egress::{dns, guard, http, wire};

pub use dns::Dns;
pub use finding::{CATALOG, ScanFinding};
pub use guard::{Guard, Policy};
