//! Debian package versions (`[epoch:]upstream_version[-debian_revision]`) and their
//! order, exactly as dpkg compares them. Ubuntu and Debian state which package versions a
//! CVE affects in this syntax (`1:8.2p1-4ubuntu0.5`, `2.4.41-4ubuntu3.14`,
//! `1.1.1-1ubuntu2.1~18.04.15`), and the generic [`Version`](crate::version::Version)
//! order gets them wrong: `~` sorts before the end of the string, the epoch outranks
//! everything, the revision is compared on its own.
//!
//! The order is dpkg's: the epoch (as a number), then the upstream version, then the
//! revision. Those two strings are compared in alternating runs of non-digits and digits.
//! In a non-digit run `~` sorts before everything, even the end of the string, then come
//! the end of the string, letters (by ASCII), and the other characters (by ASCII). Digit
//! runs compare as numbers, so leading zeros do not count. An absent revision compares as
//! the empty string, which equals `0`: `1.2.3` and `1.2.3-0` are the same version to dpkg.

use std::cmp::Ordering;
use std::fmt;

/// Why a string is not a Debian version.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DpkgError {
    #[error("the version is empty")]
    Empty,
    #[error("the version has embedded spaces")]
    EmbeddedSpace,
    #[error("the epoch is empty")]
    EmptyEpoch,
    /// dpkg's own parser takes a sign before the epoch (it reads it with `strtol`); this
    /// one only takes digits.
    #[error("the epoch is not a number")]
    BadEpoch,
    #[error("the epoch is larger than {}", i32::MAX)]
    EpochTooBig,
    #[error("nothing follows the epoch's colon")]
    NothingAfterEpoch,
    #[error("the revision after the last hyphen is empty")]
    EmptyRevision,
    #[error("the upstream version is empty")]
    EmptyUpstream,
    #[error("the upstream version contains {0:?}")]
    BadUpstreamChar(char),
    #[error("the revision contains {0:?}")]
    BadRevisionChar(char),
}

/// A parsed Debian version. Equality is dpkg's: `1.0` = `1.00` = `0:1.0-0`; [`fmt::Display`]
/// gives the version as it was written (without surrounding blanks).
#[derive(Debug, Clone)]
pub struct DpkgVersion {
    raw: String,
    epoch: u32,
    /// Byte ranges of `raw` holding the upstream version and the revision.
    upstream: (usize, usize),
    revision: (usize, usize),
}

impl DpkgVersion {
    /// Parses `raw` as dpkg does (surrounding spaces and tabs are dropped). An upstream
    /// version that does not start with a digit is accepted, as dpkg accepts it with a
    /// warning; a character outside dpkg's set is an error (the upstream version may hold
    /// letters, digits and `.+~-:`, the `:` only after an epoch and the `-` only before a
    /// revision; the revision letters, digits and `.+~`).
    pub fn parse(raw: &str) -> Result<Self, DpkgError> {
        if raw.is_empty() {
            return Err(DpkgError::Empty);
        }
        let blank = |c: char| c == ' ' || c == '\t';
        let s = raw.trim_matches(blank);
        if s.contains(blank) {
            return Err(DpkgError::EmbeddedSpace);
        }
        if s.is_empty() {
            return Err(DpkgError::Empty);
        }
        let (epoch, start) = match s.find(':') {
            Some(colon) => {
                let digits = &s[..colon];
                if digits.is_empty() {
                    return Err(DpkgError::EmptyEpoch);
                }
                if !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(DpkgError::BadEpoch);
                }
                let epoch =
                    digits.parse::<u32>().ok().filter(|e| i32::try_from(*e).is_ok()).ok_or(DpkgError::EpochTooBig)?;
                if colon + 1 == s.len() {
                    return Err(DpkgError::NothingAfterEpoch);
                }
                (epoch, colon + 1)
            }
            None => (0, 0),
        };
        let rest = &s[start..];
        let (upstream, revision) = match rest.rfind('-') {
            Some(hyphen) => {
                if hyphen + 1 == rest.len() {
                    return Err(DpkgError::EmptyRevision);
                }
                ((start, start + hyphen), (start + hyphen + 1, s.len()))
            }
            None => ((start, s.len()), (s.len(), s.len())),
        };
        let up = &s[upstream.0..upstream.1];
        if up.is_empty() {
            return Err(DpkgError::EmptyUpstream);
        }
        if let Some(c) = up.chars().find(|c| !(c.is_ascii_alphanumeric() || ".+~-:".contains(*c))) {
            return Err(DpkgError::BadUpstreamChar(c));
        }
        if let Some(c) = s[revision.0..revision.1].chars().find(|c| !(c.is_ascii_alphanumeric() || ".+~".contains(*c)))
        {
            return Err(DpkgError::BadRevisionChar(c));
        }
        Ok(Self { raw: s.to_owned(), epoch, upstream, revision })
    }

    /// The epoch, 0 when none is written.
    pub fn epoch(&self) -> u32 {
        self.epoch
    }

    /// The upstream version (between the epoch's colon and the last hyphen).
    pub fn upstream(&self) -> &str {
        &self.raw[self.upstream.0..self.upstream.1]
    }

    /// The Debian revision (after the last hyphen), empty when none is written.
    pub fn revision(&self) -> &str {
        &self.raw[self.revision.0..self.revision.1]
    }

    /// The version as written.
    pub fn as_str(&self) -> &str {
        &self.raw
    }
}

/// The weight of a character in a non-digit run: `~` < end of string (and digits) <
/// letters < everything else.
fn order(c: Option<u8>) -> i32 {
    match c {
        None => 0,
        Some(c) if c.is_ascii_digit() => 0,
        Some(c) if c.is_ascii_alphabetic() => i32::from(c),
        Some(b'~') => -1,
        Some(c) => i32::from(c) + 256,
    }
}

/// dpkg's comparison of two upstream versions or two revisions.
fn verrevcmp(a: &[u8], b: &[u8]) -> Ordering {
    let (mut i, mut j) = (0, 0);
    let digit = |s: &[u8], k: usize| s.get(k).is_some_and(u8::is_ascii_digit);
    while i < a.len() || j < b.len() {
        // A run of non-digits, compared character by character.
        while (i < a.len() && !digit(a, i)) || (j < b.len() && !digit(b, j)) {
            let (ac, bc) = (order(a.get(i).copied()), order(b.get(j).copied()));
            if ac != bc {
                return ac.cmp(&bc);
            }
            i += 1;
            j += 1;
        }
        // A run of digits, compared as a number.
        while a.get(i) == Some(&b'0') {
            i += 1;
        }
        while b.get(j) == Some(&b'0') {
            j += 1;
        }
        let mut first_diff = Ordering::Equal;
        while digit(a, i) && digit(b, j) {
            if first_diff == Ordering::Equal {
                first_diff = a[i].cmp(&b[j]);
            }
            i += 1;
            j += 1;
        }
        if digit(a, i) {
            return Ordering::Greater;
        }
        if digit(b, j) {
            return Ordering::Less;
        }
        if first_diff != Ordering::Equal {
            return first_diff;
        }
    }
    Ordering::Equal
}

impl Ord for DpkgVersion {
    fn cmp(&self, other: &Self) -> Ordering {
        self.epoch
            .cmp(&other.epoch)
            .then_with(|| verrevcmp(self.upstream().as_bytes(), other.upstream().as_bytes()))
            .then_with(|| verrevcmp(self.revision().as_bytes(), other.revision().as_bytes()))
    }
}

impl PartialOrd for DpkgVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for DpkgVersion {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for DpkgVersion {}

impl fmt::Display for DpkgVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.raw)
    }
}

impl std::str::FromStr for DpkgVersion {
    type Err = DpkgError;
    fn from_str(s: &str) -> Result<Self, DpkgError> {
        Self::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn d(s: &str) -> DpkgVersion {
        DpkgVersion::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn parses_the_parts() {
        let v = d("1:8.2p1-4ubuntu0.5");
        assert_eq!((v.epoch(), v.upstream(), v.revision()), (1, "8.2p1", "4ubuntu0.5"));
        let v = d("2.4.41");
        assert_eq!((v.epoch(), v.upstream(), v.revision()), (0, "2.4.41", ""));
        // The revision is after the last hyphen; the colon after an epoch may recur.
        let v = d("2:1.0-beta-1:2-3");
        assert_eq!((v.epoch(), v.upstream(), v.revision()), (2, "1.0-beta-1:2", "3"));
        let v = d(" \t1.0-1 ");
        assert_eq!(v.to_string(), "1.0-1");
        // Not starting with a digit: dpkg warns and accepts.
        assert_eq!(d("abc-1").upstream(), "abc");
    }

    #[test]
    fn rejects_what_dpkg_rejects() {
        let bad = [
            ("", DpkgError::Empty),
            ("   ", DpkgError::Empty),
            ("1.0 1", DpkgError::EmbeddedSpace),
            (":1.0", DpkgError::EmptyEpoch),
            ("a:1.0", DpkgError::BadEpoch),
            ("-1:1.0", DpkgError::BadEpoch),
            ("99999999999:1.0", DpkgError::EpochTooBig),
            ("2147483648:1.0", DpkgError::EpochTooBig),
            ("1:", DpkgError::NothingAfterEpoch),
            ("1.0-", DpkgError::EmptyRevision),
            ("-1", DpkgError::EmptyUpstream),
            ("1:-1", DpkgError::EmptyUpstream),
            ("1.0_1", DpkgError::BadUpstreamChar('_')),
            ("1.0/1", DpkgError::BadUpstreamChar('/')),
            ("1.0é", DpkgError::BadUpstreamChar('é')),
            ("1:1.0-1:2", DpkgError::BadRevisionChar(':')),
            ("1.0-1_2", DpkgError::BadRevisionChar('_')),
        ];
        for (s, e) in bad {
            assert_eq!(DpkgVersion::parse(s).unwrap_err(), e, "{s:?}");
        }
        // A colon without an epoch is read as a bad epoch, as dpkg does.
        assert_eq!(DpkgVersion::parse("1.0:1").unwrap_err(), DpkgError::BadEpoch);
        assert_eq!(d("2147483647:1").epoch(), 2_147_483_647);
    }

    /// Pairs in ascending order, then pairs dpkg holds equal.
    const ASCENDING: [(&str, &str); 19] = [
        ("1.0~rc1", "1.0"),
        ("1.0~~", "1.0~"),
        ("1.0~", "1.0"),
        ("1.0", "1.0a"),
        ("1.0a", "1.0+"),
        ("1.0", "1.0.1"),
        ("9.9", "1:0.1"),
        ("2.4.41-4ubuntu3.14", "2.4.41-4ubuntu3.15"),
        ("1.0-1", "1.0-1ubuntu0.1"),
        ("8.2p1-4ubuntu0.5", "8.2p1-4ubuntu0.11"),
        ("1:8.2p1-4ubuntu0.8", "1:8.2p1-4ubuntu0.11"),
        ("1.1.1-1ubuntu2.1~18.04.15", "1.1.1-1ubuntu2.1"),
        ("1:7.9p1-10~ubuntu18.04.fips.0.8", "1:7.9p1-10"),
        ("2.9", "2.10"),
        ("1.5.22-2ubuntu0.2", "1.5.22-2ubuntu0.3"),
        ("1.4.25-2ubuntu1.5", "1.4.25-2ubuntu1.5+esm1"),
        ("5.0.7-2", "5:5.0.7-2ubuntu0.1"),
        ("0.9", "a"),
        ("1.0-1", "1.0.0-1"),
    ];
    const EQUAL: [(&str, &str); 5] =
        [("1.2.3", "1.2.3-0"), ("1.2.3", "0:1.2.3"), ("1.0", "1.00"), ("1.01-1", "1.1-01"), ("1.0-0", "1.0-00")];

    #[test]
    fn the_classic_vectors() {
        for (a, b) in ASCENDING {
            assert!(d(a) < d(b), "{a} < {b}");
            assert!(d(b) > d(a), "{b} > {a}");
        }
        for (a, b) in EQUAL {
            assert_eq!(d(a), d(b), "{a} = {b}");
            assert_eq!(d(a).cmp(&d(b)), Ordering::Equal);
        }
        // Equal to dpkg but shown as written.
        assert_eq!(d("1.2.3-0").to_string(), "1.2.3-0");
    }

    /// Versions built from dpkg's characters, with the pieces that make comparisons
    /// interesting (tildes, letters against digits, leading zeros, epochs).
    fn version() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            "[0-9]{1,3}",
            "0[0-9]",
            "[a-c]{1,2}",
            Just("~".to_owned()),
            Just("+".to_owned()),
            Just(".".to_owned())
        ];
        let upstream =
            ("[0-9]", prop::collection::vec(piece.clone(), 0..5)).prop_map(|(d, ps)| format!("{d}{}", ps.concat()));
        let revision = prop::option::of(
            prop::collection::vec(piece, 1..4).prop_map(|ps| ps.concat()).prop_filter("not empty", |s| !s.is_empty()),
        );
        let epoch = prop::option::of(0u32..3);
        (epoch, upstream, revision).prop_map(|(e, u, r)| {
            let mut s = String::new();
            if let Some(e) = e {
                s.push_str(&format!("{e}:"));
            }
            s.push_str(&u);
            if let Some(r) = r {
                s.push('-');
                s.push_str(&r);
            }
            s
        })
    }

    proptest! {
        #[test]
        fn order_is_total_and_consistent(a in version(), b in version(), c in version()) {
            let (a, b, c) = (d(&a), d(&b), d(&c));
            prop_assert_eq!(a.cmp(&b), b.cmp(&a).reverse());
            if a <= b && b <= c {
                prop_assert!(a <= c);
            }
            if a == b && b == c {
                prop_assert!(a == c);
            }
            prop_assert_eq!(a.cmp(&a), Ordering::Equal);
            prop_assert_eq!(a == b, a.cmp(&b) == Ordering::Equal);
        }

        #[test]
        fn parse_of_display_round_trips(s in version()) {
            let v = d(&s);
            let again = d(&v.to_string());
            prop_assert_eq!(again.to_string(), s);
            prop_assert_eq!((again.epoch(), again.upstream(), again.revision()), (v.epoch(), v.upstream(), v.revision()));
            prop_assert_eq!(again.cmp(&v), Ordering::Equal);
        }

        #[test]
        fn never_panics(s in "\\PC{0,40}") {
            if let Ok(v) = DpkgVersion::parse(&s) {
                prop_assert_eq!(v.cmp(&v), Ordering::Equal);
            }
        }
    }

    /// A small deterministic generator (xorshift), so the dpkg comparison is reproducible.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
        fn version(&mut self) -> String {
            const PIECES: [&str; 14] = ["0", "1", "2", "9", "10", "01", "a", "b", "z", "p", "~", "+", ".", "ubuntu"];
            let mut s = String::new();
            if self.below(4) == 0 {
                s.push_str(&format!("{}:", self.below(3)));
            }
            s.push_str(&self.below(10).to_string());
            for _ in 0..self.below(6) {
                s.push_str(PIECES[self.below(PIECES.len() as u64) as usize]);
            }
            if self.below(3) != 0 {
                s.push('-');
                s.push_str(PIECES[self.below(PIECES.len() as u64) as usize]);
                for _ in 0..self.below(4) {
                    s.push_str(PIECES[self.below(PIECES.len() as u64) as usize]);
                }
            }
            s
        }
        /// A version close to `v`: one piece changed, added or removed, so that the pair
        /// shares a prefix (random pairs mostly differ in their first character).
        fn near(&mut self, v: &str) -> String {
            let mut s = v.to_owned();
            match self.below(3) {
                0 => s.push_str(["~", "a", "1", "+b", ".0", "-1"][self.below(6) as usize]),
                1 if s.len() > 1 => {
                    s.pop();
                }
                _ => {
                    let at = self.below(s.len() as u64) as usize;
                    if s.is_char_boundary(at) {
                        s.insert_str(at, ["0", "~", "a", "."][self.below(4) as usize]);
                    }
                }
            }
            s
        }
    }

    fn dpkg_says(a: &str, op: &str, b: &str) -> bool {
        let status = std::process::Command::new("dpkg")
            .args(["--compare-versions", a, op, b])
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap_or_else(|e| panic!("running dpkg: {e}"));
        match status.code() {
            Some(0) => true,
            Some(1) => false,
            other => panic!("dpkg --compare-versions {a} {op} {b} exited with {other:?}"),
        }
    }

    #[test]
    fn agrees_with_dpkg_on_random_pairs() {
        let found = std::process::Command::new("dpkg").arg("--version").stdout(std::process::Stdio::null()).status();
        if !found.is_ok_and(|s| s.success()) {
            eprintln!("skipped: dpkg is not installed, so the order is not checked against it");
            return;
        }
        for (a, b) in ASCENDING {
            assert!(dpkg_says(a, "lt", b), "dpkg: {a} < {b}");
        }
        for (a, b) in EQUAL {
            assert!(dpkg_says(a, "eq", b), "dpkg: {a} = {b}");
        }
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut checked = 0;
        let mut seen = [0usize; 3];
        while checked < 200 {
            let a = rng.version();
            let b = if rng.below(2) == 0 { rng.near(&a) } else { rng.version() };
            let (Ok(va), Ok(vb)) = (DpkgVersion::parse(&a), DpkgVersion::parse(&b)) else { continue };
            let ours = va.cmp(&vb);
            let theirs = if dpkg_says(&a, "lt", &b) {
                Ordering::Less
            } else if dpkg_says(&a, "eq", &b) {
                Ordering::Equal
            } else {
                Ordering::Greater
            };
            assert_eq!(ours, theirs, "{a} vs {b}");
            seen[(ours as i8 + 1) as usize] += 1;
            checked += 1;
        }
        println!("dpkg agreed on {checked} pairs (less, equal, greater): {seen:?}");
        assert!(seen[0] > 20 && seen[2] > 20, "{seen:?}");
    }
}
