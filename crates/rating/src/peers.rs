//! Peer benchmarks: where a company's global score stands among the rated companies of
//! its NAICS sector and size band, and among all rated companies (docs/METHODOLOGY.md,
//! "Peer benchmarks").
//!
//! The percentile is the percentile rank of the score among the peers (the group
//! without the company itself): 100 × (peers scoring lower + ½ × peers scoring the
//! same) / peers. A group of fewer than [`MIN_PEERS`] peers gives none: a rank among a
//! handful of companies says little and would name them.

use serde::Serialize;

/// The fewest peers a percentile is given for.
pub const MIN_PEERS: usize = 10;

/// The NAICS sector of a code: its first two digits, with the sectors NAICS spans over
/// several two-digit codes taken whole (31-33 Manufacturing, 44-45 Retail Trade, 48-49
/// Transportation and Warehousing).
pub fn sector_of(naics: i64) -> Option<&'static str> {
    let mut n = naics;
    while n >= 100 {
        n /= 10;
    }
    Some(match n {
        11 => "11",
        21 => "21",
        22 => "22",
        23 => "23",
        31..=33 => "31-33",
        42 => "42",
        44 | 45 => "44-45",
        48 | 49 => "48-49",
        51 => "51",
        52 => "52",
        53 => "53",
        54 => "54",
        55 => "55",
        56 => "56",
        61 => "61",
        62 => "62",
        71 => "71",
        72 => "72",
        81 => "81",
        92 => "92",
        _ => return None,
    })
}

/// The title of a sector (`31-33` → Manufacturing).
pub fn sector_title(sector: &str) -> &'static str {
    let first = sector.split('-').next().and_then(|c| c.parse::<u32>().ok()).unwrap_or(0);
    model::naics::title(first).unwrap_or("unknown sector")
}

/// Size bands by employees.
pub const BANDS: [(f64, &str); 5] =
    [(50.0, "1-49"), (250.0, "50-249"), (1000.0, "250-999"), (5000.0, "1,000-4,999"), (f64::INFINITY, "5,000+")];

/// The size band of an employee count as companies state it (`250`, `1001-5000`,
/// `51-200 employees`): the band of its (geometric) middle.
pub fn band_of(employees: &str) -> Option<&'static str> {
    let n = crate::predict::Profile::from_employees(employees)?;
    if !n.is_finite() || n < 1.0 {
        return None;
    }
    BANDS.iter().find(|(below, _)| n < *below).map(|(_, name)| *name)
}

/// One rated company of the population.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub id: i64,
    pub sector: Option<&'static str>,
    pub band: Option<&'static str>,
    /// The global score, 0–100.
    pub score: f64,
}

impl Member {
    pub fn new(id: i64, naics: Option<i64>, employees: &str, score: f64) -> Member {
        Member { id, sector: naics.and_then(sector_of), band: band_of(employees), score }
    }
}

/// A company's standing in one peer group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Benchmark {
    /// What the group is (`NAICS 52 Finance and Insurance, 250-999 employees`, `all
    /// rated companies`).
    pub group: String,
    /// Companies in the group besides this one.
    pub peers: usize,
    /// The percentile rank of the score among them, 0–100 (one decimal); none under
    /// [`MIN_PEERS`] peers or when the group is unknown.
    pub percentile: Option<f64>,
    /// Why there is no percentile.
    pub note: Option<String>,
}

/// The percentile rank of `score` among `peers` (at least one): 100 × (lower + ½ ×
/// equal) / peers, to one decimal.
pub fn percentile_rank(score: f64, peers: &[f64]) -> f64 {
    let lower = peers.iter().filter(|p| **p < score).count() as f64;
    let equal = peers.iter().filter(|p| **p == score).count() as f64;
    let rank = 100.0 * (lower + 0.5 * equal) / peers.len().max(1) as f64;
    (rank * 10.0).round() / 10.0
}

fn benchmark(group: String, score: f64, peers: Vec<f64>) -> Benchmark {
    let n = peers.len();
    if n < MIN_PEERS {
        return Benchmark {
            group,
            peers: n,
            percentile: None,
            note: Some(format!("fewer than {MIN_PEERS} rated peers")),
        };
    }
    Benchmark { group, peers: n, percentile: Some(percentile_rank(score, &peers)), note: None }
}

/// The company's benchmarks: among its sector and size band, and overall.
pub fn benchmarks(company: &Member, population: &[Member]) -> (Benchmark, Benchmark) {
    let others = || population.iter().filter(|m| m.id != company.id);
    let overall = benchmark("all rated companies".to_owned(), company.score, others().map(|m| m.score).collect());
    let peer = match (company.sector, company.band) {
        (Some(sector), Some(band)) => benchmark(
            format!("NAICS {sector} {}, {band} employees", sector_title(sector)),
            company.score,
            others().filter(|m| m.sector == Some(sector) && m.band == Some(band)).map(|m| m.score).collect(),
        ),
        (sector, band) => Benchmark {
            group: "sector and size band".to_owned(),
            peers: 0,
            percentile: None,
            note: Some(
                match (sector, band) {
                    (None, None) => "the company's NAICS sector and size are unknown",
                    (None, _) => "the company's NAICS sector is unknown",
                    _ => "the company's size is unknown",
                }
                .to_owned(),
            ),
        },
    };
    (peer, overall)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn sectors_and_bands() {
        assert_eq!(sector_of(522110), Some("52"));
        assert_eq!(sector_of(332), Some("31-33"));
        assert_eq!(sector_of(4841), Some("48-49"));
        assert_eq!(sector_of(99), None);
        assert_eq!(sector_title("31-33"), "Manufacturing");
        assert_eq!(band_of("250"), Some("250-999"));
        assert_eq!(band_of("1001-5000"), Some("1,000-4,999"));
        assert_eq!(band_of("10 employees"), Some("1-49"));
        assert_eq!(band_of("10000+"), Some("5,000+"));
        assert_eq!(band_of("unknown"), None);
    }

    #[test]
    fn ranks() {
        let peers: Vec<f64> = (1..=10).map(|i| f64::from(i) * 10.0).collect();
        assert_eq!(percentile_rank(55.0, &peers), 50.0);
        assert_eq!(percentile_rank(50.0, &peers), 45.0, "a tie counts half");
        assert_eq!(percentile_rank(0.0, &peers), 0.0);
        assert_eq!(percentile_rank(100.5, &peers), 100.0);
    }

    #[test]
    fn small_groups_give_no_percentile() {
        let me = Member::new(1, Some(52), "300", 80.0);
        let mut pop = vec![me.clone()];
        pop.extend((2..=10).map(|i| Member::new(i, Some(522110), "400", 70.0)));
        let (peer, overall) = benchmarks(&me, &pop);
        assert_eq!((peer.peers, peer.percentile), (9, None));
        assert!(peer.note.as_deref().unwrap().contains("fewer than 10"));
        assert_eq!(overall.percentile, None);
        pop.push(Member::new(11, Some(52), "999", 90.0));
        let (peer, overall) = benchmarks(&me, &pop);
        assert_eq!((peer.peers, peer.percentile), (10, Some(90.0)));
        assert_eq!(peer.group, "NAICS 52 Finance and Insurance, 250-999 employees");
        assert_eq!(overall.percentile, Some(90.0));
        let other_band = Member::new(12, Some(52), "20", 10.0);
        pop.push(other_band);
        assert_eq!(benchmarks(&me, &pop).0.peers, 10, "another band is not a peer");
        assert_eq!(benchmarks(&me, &pop).1.peers, 11);
    }

    proptest! {
        #[test]
        fn percentile_is_within_bounds_and_monotone(scores in proptest::collection::vec(0.0f64..=100.0, 1..200), a in 0.0f64..=100.0, b in 0.0f64..=100.0) {
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            let p_lo = percentile_rank(lo, &scores);
            let p_hi = percentile_rank(hi, &scores);
            prop_assert!((0.0..=100.0).contains(&p_lo) && (0.0..=100.0).contains(&p_hi));
            prop_assert!(p_lo <= p_hi, "a higher score never ranks lower");
        }

        #[test]
        fn any_employee_text_is_a_band_or_none(s in "\\PC{0,30}") {
            if let Some(b) = band_of(&s) {
                prop_assert!(BANDS.iter().any(|(_, n)| *n == b));
            }
        }
    }
}
