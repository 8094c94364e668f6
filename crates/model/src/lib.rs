//! Domain types of Rampart, validated where they enter the system.
//!
//! Everything that comes from outside (a query parameter, an import line, a CLI
//! argument) is parsed into one of these types at the edge; code inside trusts them.
//! This crate does no I/O and knows nothing of HTTP, SQL or the network.

pub mod alerts;
pub mod basis;
pub mod check;
pub mod company;
pub mod cpe;
pub mod dispute;
pub mod dpkg;
pub mod event;
pub mod guidelines;
pub mod ids;
pub mod naics;
pub mod net;
pub mod observatory;
pub mod page;
pub mod portfolio;
pub mod risk;
pub mod score;
pub mod timefmt;

pub mod version;

pub use basis::{AttributedCve, CveBasis};
pub use check::{Check, CheckOutcome, ComponentChecks};
pub use company::*;
pub use cpe::{Cpe, CpeError};
pub use dispute::{Dispute, DisputeReason, DisputeState, FootprintAsset, FootprintChange};
pub use event::{Delivery, Event, EventBody, EventKind, EventLink, NewEvent, NewWebhook, SCORE_MOVE, Webhook};
pub use ids::{CveId, Domain, IdError, MAX_DKIM_SELECTORS, SocialId, Website, dkim_selectors, website_host};
pub use observatory::observatory_penalty;
pub use page::{PAGE_SIZE, Page, PageError, Pagination};
pub use portfolio::{Org, Portfolio, Relationship, Stage, Tier, VendorRecord};
pub use risk::{Grade, RiskVector, Severity, UnknownValue};
pub use score::{Score, ScoreError};
pub use version::Version;

/// Is `asset` the name `name` or below it: a host or key record under it, `host:port`,
/// or an origin URL of such a host?
pub fn asset_under(asset: &str, name: &str) -> bool {
    let host = asset.split_once("://").map_or(asset, |(_, rest)| rest.split('/').next().unwrap_or(rest));
    let host = host.split(':').next().unwrap_or(host);
    host == name || host.ends_with(&format!(".{name}"))
}

/// The value at quantile `q` (0 to 1) of `sorted` (ascending), by nearest rank: the
/// smallest value with at least `q` of them at or below it; none of none.
pub fn nearest_rank<T: Copy>(sorted: &[T], q: f64) -> Option<T> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    Some(sorted[rank - 1])
}

#[cfg(test)]
mod tests {
    #[test]
    fn nearest_rank_quantiles() {
        let xs = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
        assert_eq!(super::nearest_rank(&xs, 0.9), Some(9));
        assert_eq!(super::nearest_rank(&xs, 0.91), Some(10));
        assert_eq!(super::nearest_rank(&xs, 0.5), Some(5));
        assert_eq!(super::nearest_rank(&xs, 0.0), Some(1));
        assert_eq!(super::nearest_rank(&xs, 1.0), Some(10));
        assert_eq!(super::nearest_rank(&[5], 0.99), Some(5));
        assert_eq!(super::nearest_rank::<u8>(&[], 0.5), None);
    }
}
