//! A rating change in words: how far the score and grade moved, why the rating was made,
//! and the findings that opened and closed since the rating before (the change report's
//! and an alert's explanation).

use model::{Finding, Grade, Score};

/// One side of a change: a rating's score and grade.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Side {
    pub score: Score,
    pub grade: Grade,
}

/// The most findings an explanation names (the rest are counted).
const NAMED: usize = 3;

/// Explains a rating against the one before it (`before`: none for a first rating):
/// `Score 75.0 → 65.0 (−10.0), grade C → D, by a rescan: 1 finding opened (high
/// open_ports.rdp_exposed on vpn.acme.example:3389), 1 closed (low dmarc.policy_none on
/// acme.example).` The findings come worst first; the first three are named.
pub fn explain(
    before: Option<Side>,
    after: Side,
    reason: Option<&str>,
    opened: &[Finding],
    closed: &[Finding],
) -> String {
    let mut out = match before {
        None => format!("First rating: {:.1}, grade {}", after.score.as_f64(), after.grade.as_str()),
        Some(b) => {
            let delta = after.score.as_f64() - b.score.as_f64();
            let mut s = format!("Score {:.1} → {:.1} ({})", b.score.as_f64(), after.score.as_f64(), signed(delta));
            if b.grade == after.grade {
                s.push_str(&format!(", grade {} kept", after.grade.as_str()));
            } else {
                s.push_str(&format!(", grade {} → {}", b.grade.as_str(), after.grade.as_str()));
            }
            s
        }
    };
    match reason {
        Some(r) => out.push_str(&format!(", by a {r}")),
        None => out.push_str(", imported"),
    }
    let list = |fs: &[Finding], what: &str| {
        let named: Vec<String> =
            fs.iter().take(NAMED).map(|f| format!("{} {} on {}", f.severity.as_str(), f.code, f.asset)).collect();
        let more = fs.len().saturating_sub(NAMED);
        let tail = if more > 0 { format!(" and {more} more") } else { String::new() };
        let noun = if fs.len() == 1 { "finding" } else { "findings" };
        format!("{} {noun} {what} ({}{tail})", fs.len(), named.join("; "))
    };
    match (opened.is_empty(), closed.is_empty()) {
        (true, true) => out.push_str(": no finding opened or closed"),
        (false, true) => out.push_str(&format!(": {}", list(opened, "opened"))),
        (true, false) => out.push_str(&format!(": {}", list(closed, "closed"))),
        (false, false) => out.push_str(&format!(": {}, {}", list(opened, "opened"), list(closed, "closed"))),
    }
    out.push('.');
    out
}

/// A score move with its sign, in points (`+2.5`, `−10.0`, `±0.0`).
fn signed(delta: f64) -> String {
    if delta.abs() < 0.05 {
        "±0.0".to_owned()
    } else if delta > 0.0 {
        format!("+{delta:.1}")
    } else {
        format!("−{:.1}", -delta)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::{RiskVector, Severity};

    fn finding(code: &str, severity: Severity) -> Finding {
        crate::testing::finding(RiskVector::OpenPorts, severity, code, "vpn.acme.example:3389")
    }

    fn side(score: f64, grade: Grade) -> Side {
        Side { score: Score::from_f64(score).unwrap(), grade }
    }

    #[test]
    fn a_change_says_how_far_why_and_which_findings() {
        let rdp = finding("open_ports.rdp_exposed", Severity::High);
        let text =
            explain(Some(side(75.0, Grade::C)), side(65.0, Grade::D), Some("rescan"), std::slice::from_ref(&rdp), &[]);
        assert_eq!(
            text,
            "Score 75.0 → 65.0 (−10.0), grade C → D, by a rescan: 1 finding opened (high open_ports.rdp_exposed on vpn.acme.example:3389)."
        );
        let five = vec![rdp.clone(); 5];
        let text = explain(Some(side(80.0, Grade::B)), side(81.0, Grade::B), Some("scan"), &[], &five);
        assert!(text.starts_with("Score 80.0 → 81.0 (+1.0), grade B kept, by a scan: 5 findings closed ("), "{text}");
        assert!(text.ends_with(" and 2 more)."), "{text}");
        let text = explain(None, side(90.0, Grade::A), None, &[], &[]);
        assert_eq!(text, "First rating: 90.0, grade A, imported: no finding opened or closed.");
    }
}
