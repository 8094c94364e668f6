//! Paging: the `page` query parameter and the pagination object of every paged answer.

use serde::Serialize;

/// Items per page in every paged response.
pub const PAGE_SIZE: u32 = 10;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PageError {
    #[error("Page value should be greater than 0")]
    NotPositive,
    #[error("Invalid request")]
    NotANumber,
}

/// A 1-based page number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page(u64);

impl Page {
    pub const FIRST: Page = Page(1);

    /// The largest page number: the OpenAPI document's `maximum` (a 32-bit signed
    /// integer, what clients generated from it can hold).
    pub const MAX: u64 = (1 << 31) - 1;

    /// `None` (parameter absent) is page 1. Exactly what the OpenAPI document allows:
    /// decimal digits, 1 to [`Page::MAX`]. Zero or a negative number is "Page value
    /// should be greater than 0"; anything else (signs, spaces, exponents, a number over
    /// the maximum) is "Invalid request" — never a page number saturated and echoed.
    pub fn parse(raw: Option<&str>) -> Result<Self, PageError> {
        let Some(raw) = raw else { return Ok(Page::FIRST) };
        let (negative, digits) = match raw.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, raw),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(PageError::NotANumber);
        }
        if negative || digits.bytes().all(|b| b == b'0') {
            return Err(PageError::NotPositive);
        }
        match digits.parse::<u64>() {
            Ok(n) if n <= Self::MAX => Ok(Page(n)),
            _ => Err(PageError::NotANumber),
        }
    }

    pub fn number(self) -> u64 {
        self.0
    }

    /// SQL LIMIT.
    pub fn limit(self) -> i64 {
        i64::from(PAGE_SIZE)
    }

    /// SQL OFFSET, saturating for absurd page numbers.
    pub fn offset(self) -> i64 {
        let off = (self.0 - 1).saturating_mul(u64::from(PAGE_SIZE));
        i64::try_from(off).unwrap_or(i64::MAX)
    }

    pub fn pagination(self, total_items: u64) -> Pagination {
        Pagination {
            current_page: self.0,
            page_size: PAGE_SIZE,
            total_pages: total_items.div_ceil(u64::from(PAGE_SIZE)),
            total_items,
        }
    }
}

/// The pagination object carried by every paged response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
pub struct Pagination {
    pub current_page: u64,
    pub page_size: u32,
    pub total_pages: u64,
    pub total_items: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parse_rules() {
        assert_eq!(Page::parse(None).unwrap(), Page::FIRST);
        assert_eq!(Page::parse(Some("3")).unwrap().offset(), 20);
        assert_eq!(Page::parse(Some("0")), Err(PageError::NotPositive));
        assert_eq!(Page::parse(Some("-2")), Err(PageError::NotPositive));
        assert_eq!(Page::parse(Some("abc")), Err(PageError::NotANumber));
        assert_eq!(Page::parse(Some("")), Err(PageError::NotANumber));
        assert_eq!(Page::parse(Some("2147483647")).unwrap().number(), Page::MAX);
        for bad in ["2147483648", "99999999999999999999999", "+3", " 3", "3 ", "1e3", "0x10", "３"] {
            assert_eq!(Page::parse(Some(bad)), Err(PageError::NotANumber), "{bad:?}");
        }
        assert_eq!(Page::parse(Some("-0")), Err(PageError::NotPositive));
        assert_eq!(Page::parse(Some("000")), Err(PageError::NotPositive));
        assert_eq!(Page::parse(Some("007")).unwrap().number(), 7);
    }

    #[test]
    fn pagination_math() {
        let p = Page::parse(Some("2")).unwrap().pagination(21);
        assert_eq!((p.current_page, p.page_size, p.total_pages, p.total_items), (2, 10, 3, 21));
        assert_eq!(Page::FIRST.pagination(0).total_pages, 0);
        assert_eq!(Page::FIRST.pagination(10).total_pages, 1);
    }

    proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,40}") {
            if let Ok(p) = Page::parse(Some(&s)) {
                prop_assert!(p.number() >= 1 && p.number() <= Page::MAX);
                prop_assert!(p.offset() >= 0);
            }
        }
    }
}
