//! Risk vectors (the twelve score components), severities and grades.

/// A value that is not one of an enumeration's names; carries the allowed names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} must be one of: {allowed}")]
pub struct UnknownValue {
    pub what: &'static str,
    pub allowed: String,
}

macro_rules! named_enum {
    ($(#[$m:meta])* $name:ident, $what:literal, { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name { $($variant),+ }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            /// Parses a name case-insensitively.
            pub fn parse(raw: &str) -> Result<Self, $crate::risk::UnknownValue> {
                Self::ALL
                    .iter()
                    .copied()
                    .find(|v| v.as_str().eq_ignore_ascii_case(raw.trim()))
                    .ok_or_else(|| $crate::risk::UnknownValue {
                        what: $what,
                        allowed: Self::ALL.iter().map(|v| v.as_str()).collect::<Vec<_>>().join(", "),
                    })
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let raw = <String as ::serde::Deserialize>::deserialize(d)?;
                Self::parse(&raw).map_err(::serde::de::Error::custom)
            }
        }
    };
}
pub(crate) use named_enum;

named_enum!(
    /// The twelve components of a score, in the order the score object lists them.
    RiskVector, "risk vector", {
        Spf => "spf",
        Dkim => "dkim",
        CertificateConf => "certificate_conf",
        CertificateInfo => "certificate_info",
        OpenPorts => "open_ports",
        WebHeaders => "web_headers",
        Dmarc => "dmarc",
        ItStandardization => "it_standardization",
        Digitalization => "digitalization",
        CertificateCve => "certificate_cve",
        Vulnerabilities => "vulnerabilities",
        Sbom => "sbom",
    }
);

named_enum!(
    /// How bad a finding is.
    Severity, "severity", {
        Info => "info",
        Low => "low",
        Medium => "medium",
        High => "high",
        Critical => "critical",
    }
);

named_enum!(
    /// Letter grade of a score.
    Grade, "grade", {
        A => "A",
        B => "B",
        C => "C",
        D => "D",
        E => "E",
        F => "F",
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn risk_vectors_parse_case_insensitively() {
        assert_eq!(RiskVector::ALL.len(), 12);
        assert_eq!(RiskVector::parse("DKIM").unwrap(), RiskVector::Dkim);
        assert_eq!(RiskVector::parse("Web_Headers").unwrap(), RiskVector::WebHeaders);
        let err = RiskVector::parse("dns").unwrap_err();
        assert!(err.to_string().contains("spf, dkim, certificate_conf"), "{err}");
        for v in RiskVector::ALL {
            assert_eq!(RiskVector::parse(v.as_str()).unwrap(), *v);
        }
    }

    #[test]
    fn severities_order_from_info_to_critical() {
        assert!(Severity::Critical > Severity::High && Severity::Low > Severity::Info);
    }
}
