//! MITRE CAPEC (Common Attack Pattern Enumeration and Classification) attack patterns,
//! read either from the CAPEC XML catalogue (`<Attack_Pattern_Catalog>`, whose
//! descriptions, prerequisites and mitigations may hold XHTML markup) or from STIX 2.1
//! JSON bundles as published in mitre/cti (`attack-pattern` objects, whose external
//! references carry the CAPEC id and the related CWEs). [`CapecIndex`] then relates CWE
//! weaknesses to attack patterns the way cve-search fills the `capec` field of a CVE.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{BufRead, Read};

use quick_xml::events::Event;
use serde::Deserialize;
use serde_json::json;

use crate::FeedError;
use crate::cwe::Weakness;
use crate::cwe::support::{Text, XmlStream, cap_text, excerpt, is_inline, json_error, markup_text};

const WHAT_XML: &str = "CAPEC catalogue";
const WHAT_STIX: &str = "CAPEC STIX bundle";

/// The largest STIX bundle accepted, in bytes (the whole CAPEC as one bundle is a few MB).
pub const MAX_STIX_BYTES: u64 = 256 * 1024 * 1024;

/// One CAPEC attack pattern, with its texts reduced to plain text (markup removed,
/// whitespace collapsed, each capped at 64 KiB).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttackPattern {
    /// The CAPEC number, without the `CAPEC-` prefix.
    pub id: u32,
    /// The pattern name.
    pub name: String,
    /// The description.
    pub summary: String,
    /// The prerequisites, joined with spaces.
    pub prerequisites: String,
    /// The mitigations, joined with spaces (empty when the source has none).
    pub solutions: String,
    /// The related weaknesses, such as `CWE-425`, in source order without duplicates.
    pub related_weaknesses: Vec<String>,
}

/// The CAPEC number of `CAPEC-87` (or `87`).
fn capec_number(raw: &str) -> Option<u32> {
    digits(raw.trim().strip_prefix("CAPEC-").unwrap_or(raw.trim()))
}

/// The CWE number of `CWE-79` (or `79`).
fn cwe_number(raw: &str) -> Option<u32> {
    digits(raw.trim().strip_prefix("CWE-").unwrap_or(raw.trim()))
}

fn digits(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) { None } else { s.parse().ok() }
}

/// Adds `CWE-<id>` to `list` unless present.
fn push_weakness(list: &mut Vec<String>, id: u32) {
    let name = format!("CWE-{id}");
    if !list.contains(&name) {
        list.push(name);
    }
}

/// Which text of the current attack pattern is being collected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Summary,
    Prerequisites,
    Solutions,
}

/// The list elements of an attack pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum List {
    Prerequisites,
    Mitigations,
    Weaknesses,
}

/// An attack pattern being read.
#[derive(Debug)]
struct PatternBuilder {
    level: usize,
    deprecated: bool,
    id: u32,
    name: String,
    summary: Text,
    prerequisites: Text,
    solutions: Text,
    related_weaknesses: Vec<String>,
}

impl PatternBuilder {
    fn text(&mut self, field: Field) -> &mut Text {
        match field {
            Field::Summary => &mut self.summary,
            Field::Prerequisites => &mut self.prerequisites,
            Field::Solutions => &mut self.solutions,
        }
    }

    fn finish(self) -> AttackPattern {
        AttackPattern {
            id: self.id,
            name: self.name,
            summary: self.summary.finish(),
            prerequisites: self.prerequisites.finish(),
            solutions: self.solutions.finish(),
            related_weaknesses: self.related_weaknesses,
        }
    }
}

/// Reads the `<Attack_Pattern>` elements of the `<Attack_Patterns>` of a CAPEC XML
/// catalogue, skipping those with `Status="Deprecated"`.
///
/// `summary` is the text of `<Description>`, `prerequisites` that of every
/// `<Prerequisite>`, `solutions` that of every `<Mitigation>`, and `related_weaknesses`
/// the `CWE_ID` of every `<Related_Weakness>`. Errors carry the byte offset in the document.
pub fn parse_capec_xml<R: BufRead>(reader: R) -> Result<Vec<AttackPattern>, FeedError> {
    let mut xml = XmlStream::new(reader, WHAT_XML, "Attack_Pattern_Catalog");
    let mut buf = Vec::new();
    let mut patterns = Vec::new();
    let mut patterns_level: Option<usize> = None;
    let mut current: Option<PatternBuilder> = None;
    let mut list: Option<(usize, List)> = None;
    let mut collecting: Option<(usize, Field)> = None;

    loop {
        let (event, level) = xml.next(&mut buf)?;
        if let (Some((_, field)), Some(pattern)) = (collecting, current.as_mut())
            && let Some(text) = xml.text(&event)?
        {
            pattern.text(field).push(&text);
            continue;
        }
        match event {
            Event::Start(ref e) | Event::Empty(ref e) => {
                let is_start = matches!(event, Event::Start(_));
                let name = e.local_name();
                let name = name.as_ref();
                let parent = level - 1;
                if let (Some((_, field)), Some(pattern)) = (collecting, current.as_mut()) {
                    // Markup inside a text element, such as <xhtml:p>.
                    if !is_inline(name) {
                        pattern.text(field).boundary();
                    }
                    continue;
                }
                let list_here = list.filter(|(l, _)| *l == parent).map(|(_, kind)| kind);
                match (name, current.as_mut()) {
                    (b"Attack_Patterns", None) if is_start && parent == 1 => patterns_level = Some(level),
                    (b"Attack_Pattern", None) if patterns_level == Some(parent) => {
                        let id = xml.required_attr(e, "ID")?;
                        let pattern = PatternBuilder {
                            level,
                            id: xml.parse_id(&id, "ID")?,
                            name: cap_text(xml.required_attr(e, "Name")?),
                            deprecated: xml.attr(e, "Status")?.is_some_and(|s| s.eq_ignore_ascii_case("Deprecated")),
                            summary: Text::default(),
                            prerequisites: Text::default(),
                            solutions: Text::default(),
                            related_weaknesses: Vec::new(),
                        };
                        if is_start {
                            current = Some(pattern);
                        } else if !pattern.deprecated {
                            patterns.push(pattern.finish());
                        }
                    }
                    (_, Some(pattern)) if pattern.level == parent && is_start => match name {
                        b"Description" => collecting = Some((level, Field::Summary)),
                        b"Prerequisites" => list = Some((level, List::Prerequisites)),
                        b"Mitigations" => list = Some((level, List::Mitigations)),
                        b"Related_Weaknesses" => list = Some((level, List::Weaknesses)),
                        _ => {}
                    },
                    (b"Prerequisite", Some(pattern)) if list_here == Some(List::Prerequisites) && is_start => {
                        pattern.prerequisites.boundary();
                        collecting = Some((level, Field::Prerequisites));
                    }
                    (b"Mitigation", Some(pattern)) if list_here == Some(List::Mitigations) && is_start => {
                        pattern.solutions.boundary();
                        collecting = Some((level, Field::Solutions));
                    }
                    (b"Related_Weakness", Some(pattern)) if list_here == Some(List::Weaknesses) => {
                        let cwe = xml.required_attr(e, "CWE_ID")?;
                        push_weakness(&mut pattern.related_weaknesses, xml.parse_id(&cwe, "CWE_ID")?);
                    }
                    _ => {}
                }
            }
            Event::End(ref e) => {
                if let Some((collecting_level, field)) = collecting {
                    if collecting_level == level {
                        collecting = None;
                    } else if let Some(pattern) = current.as_mut()
                        && !is_inline(e.local_name().as_ref())
                    {
                        pattern.text(field).boundary();
                    }
                    continue;
                }
                if list.is_some_and(|(l, _)| l == level) {
                    list = None;
                }
                if current.as_ref().is_some_and(|p| p.level == level)
                    && let Some(pattern) = current.take()
                    && !pattern.deprecated
                {
                    patterns.push(pattern.finish());
                }
                if patterns_level == Some(level) {
                    patterns_level = None;
                }
            }
            Event::Eof => return Ok(patterns),
            _ => {}
        }
    }
}

#[derive(Deserialize)]
struct Bundle {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    objects: Vec<StixObject>,
}

/// The fields of the STIX objects this parser reads (attack patterns, courses of action
/// and relationships); the others are ignored.
#[derive(Deserialize)]
struct StixObject {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    id: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    external_references: Vec<ExternalReference>,
    #[serde(default)]
    x_capec_prerequisites: Vec<String>,
    #[serde(default)]
    x_capec_status: String,
    #[serde(default)]
    revoked: bool,
    #[serde(default)]
    relationship_type: String,
    #[serde(default)]
    source_ref: String,
    #[serde(default)]
    target_ref: String,
}

#[derive(Deserialize)]
struct ExternalReference {
    #[serde(default)]
    source_name: String,
    #[serde(default)]
    external_id: Option<String>,
}

/// Reads the attack patterns of one STIX 2.1 bundle of at most [`MAX_STIX_BYTES`],
/// skipping revoked and deprecated ones.
///
/// The CAPEC id comes from the external reference whose `source_name` is `capec`, the
/// related weaknesses from those whose `source_name` is `cwe`, the prerequisites from
/// `x_capec_prerequisites`, and the solutions from the `course-of-action` objects that a
/// `mitigates` relationship links to the pattern (or all of them when the bundle has a
/// single pattern and no such relationship). Errors are positioned by line and column,
/// or at `object N`, the index in `objects` (from 0).
pub fn parse_capec_stix<R: Read>(reader: R) -> Result<Vec<AttackPattern>, FeedError> {
    let mut limited = reader.take(MAX_STIX_BYTES + 1);
    let parsed = serde_json::from_reader::<_, Bundle>(&mut limited);
    if limited.limit() == 0 {
        return Err(FeedError::format(WHAT_STIX, format!("byte {MAX_STIX_BYTES}"), "the bundle is too large"));
    }
    let bundle = parsed.map_err(|e| json_error(WHAT_STIX, e))?;
    if bundle.kind != "bundle" {
        return Err(FeedError::format(WHAT_STIX, "line 1", format!("type is {}, not bundle", excerpt(&bundle.kind))));
    }

    let mut mitigations: HashMap<&str, Vec<&str>> = HashMap::new();
    let courses: HashMap<&str, &str> = bundle
        .objects
        .iter()
        .filter(|o| o.kind == "course-of-action" && !o.revoked)
        .map(|o| (o.id.as_str(), o.description.as_str()))
        .collect();
    for relation in bundle.objects.iter().filter(|o| o.kind == "relationship" && o.relationship_type == "mitigates") {
        if let Some(&course) = courses.get(relation.source_ref.as_str()) {
            mitigations.entry(relation.target_ref.as_str()).or_default().push(course);
        }
    }
    let pattern_count = bundle.objects.iter().filter(|o| o.kind == "attack-pattern").count();
    let unlinked_courses: Vec<&str> = if mitigations.is_empty() && pattern_count == 1 {
        bundle
            .objects
            .iter()
            .filter(|o| o.kind == "course-of-action" && !o.revoked)
            .map(|o| o.description.as_str())
            .collect()
    } else {
        Vec::new()
    };

    let mut patterns = Vec::new();
    for (index, object) in bundle.objects.iter().enumerate() {
        if object.kind != "attack-pattern" || object.revoked || object.x_capec_status.eq_ignore_ascii_case("Deprecated")
        {
            continue;
        }
        let error = |message: String| FeedError::format(WHAT_STIX, format!("object {index}"), message);
        let mut id = None;
        let mut related_weaknesses = Vec::new();
        for reference in &object.external_references {
            let Some(external_id) = reference.external_id.as_deref() else { continue };
            match reference.source_name.as_str() {
                "capec" if id.is_none() => {
                    id = Some(capec_number(external_id).ok_or_else(|| {
                        error(format!("the capec external_id {} is not a CAPEC id", excerpt(external_id)))
                    })?);
                }
                "cwe" => {
                    let cwe = cwe_number(external_id).ok_or_else(|| {
                        error(format!("the cwe external_id {} is not a CWE id", excerpt(external_id)))
                    })?;
                    push_weakness(&mut related_weaknesses, cwe);
                }
                _ => {}
            }
        }
        let id = id.ok_or_else(|| error("the attack pattern has no capec external reference".to_owned()))?;
        let solutions = mitigations.get(object.id.as_str()).unwrap_or(&unlinked_courses);
        patterns.push(AttackPattern {
            id,
            name: cap_text(object.name.trim().to_owned()),
            summary: markup_text(&object.description),
            prerequisites: join_texts(object.x_capec_prerequisites.iter().map(String::as_str)),
            solutions: join_texts(solutions.iter().copied()),
            related_weaknesses,
        });
    }
    Ok(patterns)
}

/// The plain text of each fragment, joined with spaces and capped.
fn join_texts<'a>(fragments: impl Iterator<Item = &'a str>) -> String {
    let mut text = Text::default();
    for fragment in fragments {
        text.boundary();
        text.push(&markup_text(fragment));
    }
    text.finish()
}

/// Attack patterns by CWE: the relation cve-search uses to fill the `capec` field of a
/// CVE from its CWE.
#[derive(Debug, Clone, Default)]
pub struct CapecIndex {
    /// The CAPEC ids listed by each known weakness.
    by_weakness: HashMap<u32, Vec<u32>>,
    /// The CAPEC ids of the patterns that name each weakness.
    by_related: HashMap<u32, BTreeSet<u32>>,
    patterns: BTreeMap<u32, AttackPattern>,
}

impl CapecIndex {
    /// Indexes `patterns` (a later pattern with the same id replaces an earlier one) and
    /// the `Related_Attack_Patterns` of `weaknesses`.
    pub fn new(weaknesses: &[Weakness], patterns: Vec<AttackPattern>) -> Self {
        let by_weakness = weaknesses.iter().map(|w| (w.id, w.capec_ids.clone())).collect();
        let patterns: BTreeMap<u32, AttackPattern> = patterns.into_iter().map(|p| (p.id, p)).collect();
        let mut by_related: HashMap<u32, BTreeSet<u32>> = HashMap::new();
        for pattern in patterns.values() {
            for cwe in pattern.related_weaknesses.iter().filter_map(|w| cwe_number(w)) {
                by_related.entry(cwe).or_default().insert(pattern.id);
            }
        }
        Self { by_weakness, by_related, patterns }
    }

    /// The attack patterns of weakness `cwe` (`CWE-79` or `79`), sorted by CAPEC id, as
    /// cve-search shows them: `{"id": "63", "name", "summary", "prerequisites",
    /// "solutions", "related_weakness": ["79", …]}` (ids as strings without prefix,
    /// `related_weakness` sorted as strings like cve-search does).
    ///
    /// A known weakness gives the patterns its `Related_Attack_Patterns` list; an unknown
    /// one the patterns whose related weaknesses name it. Anything that is not a CWE id,
    /// such as `NVD-CWE-Other`, gives nothing.
    pub fn for_cwe(&self, cwe: &str) -> Vec<serde_json::Value> {
        let Some(cwe) = cwe_number(cwe) else { return Vec::new() };
        let ids: BTreeSet<u32> = match self.by_weakness.get(&cwe) {
            Some(ids) => ids.iter().copied().collect(),
            None => self.by_related.get(&cwe).cloned().unwrap_or_default(),
        };
        ids.iter().filter_map(|id| self.patterns.get(id)).map(cve_search_json).collect()
    }
}

/// A pattern as cve-search shows it in a CVE's `capec` list.
pub fn cve_search_json(pattern: &AttackPattern) -> serde_json::Value {
    // A set of strings: sorted as strings, as cve-search sorts them.
    let related: BTreeSet<String> =
        pattern.related_weaknesses.iter().filter_map(|w| cwe_number(w)).map(|n| n.to_string()).collect();
    json!({
        "id": pattern.id.to_string(),
        "name": pattern.name,
        "summary": pattern.summary,
        "prerequisites": pattern.prerequisites,
        "solutions": pattern.solutions,
        "related_weakness": related,
    })
}

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::io::BufReader;

    use proptest::prelude::*;

    use super::*;
    use crate::cwe::parse_cwe;
    use crate::cwe::support::shared_data;

    const SMALL_XML: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<Attack_Pattern_Catalog xmlns="http://capec.mitre.org/capec-3" xmlns:xhtml="http://www.w3.org/1999/xhtml" Name="CAPEC" Version="3.9">
   <Attack_Patterns>
      <Attack_Pattern ID="63" Name="Cross-Site Scripting (XSS)" Abstraction="Standard" Status="Draft">
         <Description>
            <xhtml:p>An adversary embeds malicious scripts in content that will be served to web browsers.</xhtml:p>
            <xhtml:p>The goal is to <xhtml:b>execute</xhtml:b> them in the victim&apos;s browser.</xhtml:p>
         </Description>
         <Execution_Flow><Attack_Step><Description>Not the summary.</Description></Attack_Step></Execution_Flow>
         <Prerequisites>
            <Prerequisite>Target client software must be a client that allows scripting.</Prerequisite>
            <Prerequisite>The server must reflect input &amp; not encode it.</Prerequisite>
         </Prerequisites>
         <Mitigations>
            <Mitigation>Use browser technologies that do not allow client side scripting.</Mitigation>
            <Mitigation><xhtml:p>Utilize strict type, character, and encoding enforcement.</xhtml:p></Mitigation>
         </Mitigations>
         <Related_Weaknesses>
            <Related_Weakness CWE_ID="79"/>
            <Related_Weakness CWE_ID="20"/>
         </Related_Weaknesses>
      </Attack_Pattern>
      <Attack_Pattern ID="87" Name="Forceful Browsing" Abstraction="Standard" Status="Draft">
         <Description>An attacker employs forceful browsing (direct URL entry).</Description>
         <Related_Weaknesses><Related_Weakness CWE_ID="425"/></Related_Weaknesses>
      </Attack_Pattern>
      <Attack_Pattern ID="2" Name="DEPRECATED: Old" Status="Deprecated"><Description>Gone.</Description></Attack_Pattern>
   </Attack_Patterns>
   <Categories><Category ID="100" Name="Not a pattern"/></Categories>
</Attack_Pattern_Catalog>"#;

    fn small_patterns() -> Vec<AttackPattern> {
        parse_capec_xml(SMALL_XML.as_bytes()).unwrap()
    }

    #[test]
    fn small_xml_catalogue() {
        let patterns = small_patterns();
        assert_eq!(patterns.len(), 2, "{patterns:#?}");
        assert_eq!(
            patterns[0],
            AttackPattern {
                id: 63,
                name: "Cross-Site Scripting (XSS)".into(),
                summary: "An adversary embeds malicious scripts in content that will be served to web browsers. \
                          The goal is to execute them in the victim's browser."
                    .into(),
                prerequisites: "Target client software must be a client that allows scripting. \
                                The server must reflect input & not encode it."
                    .into(),
                solutions: "Use browser technologies that do not allow client side scripting. \
                            Utilize strict type, character, and encoding enforcement."
                    .into(),
                related_weaknesses: vec!["CWE-79".into(), "CWE-20".into()],
            }
        );
        assert_eq!(patterns[1].id, 87);
        assert_eq!(patterns[1].prerequisites, "");
        assert_eq!(patterns[1].related_weaknesses, ["CWE-425"]);
    }

    #[test]
    fn malformed_xml_is_a_format_error() {
        let cut = SMALL_XML.find("</Mitigations>").unwrap();
        for bad in [&SMALL_XML[..cut], &SMALL_XML.replace("</Prerequisites>", "</Prerequisite>"), "<Weakness_Catalog/>"]
        {
            let err = parse_capec_xml(bad.as_bytes()).unwrap_err();
            assert!(matches!(&err, FeedError::Format { position, .. } if position.starts_with("byte ")), "{err}");
        }
    }

    const STIX: &str = r#"{"type": "bundle", "id": "bundle--1", "objects": [
        {"type": "attack-pattern", "id": "attack-pattern--a", "name": "Forceful Browsing",
         "description": "An attacker employs forceful browsing.",
         "external_references": [
            {"external_id": "CAPEC-87", "source_name": "capec"},
            {"external_id": "CWE-425", "source_name": "cwe"},
            {"external_id": "CWE-285", "source_name": "cwe"},
            {"external_id": "34", "source_name": "WASC"}],
         "x_capec_prerequisites": ["Pages must be discoverable.", "<xhtml:p>And unprotected.</xhtml:p>"],
         "x_capec_status": "Draft"},
        {"type": "attack-pattern", "id": "attack-pattern--b", "name": "Old",
         "description": "Deprecated.", "x_capec_status": "Deprecated",
         "external_references": [{"external_id": "CAPEC-2", "source_name": "capec"}]},
        {"type": "attack-pattern", "id": "attack-pattern--c", "name": "Revoked", "revoked": true,
         "description": "", "external_references": []},
        {"type": "course-of-action", "id": "course-of-action--x", "name": "coa-87-0",
         "description": "Authenticate every request."},
        {"type": "relationship", "id": "relationship--r", "relationship_type": "mitigates",
         "source_ref": "course-of-action--x", "target_ref": "attack-pattern--a"}
    ]}"#;

    #[test]
    fn small_stix_bundle() {
        let patterns = parse_capec_stix(STIX.as_bytes()).unwrap();
        assert_eq!(
            patterns,
            [AttackPattern {
                id: 87,
                name: "Forceful Browsing".into(),
                summary: "An attacker employs forceful browsing.".into(),
                prerequisites: "Pages must be discoverable. And unprotected.".into(),
                solutions: "Authenticate every request.".into(),
                related_weaknesses: vec!["CWE-425".into(), "CWE-285".into()],
            }]
        );
    }

    #[test]
    fn bad_stix_is_an_error() {
        let no_capec = STIX.replace(r#"{"external_id": "CAPEC-87", "source_name": "capec"},"#, "");
        let err = parse_capec_stix(no_capec.as_bytes()).unwrap_err();
        assert!(matches!(&err, FeedError::Format { position, .. } if position == "object 0"), "{err}");
        let bad_cwe = STIX.replace("CWE-285", "CWE-x");
        assert!(parse_capec_stix(bad_cwe.as_bytes()).is_err());
        assert!(parse_capec_stix(&STIX.as_bytes()[..300]).is_err());
        assert!(parse_capec_stix(&br#"{"type": "indicator", "objects": []}"#[..]).is_err());
    }

    #[test]
    fn index_by_cwe() {
        let weaknesses = [
            Weakness { id: 79, name: "XSS".into(), capec_ids: vec![87, 63, 999] },
            Weakness { id: 1, name: "No patterns".into(), capec_ids: vec![] },
        ];
        let index = CapecIndex::new(&weaknesses, small_patterns());
        let ids =
            |cwe: &str| index.for_cwe(cwe).iter().map(|p| p["id"].as_str().unwrap().to_owned()).collect::<Vec<_>>();
        assert_eq!(ids("CWE-79"), ["63", "87"]);
        assert_eq!(ids("79"), ["63", "87"]);
        // An unknown weakness falls back to the patterns that name it.
        assert_eq!(ids("CWE-425"), ["87"]);
        assert_eq!(ids("CWE-20"), ["63"]);
        for none in ["CWE-1", "CWE-12345", "Unknown", "NVD-CWE-Other", "NVD-CWE-noinfo", "", "CWE-"] {
            assert!(ids(none).is_empty(), "{none}");
        }
        let xss = &index.for_cwe("CWE-79")[0];
        assert_eq!(xss["name"], "Cross-Site Scripting (XSS)");
        assert_eq!(xss["related_weakness"], json!(["20", "79"]));
        assert!(xss["prerequisites"].as_str().unwrap().starts_with("Target client"));
    }

    fn real_stix_patterns() -> Option<Vec<AttackPattern>> {
        let dir = shared_data("cwe-capec/capec-stix")?;
        let mut paths: Vec<_> = std::fs::read_dir(dir).unwrap().map(|entry| entry.unwrap().path()).collect();
        paths.sort();
        assert_eq!(paths.len(), 615);
        let mut patterns = Vec::new();
        for path in paths {
            let parsed = parse_capec_stix(BufReader::new(File::open(&path).unwrap()));
            patterns.extend(parsed.unwrap_or_else(|e| panic!("{}: {e}", path.display())));
        }
        Some(patterns)
    }

    #[test]
    fn real_stix_bundles() {
        let Some(patterns) = real_stix_patterns() else { return };
        // 615 bundles, of which 56 hold a deprecated pattern.
        assert_eq!(patterns.len(), 559);
        let forceful = patterns.iter().find(|p| p.id == 87).unwrap();
        assert_eq!(forceful.name, "Forceful Browsing");
        assert!(forceful.related_weaknesses.contains(&"CWE-425".to_owned()));
        assert!(patterns.iter().all(|p| !p.summary.contains("<xhtml:")));
    }

    #[test]
    fn real_index_for_xss() {
        let Some(cwe_path) = shared_data("cwe-capec/cwec_v4.15.xml") else { return };
        let Some(patterns) = real_stix_patterns() else { return };
        let weaknesses = parse_cwe(BufReader::new(File::open(cwe_path).unwrap())).unwrap();
        let index = CapecIndex::new(&weaknesses, patterns);
        let xss = index.for_cwe("CWE-79");
        assert!(!xss.is_empty());
        assert!(xss.iter().any(|p| p["id"] == "63"), "{xss:#?}");
        let ids: Vec<u32> = xss.iter().map(|p| p["id"].as_str().unwrap().parse().unwrap()).collect();
        assert!(ids.is_sorted());
        assert!(index.for_cwe("NVD-CWE-Other").is_empty());
    }

    proptest! {
        #[test]
        fn xml_never_panics(input in "(<Attack_Pattern_Catalog>|<Attack_Patterns>|<Attack_Pattern ID=\"1\" Name=\"n\">|</Attack_Pattern>|<Description>|</Description>|<xhtml:p>|</xhtml:p>|<Prerequisites>|<Prerequisite>|</Prerequisite>|<Related_Weakness CWE_ID=\"[0-9x]\"/>|</Attack_Patterns>|</Attack_Pattern_Catalog>|&amp;|&x;|[a-z ]{0,4}){0,40}") {
            let _ = parse_capec_xml(input.as_bytes());
        }

        #[test]
        fn stix_never_panics(cut in 0..STIX.len(), junk in "[\\[\\]{}\",:a-zCWE0-9 -]{0,20}") {
            let mut text = STIX.as_bytes()[..cut].to_vec();
            text.extend_from_slice(junk.as_bytes());
            let _ = parse_capec_stix(text.as_slice());
        }
    }
}
