//! Domain types of Rampart, validated where they enter the system.
//!
//! Everything that comes from outside (a query parameter, an import line, a CLI
//! argument) is parsed into one of these types at the edge; code inside trusts them.
//! This crate does no I/O and knows nothing of HTTP, SQL or the network.

pub mod company;
pub mod cpe;
pub mod ids;
pub mod page;
pub mod risk;
pub mod score;
pub mod timefmt;

pub use company::*;
pub use cpe::{Cpe, CpeError};
pub use ids::{CveId, Domain, IdError, SocialId};
pub use page::{PAGE_SIZE, Page, PageError, Pagination};
pub use risk::{Grade, RiskVector, Severity, UnknownValue};
pub use score::{Score, ScoreError};
