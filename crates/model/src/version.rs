//! Comparing the versions that real CPE names and NVD ranges contain: `1.2.3`,
//! `1.0.2k`, `2.4.49-rc1`, `5.8.1`, `8.0.0.1`, `7.4.3p1`, `2021-05-01`, `8.9p1`.
//!
//! A version is split into numeric and alphabetic segments (separators `.`, `-`, `_`,
//! `+`, `~`, `:` only split). Numbers compare as numbers; missing numbers are 0, so
//! `1.2` = `1.2.0`. Letters after a number are either a pre-release word, which sorts
//! *before* the release (`2.4.49-rc1` < `2.4.49`; dev < alpha < beta < pre < rc), or
//! anything else, which sorts *after* it (`1.0.2` < `1.0.2k` < `1.0.2l`,
//! `7.4.3` < `7.4.3p1`). A single letter is a pre-release abbreviation (a, b, c, m)
//! only when a number follows it at once (`3.8.0a1`); `1.0.1a` is OpenSSL's patch
//! letter. Unknown words compare alphabetically among themselves.
//! The order is total: it is the order of [`Version::key`].

use std::cmp::Ordering;

/// A parsed version. Comparison ignores case and separators.
#[derive(Debug, Clone)]
pub struct Version {
    raw: String,
    key: String,
}

fn pre_rank(word: &[u8]) -> Option<u8> {
    Some(match word {
        b"dev" | b"snapshot" | b"nightly" => 0,
        b"a" | b"alpha" => 1,
        b"b" | b"beta" => 2,
        b"m" | b"milestone" => 3,
        b"pre" | b"preview" => 4,
        b"c" | b"cr" | b"rc" => 5,
        _ => return None,
    })
}

/// Key markers: '!' pre-release < '#' end of version < 'n' number < 'w' word.
const HEX: &[u8; 16] = b"0123456789abcdef";

impl Version {
    pub fn parse(raw: &str) -> Self {
        Self { raw: raw.to_owned(), key: Self::key_of(raw) }
    }

    /// The key of [`Version::parse`] alone, in one pass over the text and one allocation:
    /// matching a CVE's configurations compares hundreds of bounds per lookup.
    pub fn key_of(raw: &str) -> String {
        let bytes = raw.as_bytes();
        let mut out = String::with_capacity(bytes.len() * 2 + 4);
        // Zero numbers met and not yet written: a zero carries no order before the end
        // or before a pre-release word (1.2.0 = 1.2, 2.0.0-beta9 = 2.0-beta9), so zeros
        // are written only when a number or a word follows them.
        let mut zeros = 0usize;
        let flush = |out: &mut String, zeros: &mut usize| {
            for _ in 0..std::mem::take(zeros) {
                out.push_str("n00");
            }
        };
        let mut word = [0u8; 16];
        let mut i = 0;
        while i < bytes.len() {
            let start = i;
            if bytes[i].is_ascii_digit() {
                while i < bytes.len() && bytes[i].is_ascii_digit() {
                    i += 1;
                }
                // Digits without leading zeros, length-prefixed (2 hex digits) so that
                // 10 > 9.
                let digits = raw[start..i].trim_start_matches('0');
                if digits.is_empty() {
                    zeros += 1;
                    continue;
                }
                flush(&mut out, &mut zeros);
                let len = digits.len().min(255);
                out.push('n');
                out.push(char::from(HEX[len >> 4]));
                out.push(char::from(HEX[len & 15]));
                out.push_str(digits);
            } else if bytes[i].is_ascii_alphabetic() {
                while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
                    i += 1;
                }
                let letters = &bytes[start..i];
                // One letter is a pre-release abbreviation only when a number follows it
                // at once (3.8.0a1, 1.0b2, 5.0m1); otherwise it is a patch letter (1.0.1a).
                let followed_by_digit = bytes.get(i).is_some_and(u8::is_ascii_digit);
                let rank = if letters.len() > word.len() || (letters.len() == 1 && !followed_by_digit) {
                    None
                } else {
                    let lower = &mut word[..letters.len()];
                    lower.copy_from_slice(letters);
                    lower.make_ascii_lowercase();
                    pre_rank(lower)
                };
                match rank {
                    Some(rank) => {
                        zeros = 0;
                        out.push('!');
                        out.push(char::from(b'0' + rank));
                    }
                    None => {
                        flush(&mut out, &mut zeros);
                        out.push('w');
                    }
                }
                out.extend(letters.iter().map(|b| char::from(b.to_ascii_lowercase())));
                out.push('\u{1}');
            } else {
                // Separators and any other byte (every byte of a non-ASCII character)
                // only split segments.
                i += 1;
            }
        }
        // End of version: above pre-release markers ('!'), below numbers and words.
        out.push('#');
        out
    }

    pub fn as_str(&self) -> &str {
        &self.raw
    }

    /// A string whose byte order is the version order, for range filters in SQL.
    pub fn key(&self) -> &str {
        &self.key
    }
}

impl PartialEq for Version {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Version {}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key.cmp(&other.key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn v(s: &str) -> Version {
        Version::parse(s)
    }

    /// The first implementation of the key (segments, then their encoding), kept to
    /// check [`Version::key_of`] against.
    fn reference_key(raw: &str) -> String {
        #[derive(Debug, Clone, PartialEq, Eq)]
        enum Segment {
            Num(String),
            Pre(u8, String),
            Word(String),
        }
        let lower = raw.trim().to_ascii_lowercase();
        let mut segments = Vec::new();
        let bytes = lower.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let start = i;
            if bytes[i].is_ascii_digit() {
                while i < bytes.len() && bytes[i].is_ascii_digit() {
                    i += 1;
                }
                segments.push(Segment::Num(lower[start..i].trim_start_matches('0').to_owned()));
            } else if bytes[i].is_ascii_alphabetic() {
                while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
                    i += 1;
                }
                let word = &lower[start..i];
                let followed_by_digit = bytes.get(i).is_some_and(u8::is_ascii_digit);
                let rank = if word.len() == 1 && !followed_by_digit { None } else { pre_rank(word.as_bytes()) };
                segments.push(match rank {
                    Some(rank) => Segment::Pre(rank, word.to_owned()),
                    None => Segment::Word(word.to_owned()),
                });
            } else {
                i += lower[i..].chars().next().map_or(1, char::len_utf8);
            }
        }
        let mut kept: Vec<Segment> = Vec::new();
        let mut zeros = 0usize;
        for s in segments {
            match s {
                Segment::Num(d) if d.is_empty() => zeros += 1,
                Segment::Pre(..) => {
                    zeros = 0;
                    kept.push(s);
                }
                other => {
                    kept.extend(std::iter::repeat_n(Segment::Num(String::new()), zeros));
                    zeros = 0;
                    kept.push(other);
                }
            }
        }
        let mut out = String::new();
        for s in kept {
            match s {
                Segment::Pre(rank, w) => {
                    out.push('!');
                    out.push(char::from(b'0' + rank));
                    out.push_str(&w);
                    out.push('\u{1}');
                }
                Segment::Num(d) => {
                    out.push('n');
                    out.push_str(&format!("{:02x}", d.len().min(255)));
                    out.push_str(&d);
                }
                Segment::Word(w) => {
                    out.push('w');
                    out.push_str(&w);
                    out.push('\u{1}');
                }
            }
        }
        out.push('#');
        out
    }

    #[test]
    fn orders_what_real_cpes_contain() {
        let ascending = [
            "0.9",
            "1.0",
            "1.0.1",
            "1.0.1a",
            "1.0.1f",
            "1.0.1g",
            "1.0.2",
            "1.0.2k",
            "1.0.2zz",
            "1.1.0",
            "1.2.3",
            "2.4.49-dev",
            "2.4.49-alpha",
            "2.4.49-beta2",
            "2.4.49-rc1",
            "2.4.49-rc2",
            "2.4.49",
            "2.4.49-1",
            "2.4.50",
            "5.8",
            "5.8.1",
            "7.4",
            "7.4.3",
            "7.4.3p1",
            "7.4.3p2",
            "8.0.0.1",
            "8.9p1",
            "10.0",
        ];
        for w in ascending.windows(2) {
            assert!(v(w[0]) < v(w[1]), "{} < {}", w[0], w[1]);
        }
        assert_eq!(v("1.2"), v("1.2.0"));
        assert_eq!(v("1.2.0.0"), v("1.2"));
        assert_eq!(v("2.4.49-RC1"), v("2.4.49rc1"));
        assert!(v("2021-01-31") < v("2021-02-01"));
        assert!(v("20210131") < v("20210201"));
        assert!(v("2.0.0-beta9") < v("2.0"), "log4j 2.0-beta9 precedes 2.0");
        assert!(v("2.15.0") < v("2.16.0") && v("2.9") < v("2.10"));
        assert!(v("1.0.0-SNAPSHOT") < v("1.0.0-alpha"));
        assert!(v("3.8.0a1") < v("3.8.0b1") && v("3.8.0b1") < v("3.8.0rc1") && v("3.8.0rc1") < v("3.8.0"));
        assert!(v("1.0.1") < v("1.0.1a") && v("1.0.1a") < v("1.0.1b"), "OpenSSL patch letters");
    }

    proptest! {
        #[test]
        fn order_is_total_and_consistent(a in "[0-9a-z.\\-]{0,12}", b in "[0-9a-z.\\-]{0,12}", c in "[0-9a-z.\\-]{0,12}") {
            let (a, b, c) = (v(&a), v(&b), v(&c));
            // antisymmetry
            prop_assert_eq!(a.cmp(&b), b.cmp(&a).reverse());
            // transitivity
            if a <= b && b <= c {
                prop_assert!(a <= c);
            }
            // equality is reflexive and agrees with the key
            prop_assert_eq!(a.cmp(&a), Ordering::Equal);
            prop_assert_eq!(a == b, a.key() == b.key());
        }

        #[test]
        fn numbers_compare_as_numbers(x in 0u64..1_000_000, y in 0u64..1_000_000) {
            prop_assert_eq!(v(&x.to_string()).cmp(&v(&y.to_string())), x.cmp(&y));
            prop_assert_eq!(v(&format!("1.{x}")).cmp(&v(&format!("1.{y}"))), x.cmp(&y));
        }

        #[test]
        fn the_one_pass_key_is_the_reference_key(s in "([0-9]{1,4}|[a-zA-Z]{1,20}|[._+~: -]|\\PC){0,12}") {
            prop_assert_eq!(Version::key_of(&s), reference_key(&s));
        }

        #[test]
        fn never_panics(s in "\\PC{0,60}") {
            let _ = v(&s);
        }
    }
}
