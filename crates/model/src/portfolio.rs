//! Organisations and their portfolios: the companies an organisation chooses to rate,
//! each with the organisation's own vendor record of it (tier, tags, custom id,
//! relationship, life-cycle stage, owner, note). docs/API.md, "Portfolios".

use std::fmt;

use crate::OffsetDateTimeText;
use crate::risk::named_enum;

/// An organisation: an insurer's or a vendor-risk team's. Its keys, portfolios and
/// vendor records are its own; no key of another organisation sees them.
#[derive(Debug, Clone, PartialEq)]
pub struct Org {
    pub id: i64,
    pub name: String,
    pub created_at: OffsetDateTimeText,
}

/// A portfolio of an organisation, with how many companies it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Portfolio {
    pub id: i64,
    pub org: i64,
    pub name: String,
    pub companies: u64,
    pub created_at: OffsetDateTimeText,
    pub updated_at: OffsetDateTimeText,
}

/// Why a name, tag or text of a portfolio or vendor record was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    #[error("{0} must not be empty")]
    Empty(&'static str),
    #[error("{0} is longer than {1} characters")]
    TooLong(&'static str, usize),
    #[error("{0} must not contain control characters")]
    Control(&'static str),
    #[error("tier must be 1, 2, 3 or 4")]
    Tier,
    #[error("a tag is 1 to {MAX_TAG} letters, digits, spaces or . _ - : /")]
    Tag,
    #[error("at most {MAX_TAGS} tags")]
    TooManyTags,
}

/// Characters of a portfolio's or an organisation's name, at most.
pub const MAX_NAME: usize = 100;
/// Tags of one vendor record, at most, and characters of one tag.
pub const MAX_TAGS: usize = 20;
pub const MAX_TAG: usize = 40;
/// Characters of a custom id, an owner contact and a note, at most.
pub const MAX_CUSTOM_ID: usize = 100;
pub const MAX_OWNER: usize = 200;
pub const MAX_NOTE: usize = 2000;

/// `raw` trimmed, when it is at most `max` characters without control characters;
/// `what` names it in the error.
pub fn text(what: &'static str, raw: &str, max: usize) -> Result<String, RecordError> {
    let t = raw.trim();
    if t.chars().count() > max {
        return Err(RecordError::TooLong(what, max));
    }
    if t.chars().any(char::is_control) {
        return Err(RecordError::Control(what));
    }
    Ok(t.to_owned())
}

/// A name (of a portfolio, an organisation): [`text`], not empty.
pub fn name(what: &'static str, raw: &str) -> Result<String, RecordError> {
    let t = text(what, raw, MAX_NAME)?;
    if t.is_empty() { Err(RecordError::Empty(what)) } else { Ok(t) }
}

/// How much a company matters to the organisation: 1 (critical) to 4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tier(u8);

impl Tier {
    pub fn new(n: i64) -> Result<Self, RecordError> {
        match n {
            1..=4 => Ok(Tier(n as u8)),
            _ => Err(RecordError::Tier),
        }
    }

    pub fn parse(raw: &str) -> Result<Self, RecordError> {
        Self::new(raw.trim().parse::<i64>().map_err(|_| RecordError::Tier)?)
    }

    pub fn get(self) -> u8 {
        self.0
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A tag, trimmed, in lower case: letters, digits, spaces and `. _ - : /`.
pub fn tag(raw: &str) -> Result<String, RecordError> {
    let t = raw.trim().to_lowercase();
    let ok = !t.is_empty()
        && t.chars().count() <= MAX_TAG
        && t.chars().all(|c| c.is_alphanumeric() || matches!(c, ' ' | '.' | '_' | '-' | ':' | '/'));
    if ok { Ok(t) } else { Err(RecordError::Tag) }
}

/// Tags, each parsed ([`tag`]), without repeats, in the order given; at most [`MAX_TAGS`].
pub fn tags<'a>(raw: impl IntoIterator<Item = &'a str>) -> Result<Vec<String>, RecordError> {
    let mut out: Vec<String> = Vec::new();
    for t in raw {
        let t = tag(t)?;
        if !out.contains(&t) {
            out.push(t);
        }
        if out.len() > MAX_TAGS {
            return Err(RecordError::TooManyTags);
        }
    }
    Ok(out)
}

named_enum!(
    /// What the company is to the organisation.
    Relationship, "relationship", {
        Vendor => "vendor",
        Insured => "insured",
        Applicant => "applicant",
        Subsidiary => "subsidiary",
        Other => "other",
    }
);

named_enum!(
    /// Where the relationship is in its life.
    Stage, "stage", {
        Prospect => "prospect",
        Onboarding => "onboarding",
        Active => "active",
        Review => "review",
        Offboarding => "offboarding",
        Ended => "ended",
    }
);

/// An organisation's record of one company in one portfolio.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VendorRecord {
    pub tier: Option<Tier>,
    pub tags: Vec<String>,
    pub custom_id: Option<String>,
    pub relationship: Relationship,
    pub stage: Stage,
    /// Who in the organisation looks after the relationship (a name, an address).
    pub owner: String,
    pub note: String,
}

impl Default for VendorRecord {
    fn default() -> Self {
        VendorRecord {
            tier: None,
            tags: Vec::new(),
            custom_id: None,
            relationship: Relationship::Vendor,
            stage: Stage::Active,
            owner: String::new(),
            note: String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn tiers_are_one_to_four() {
        assert_eq!(Tier::parse(" 2 ").unwrap().get(), 2);
        for bad in ["0", "5", "-1", "one", "", "2.5"] {
            assert_eq!(Tier::parse(bad), Err(RecordError::Tier), "{bad}");
        }
    }

    #[test]
    fn tags_are_trimmed_lowered_and_unique() {
        assert_eq!(tags(["  Cloud ", "cloud", "EU/payments"]).unwrap(), vec!["cloud", "eu/payments"]);
        assert_eq!(tags(["a;b"]), Err(RecordError::Tag));
        assert_eq!(tags([""]), Err(RecordError::Tag));
        let many: Vec<String> = (0..=MAX_TAGS).map(|i| format!("t{i}")).collect();
        assert_eq!(tags(many.iter().map(String::as_str)), Err(RecordError::TooManyTags));
    }

    #[test]
    fn names_refuse_empty_long_and_control_text() {
        assert_eq!(name("name", "  Book 1 ").unwrap(), "Book 1");
        assert_eq!(name("name", "   "), Err(RecordError::Empty("name")));
        assert_eq!(name("name", "a\u{7}b"), Err(RecordError::Control("name")));
        assert_eq!(name("name", &"x".repeat(MAX_NAME + 1)), Err(RecordError::TooLong("name", MAX_NAME)));
    }

    proptest! {
        #[test]
        fn a_parsed_tag_parses_to_itself(raw in "\\PC{0,50}") {
            if let Ok(t) = tag(&raw) {
                prop_assert_eq!(tag(&t), Ok(t.clone()));
                prop_assert!(t.chars().count() <= MAX_TAG);
            }
        }
    }
}
