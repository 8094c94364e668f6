//! The one door out (docs/SECURITY.md §1). Every connection Rampart opens to the network
//! is made here: the scanner's DNS questions (`wire`, `dns`), its TCP connections through
//! the network guard (`guard`: names parsed, resolved once, addresses checked, limits and
//! deadlines), its HTTP requests (`http`: URLs from parsed parts, a resolver pinned to
//! the checked addresses), and the clients of services an operator configures — the
//! certificate-transparency search and the feed downloads (`service`). No other crate
//! opens a socket or builds an HTTP client; `tests/one_door.rs` fails when one does.
//!
//! This crate never decides what to scan and never touches the database.

pub mod dns;
pub mod guard;
pub mod http;
pub mod service;
pub mod wire;

pub use dns::Dns;
pub use guard::{Guard, Policy};
