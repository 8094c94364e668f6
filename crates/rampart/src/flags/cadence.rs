//! The cadence flags and arguments (`--rescan-every`, `--sync-every`, `companies
//! set-cadence`), and a duration as `rampart` prints one.

use std::time::Duration;

/// A cadence: a number with a unit (`90s`, `30m`, `24h`, `7d`; a bare number is
/// seconds), from one minute to a year.
pub(crate) fn parse_every(raw: &str) -> Result<Duration, String> {
    let raw = raw.trim();
    let split = raw.find(|c: char| !c.is_ascii_digit()).unwrap_or(raw.len());
    let (number, unit) = raw.split_at(split);
    let n: u64 = number.parse().map_err(|_| format!("{raw:?} is not a period like 90s, 30m, 24h or 7d"))?;
    let unit_secs = match unit {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3_600,
        "d" => 86_400,
        _ => return Err(format!("{raw:?}: the unit is s, m, h or d")),
    };
    let secs = n.checked_mul(unit_secs).ok_or_else(|| format!("{raw:?} is too long"))?;
    if !(60..=366 * 86_400).contains(&secs) {
        return Err(format!("{raw:?}: a period is between 1m and 366d"));
    }
    Ok(Duration::from_secs(secs))
}

/// `--rescan-every`: a cadence, or `off` (`None`) for no scheduler in this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RescanEvery(pub(crate) Option<Duration>);

pub(crate) fn parse_rescan_every(raw: &str) -> Result<RescanEvery, String> {
    if raw.eq_ignore_ascii_case("off") { Ok(RescanEvery(None)) } else { parse_every(raw).map(|d| RescanEvery(Some(d))) }
}

/// A duration as people read it: `3d 4h`, `2h 5m`, `4m 10s`, `12s`.
pub(crate) fn human(d: Duration) -> String {
    let s = d.as_secs();
    let (days, hours, mins, secs) = (s / 86_400, s / 3_600 % 24, s / 60 % 60, s % 60);
    match () {
        _ if days > 0 => format!("{days}d {hours}h"),
        _ if hours > 0 => format!("{hours}h {mins}m"),
        _ if mins > 0 => format!("{mins}m {secs}s"),
        _ => format!("{secs}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cadences_parse_with_their_units_and_bounds() {
        assert_eq!(parse_every("24h"), Ok(Duration::from_secs(86_400)));
        assert_eq!(parse_every("1m"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_every("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_every("7d"), Ok(Duration::from_secs(7 * 86_400)));
        for bad in ["", "h", "10", "59s", "367d", "1w", "-5m", "1.5h", "99999999999999999999d", "5 m"] {
            assert!(parse_every(bad).is_err(), "{bad:?}");
        }
        assert_eq!(parse_rescan_every("off"), Ok(RescanEvery(None)));
        assert_eq!(parse_rescan_every("12h"), Ok(RescanEvery(Some(Duration::from_secs(43_200)))));
    }

    #[test]
    fn durations_read_as_people_read_them() {
        assert_eq!(human(Duration::from_secs(12)), "12s");
        assert_eq!(human(Duration::from_secs(250)), "4m 10s");
        assert_eq!(human(Duration::from_secs(7_500)), "2h 5m");
        assert_eq!(human(Duration::from_secs(3 * 86_400 + 4 * 3_600 + 5)), "3d 4h");
    }
}
