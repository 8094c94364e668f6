//! Scores as exact decimals: hundredths of a point, 0.00 to 100.00.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("score must be a number from 0 to 100 with at most two decimals")]
pub struct ScoreError;

/// A score from 0 to 100 kept as a whole number of hundredths, so that the same
/// score is stored, compared and summed exactly in every backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Score(u16);

impl Score {
    pub const MAX: Score = Score(10_000);

    pub fn from_hundredths(h: i64) -> Result<Self, ScoreError> {
        u16::try_from(h).ok().filter(|h| *h <= 10_000).map(Score).ok_or(ScoreError)
    }

    /// Rounds a float to the nearest hundredth; rejects NaN and values out of range.
    pub fn from_f64(v: f64) -> Result<Self, ScoreError> {
        if !v.is_finite() {
            return Err(ScoreError);
        }
        let h = (v * 100.0).round();
        if !(0.0..=10_000.0).contains(&h) {
            return Err(ScoreError);
        }
        Ok(Score(h as u16))
    }

    pub fn hundredths(self) -> i64 {
        i64::from(self.0)
    }

    pub fn as_f64(self) -> f64 {
        f64::from(self.0) / 100.0
    }
}

impl Serialize for Score {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.as_f64())
    }
}

impl<'de> Deserialize<'de> for Score {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Score::from_f64(f64::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bounds() {
        assert!(Score::from_f64(100.0).is_ok());
        assert!(Score::from_f64(100.01).is_err());
        assert!(Score::from_f64(-0.01).is_err());
        assert!(Score::from_f64(f64::NAN).is_err());
        assert_eq!(Score::from_f64(87.456).unwrap().hundredths(), 8746);
    }

    proptest! {
        #[test]
        fn hundredths_roundtrip_through_json(h in 0i64..=10_000) {
            let s = Score::from_hundredths(h).unwrap();
            let json = serde_json::to_string(&s).unwrap();
            let back: Score = serde_json::from_str(&json).unwrap();
            prop_assert_eq!(back, s);
        }
    }
}
