//! Exposure factors: what a scan found, as multipliers of the annual rate of loss events
//! (docs/PREDICTIONS.md, "Exposure factors"). Each factor is tied to a published figure
//! or labelled an assumption; each applies once however many findings trigger it. The
//! factors multiply up to [`EXPOSURE_KNEE`] (any one factor alone applies exactly); past
//! it the product bends smoothly towards [`EXPOSURE_CAP`] ([`compose`]), so that fixing
//! any one finding still moves the prediction.
//!
//! The global score's factor already sees these findings through the score; the
//! exposure factors add what a score does not say — that one exposure (an open RDP port)
//! is how most claims start. The overlap is an assumption of the model, documented.

use serde::Serialize;

/// Up to this product the factors multiply exactly (it is the largest single factor).
pub const EXPOSURE_KNEE: f64 = 3.0;
/// The most the exposure factors together multiply the event rate by (approached, never
/// reached).
pub const EXPOSURE_CAP: f64 = 8.0;

/// The combined multiplier of factors `multipliers`: their product `P` while `P ≤ K`
/// (the knee); above it, in logarithms, `ln E = ln K + (ln C − ln K) · (1 − e^(−(ln P −
/// ln K) / (ln C − ln K)))` — continuous with slope 1 at the knee, rising with every
/// factor, below the cap `C`.
pub fn compose(multipliers: impl IntoIterator<Item = f64>) -> f64 {
    let s: f64 = multipliers.into_iter().filter(|m| m.is_finite() && *m > 0.0).map(f64::ln).sum();
    let (k, c) = (EXPOSURE_KNEE.ln(), EXPOSURE_CAP.ln());
    if s <= k {
        return s.exp();
    }
    (k + (c - k) * (1.0 - (-(s - k) / (c - k)).exp())).exp()
}

/// One exposure factor.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Factor {
    /// Stable name (`rdp_exposed`).
    pub code: &'static str,
    pub label: &'static str,
    /// The multiplier of the annual event rate.
    pub multiplier: f64,
    /// The published figure, as published (or the reasoning of an assumption).
    pub figure: &'static str,
    /// Where it was published; empty for an assumption.
    pub source: &'static str,
    /// No published figure sets this multiplier: it is the model's assumption.
    pub assumption: bool,
}

/// Finding codes (docs/FINDINGS.md) that trigger each factor. A `vulnerabilities.cve`
/// finding triggers `critical_vulnerability` when it is critical: CVSS 9 or more, or its
/// CVE is in CISA's Known Exploited Vulnerabilities catalogue (docs/FINDINGS.md).
const TRIGGERS: &[(&str, &[&str])] = &[
    ("rdp_exposed", &["open_ports.rdp_exposed"]),
    (
        "database_exposed",
        &[
            "open_ports.redis_exposed",
            "open_ports.mongodb_exposed",
            "open_ports.elasticsearch_exposed",
            "open_ports.memcached_exposed",
            "open_ports.mysql_exposed",
            "open_ports.postgresql_exposed",
        ],
    ),
    ("cleartext_remote_access", &["open_ports.telnet_exposed", "open_ports.ftp_exposed", "open_ports.smb_exposed"]),
    ("end_of_life_software", &["sbom.end_of_life"]),
    ("email_spoofable", &["dmarc.missing", "dmarc.policy_none", "spf.missing"]),
];

/// A finding as the exposure model reads it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Exposed {
    pub finding_id: i64,
    pub code: String,
    pub asset: String,
    /// The finding is critical (a CVE finding: CVSS ≥ 9 or KEV-listed).
    pub critical: bool,
}

/// A factor applied, with the findings that triggered it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Applied {
    #[serde(flatten)]
    pub factor: Factor,
    pub findings: Vec<i64>,
}

/// The share of loss events that are data breaches (π_b) when no exposure moves it: the
/// middle of the published 35–55 % (MODEL-NOTES row 12: Verizon DBIR 2024 and 2025).
pub const BREACH_SHARE: f64 = 0.45;

/// The event mix: the share of loss events that are data breaches, and why.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BreachShare {
    pub share: f64,
    pub basis: &'static str,
}

/// The breach share the exposures give (an assumption within the published range): an
/// exposed database or cache makes an event a breach as often as the top of the range
/// (55 %, DBIR 2025); spoofable mail tilts the mix towards business email compromise and
/// funds-transfer fraud — 56 % of 2023 claims (Coalition), losses of money rather than
/// records — down to the bottom (35 %, DBIR 2024). Both, or neither: the middle.
pub fn breach_share(applied: &[Applied]) -> BreachShare {
    let has = |code: &str| applied.iter().any(|a| a.factor.code == code);
    match (has("database_exposed"), has("email_spoofable")) {
        (true, false) => BreachShare {
            share: 0.55,
            basis: "a database answers the internet: the top of the published 35–55 % (DBIR 2025); an assumption",
        },
        (false, true) => BreachShare {
            share: 0.35,
            basis: "spoofable mail: more events are email fraud (BEC and FTF, 56 % of 2023 claims, Coalition), \
                    which loses money, not records: the bottom of 35–55 % (DBIR 2024); an assumption",
        },
        _ => BreachShare { share: BREACH_SHARE, basis: "the middle of the published 35–55 % (DBIR 2024, 2025)" },
    }
}

/// The factor a finding triggers, if any.
pub fn factor_of(e: &Exposed) -> Option<&'static Factor> {
    let code = if e.critical && e.code == "vulnerabilities.cve" {
        "critical_vulnerability"
    } else {
        TRIGGERS.iter().find(|(_, codes)| codes.contains(&e.code.as_str()))?.0
    };
    FACTORS.iter().find(|f| f.code == code)
}

/// The factors the findings trigger, each once, in the order of [`FACTORS`].
pub fn applied(exposed: &[Exposed]) -> Vec<Applied> {
    FACTORS
        .iter()
        .filter_map(|factor| {
            let findings: Vec<i64> = exposed
                .iter()
                .filter(|e| factor_of(e).is_some_and(|f| f.code == factor.code))
                .map(|e| e.finding_id)
                .collect();
            (!findings.is_empty()).then_some(Applied { factor: *factor, findings })
        })
        .collect()
}

/// The combined multiplier of the factors applied ([`compose`]).
pub fn combined(applied: &[Applied]) -> f64 {
    compose(applied.iter().map(|a| a.factor.multiplier))
}

/// The factors, with their figures and sources (docs/PREDICTIONS.md lists them). The
/// published figures are each a single-factor association (policyholders with the
/// exposure against those without); they overlap, hence [`compose`].
pub const FACTORS: &[Factor] = &[
    Factor {
        code: "rdp_exposed",
        label: "Remote Desktop (RDP) open to the internet",
        multiplier: 2.5,
        figure: "policyholders using internet-exposed remote desktop protocol were 2.5 times more likely to experience a claim",
        source: "Coalition, 2024 Cyber Claims Report (claims of 2023)",
        assumption: false,
    },
    Factor {
        code: "end_of_life_software",
        label: "End-of-life software on an internet-facing host",
        multiplier: 3.0,
        figure: "[policyholders] who continued to use end-of-life software ... were three times more likely to suffer from an incident",
        source: "Coalition, 2023 Cyber Claims Report",
        assumption: false,
    },
    Factor {
        code: "critical_vulnerability",
        label: "Software with a critical vulnerability (CVSS 9 or more, or listed in CISA's KEV catalogue)",
        multiplier: 1.33,
        figure: "policyholders with even one unresolved critical vulnerability were 33% more likely to experience a claim",
        source: "Coalition, 2023 Cyber Claims Report",
        assumption: false,
    },
    Factor {
        code: "database_exposed",
        label: "A database or cache answering from the internet",
        multiplier: 2.0,
        figure: "organizations with an F Open Port letter grade are >2x more likely to experience a breach than companies with an A \
                 (a grade-level figure: one exposed database is taken to weigh as an F grade does — an assumption)",
        source: "Bitsight, Open Ports risk vector (help centre)",
        assumption: true,
    },
    Factor {
        code: "cleartext_remote_access",
        label: "Telnet, FTP or SMB open to the internet",
        multiplier: 2.0,
        figure: "organizations with an F Open Port letter grade are >2x more likely to experience a breach than companies with an A \
                 (a grade-level figure applied to one clear-text remote-access service — an assumption)",
        source: "Bitsight, Open Ports risk vector (help centre)",
        assumption: true,
    },
    Factor {
        code: "email_spoofable",
        label: "Mail that can be spoofed (no DMARC enforcement, or no SPF)",
        multiplier: 1.2,
        figure: "more than half (56%) of all 2023 claims were a result of funds transfer fraud (FTF) or business email compromise \
                 (BEC); no figure ties missing DMARC to their frequency, so the multiplier is an assumption",
        source: "Coalition, 2024 Cyber Claims Report; FBI IC3, 2024 Internet Crime Report (21,442 BEC complaints, $2.77 billion)",
        assumption: true,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn found(id: i64, code: &str, critical: bool) -> Exposed {
        Exposed { finding_id: id, code: code.into(), asset: "h.example".into(), critical }
    }

    fn multiplier(code: &str) -> f64 {
        FACTORS.iter().find(|f| f.code == code).unwrap().multiplier
    }

    #[test]
    fn each_factor_applies_once_with_every_finding_that_triggers_it() {
        let exposed = [
            found(1, "open_ports.rdp_exposed", false),
            found(2, "open_ports.rdp_exposed", false),
            found(3, "vulnerabilities.cve", false),
            found(4, "vulnerabilities.cve", true),
            found(5, "spf.softfail_all", false),
        ];
        let a = applied(&exposed);
        let codes: Vec<(&str, &[i64])> = a.iter().map(|a| (a.factor.code, a.findings.as_slice())).collect();
        assert_eq!(codes, [("rdp_exposed", &[1, 2][..]), ("critical_vulnerability", &[4][..])]);
        let product = multiplier("rdp_exposed") * multiplier("critical_vulnerability");
        assert!((combined(&a) - compose([product])).abs() < 1e-12, "factors multiply, then bend");
        assert_eq!(combined(&[]), 1.0);
    }

    #[test]
    fn factors_multiply_up_to_the_knee_then_bend_towards_the_cap() {
        // Any single factor applies exactly.
        for f in FACTORS {
            assert!((compose([f.multiplier]) - f.multiplier).abs() < 1e-12, "{}", f.code);
        }
        assert!((compose([1.2, 2.0]) - 2.4).abs() < 1e-12);
        // Past the knee: below the product and the cap, rising with every factor, and
        // continuous at the knee.
        let mut last = compose([EXPOSURE_KNEE]);
        for extra in [1.01, 1.2, 1.5, 2.0, 3.0, 10.0, 1e6] {
            let e = compose([EXPOSURE_KNEE, extra]);
            assert!(e > last && e < EXPOSURE_KNEE * extra && e < EXPOSURE_CAP, "{extra}: {e}");
            last = e;
        }
        assert!((compose([EXPOSURE_KNEE * 1.000_001]) - EXPOSURE_KNEE).abs() < 1e-4);
        // Fixing any one of several findings moves the result (the point of the bend).
        let all: Vec<f64> = FACTORS.iter().map(|f| f.multiplier).collect();
        for i in 0..all.len() {
            let without: Vec<f64> = all.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, m)| *m).collect();
            assert!(compose(without) < compose(all.clone()), "factor {i}");
        }
    }

    #[test]
    fn exposures_move_the_breach_share_within_the_published_range() {
        let share = |codes: &[&str]| {
            let exposed: Vec<Exposed> = codes.iter().enumerate().map(|(i, c)| found(i as i64, c, false)).collect();
            breach_share(&applied(&exposed)).share
        };
        assert_eq!(share(&[]), BREACH_SHARE);
        assert_eq!(share(&["open_ports.rdp_exposed"]), BREACH_SHARE);
        assert_eq!(share(&["open_ports.redis_exposed"]), 0.55);
        assert_eq!(share(&["dmarc.policy_none"]), 0.35);
        assert_eq!(share(&["open_ports.redis_exposed", "dmarc.policy_none"]), BREACH_SHARE);
    }

    #[test]
    fn the_product_is_capped() {
        let every: Vec<Exposed> = [
            "open_ports.rdp_exposed",
            "open_ports.redis_exposed",
            "open_ports.telnet_exposed",
            "sbom.end_of_life",
            "dmarc.policy_none",
        ]
        .iter()
        .enumerate()
        .map(|(i, c)| found(i as i64, c, false))
        .chain([found(9, "vulnerabilities.cve", true)])
        .collect();
        let a = applied(&every);
        assert_eq!(a.len(), FACTORS.len(), "every factor triggered");
        assert!(combined(&a) < EXPOSURE_CAP && combined(&a) > EXPOSURE_CAP * 0.9, "{}", combined(&a));
    }

    #[test]
    fn every_factor_has_a_trigger_and_a_figure_and_a_source_unless_an_assumption() {
        for f in FACTORS {
            assert!(f.code == "critical_vulnerability" || TRIGGERS.iter().any(|(c, _)| *c == f.code), "{}", f.code);
            assert!(f.multiplier >= 1.0 && f.multiplier <= EXPOSURE_CAP, "{}", f.code);
            assert!(!f.figure.is_empty() && !f.figure.contains("TODO"), "{}: its figure", f.code);
            assert!(!f.source.is_empty(), "{}: its source", f.code);
        }
    }
}
