//! NAICS 2022 codes and titles (U.S. Census Bureau, public domain), shipped in the
//! binary (`data/naics-2022.tsv`, made from ../shared/data/naics by
//! `scripts/naics-table.py`), and the conservative match of a company's industry text to
//! a code.
//!
//! The match: the industry's words, lower-cased and crudely stemmed (`publishing` and
//! `publishers` both read `publish`), with `and`, `of`, `the` and the like left out, must
//! all appear among a title's words. Of the titles that hold them all, the one with the
//! fewest other words wins, then the shorter (broader) code, then the smaller code.
//! "Truck Transportation" is 484, "Banking" is 52211 (Commercial Banking), "Pharmaceutical
//! Manufacturing" is 3254; "Higher Education" matches no title and gets no code (a wrong
//! industry is worse than none: it moves the predictions' industry factor).

use std::sync::OnceLock;

const TABLE: &str = include_str!("../data/naics-2022.tsv");

/// Words that say nothing about the industry.
const STOP: &[&str] = &["and", "or", "of", "the", "for", "in", "on", "to", "a", "an", "except", "other", "all"];

/// One NAICS code with its title.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Naics {
    pub code: u32,
    pub title: &'static str,
}

struct Entry {
    naics: Naics,
    words: Vec<String>,
}

fn table() -> &'static [Entry] {
    static TABLE_: OnceLock<Vec<Entry>> = OnceLock::new();
    TABLE_.get_or_init(|| {
        TABLE
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let (code, title) = l.split_once('\t')?;
                Some(Entry { naics: Naics { code: code.parse().ok()?, title }, words: words(title) })
            })
            .collect()
    })
}

/// A word with a common English suffix taken off (both sides of a match are cut alike).
fn stem(word: &str) -> String {
    for suffix in ["ing", "ers", "ies", "es", "er", "s"] {
        if word.len() > suffix.len() + 3
            && let Some(base) = word.strip_suffix(suffix)
        {
            return base.to_owned();
        }
    }
    word.to_owned()
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| !w.is_empty() && !STOP.contains(&w.as_str()))
        .map(|w| stem(&w))
        .collect()
}

/// The title of a code, when it is one.
pub fn title(code: u32) -> Option<&'static str> {
    table().iter().find(|e| e.naics.code == code).map(|e| e.naics.title)
}

/// The NAICS code an industry text names, when one title holds all its words (see the
/// module's documentation); none for an empty or unmatched text.
pub fn code_for_industry(industry: &str) -> Option<Naics> {
    let wanted = words(industry);
    if wanted.is_empty() || wanted.len() > 12 {
        return None;
    }
    table()
        .iter()
        .filter(|e| wanted.iter().all(|w| e.words.contains(w)))
        .min_by_key(|e| (e.words.len() - wanted.len().min(e.words.len()), e.naics.code.to_string().len(), e.naics.code))
        .map(|e| e.naics.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_holds_every_code() {
        assert_eq!(table().len(), 2125);
        assert_eq!(title(484), Some("Truck Transportation"));
        assert_eq!(title(31), Some("Manufacturing"));
        assert_eq!(title(999_999), None);
    }

    #[test]
    fn industries_match_the_title_that_holds_their_words() {
        let code = |s: &str| code_for_industry(s).map(|n| n.code);
        assert_eq!(code("Truck Transportation"), Some(484));
        assert_eq!(code("truck transportation"), Some(484));
        assert_eq!(code("Banking"), Some(52211));
        assert_eq!(code("Pharmaceutical Manufacturing"), Some(3254));
        assert_eq!(code("Water Supply and Irrigation"), Some(22131));
        assert_eq!(code("Newspaper Publishing"), Some(51311));
        assert_eq!(code("Warehousing and Storage"), Some(493));
        // No title holds these words: no code rather than a wrong one.
        assert_eq!(code("Higher Education"), None);
        assert_eq!(code("Computer Games"), None);
        assert_eq!(code(""), None);
        assert_eq!(code("and of the"), None);
    }
}
