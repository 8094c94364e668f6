//! VERIS incident records (the VERIS Community Database, VCDB) mapped to the
//! incident object the API answers with (`model::Incident`).
//!
//! Every rule of the mapping is written down in docs/INCIDENTS.md. The parser is
//! total over untrusted input: any text gives either a `VerisIncident` or a
//! `VerisError`, never a panic. Members are looked up by name without regard to
//! case (VERIS files write both `Unknown` and `unknown`), values of an unexpected
//! JSON type are ignored, and nothing is invented: a member absent from the
//! record is absent from (or empty in) the result.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use model::{DateText, Incident};
use serde_json::{Map, Value};
use time::{Date, Month};

/// Largest VERIS file (and text) accepted, in bytes: 4 MiB.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// Longest incident identifier accepted, in characters.
const MAX_ID_CHARS: usize = 200;

/// Longest victim name or action variety placed in a title, in characters.
const MAX_TITLE_PART_CHARS: usize = 80;

/// Earliest and latest year accepted in a VERIS date.
const YEARS: std::ops::RangeInclusive<i64> = 1900..=9999;

/// VERIS action categories, in the fixed order used for `type`, with their labels.
const ACTIONS: [(&str, &str); 8] = [
    ("hacking", "hacking"),
    ("malware", "malware"),
    ("social", "social engineering"),
    ("misuse", "misuse"),
    ("physical", "physical"),
    ("error", "error"),
    ("environmental", "environmental"),
    ("unknown", "unknown"),
];

/// VERIS actor categories, in the fixed order used for `threat_actor`.
const ACTORS: [&str; 4] = ["external", "internal", "partner", "unknown"];

#[derive(Debug, thiserror::Error)]
pub enum VerisError {
    /// The file is not a usable VERIS record.
    #[error("{file}: {message}")]
    Bad { file: String, message: String },
    /// The file or folder could not be read.
    #[error("{0}: {1}")]
    Io(String, std::io::Error),
    /// The file repeats an incident already read from an earlier file (VCDB holds
    /// a few records twice under two file names); the later file is left out.
    #[error("{file}: incident_id {incident_id} already read from {first}")]
    Duplicate { file: String, incident_id: String, first: String },
}

impl VerisError {
    fn bad(file: &str, message: impl Into<String>) -> Self {
        VerisError::Bad { file: file.to_string(), message: message.into() }
    }

    /// The file (or folder) the error is about.
    pub fn file(&self) -> &str {
        match self {
            VerisError::Bad { file, .. } => file,
            VerisError::Io(file, _) => file,
            VerisError::Duplicate { file, .. } => file,
        }
    }
}

/// One VERIS record mapped to the API's incident, with the victim fields kept
/// apart for linking the incident to a company (docs/INCIDENTS.md).
#[derive(Debug, Clone, PartialEq)]
pub struct VerisIncident {
    pub incident: Incident,
    /// VERIS `victim.victim_id` (the victim's name).
    pub victim_name: Option<String>,
    /// VERIS `victim.industry` (a NAICS code).
    pub victim_industry: Option<String>,
    /// VERIS `victim.employee_count` (a band such as `1001 to 10000`).
    pub victim_employees: Option<String>,
    /// VERIS `victim.country` (ISO 3166-1 alpha-2 codes joined with `, `; `Unknown` left out).
    pub victim_country: Option<String>,
}

/// How much of a VERIS date was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Precision {
    Day,
    Month,
    Year,
}

impl Precision {
    fn as_str(self) -> &'static str {
        match self {
            Precision::Day => "day",
            Precision::Month => "month",
            Precision::Year => "year",
        }
    }
}

/// Maps one VERIS record (the text of one file) to an incident. `file` names the
/// source in errors.
pub fn parse_incident(text: &str, file: &str) -> Result<VerisIncident, VerisError> {
    if u64::try_from(text.len()).unwrap_or(u64::MAX) > MAX_FILE_BYTES {
        return Err(VerisError::bad(file, format!("larger than {MAX_FILE_BYTES} bytes")));
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let doc: Value =
        serde_json::from_str(text).map_err(|e| VerisError::bad(file, format!("not a JSON document: {e}")))?;
    if !doc.is_object() {
        return Err(VerisError::bad(file, "not a JSON object"));
    }

    let incident_id = match member(&doc, "incident_id") {
        Some(Value::String(s)) => s.trim().to_uppercase(),
        Some(_) => return Err(VerisError::bad(file, "incident_id is not a string")),
        None => return Err(VerisError::bad(file, "no incident_id")),
    };
    if incident_id.is_empty() {
        return Err(VerisError::bad(file, "incident_id is empty"));
    }
    if incident_id.chars().count() > MAX_ID_CHARS {
        return Err(VerisError::bad(file, format!("incident_id is longer than {MAX_ID_CHARS} characters")));
    }
    if incident_id.chars().any(char::is_control) {
        return Err(VerisError::bad(file, "incident_id holds a control character"));
    }

    // Victims: the first is the primary victim.
    let victims = victim_objects(member(&doc, "victim"));
    let primary = victims.first().copied();
    let victim_name = primary.and_then(|v| text_of(member(v, "victim_id")));
    let victim_industry = primary.and_then(|v| text_of(member(v, "industry")));
    let victim_employees = primary.and_then(|v| text_of(member(v, "employee_count")));
    let countries: Vec<String> = primary
        .map(|v| strings(member(v, "country")).into_iter().filter(|c| !is_vague(c)).collect())
        .unwrap_or_default();
    let victim_country = if countries.is_empty() { None } else { Some(countries.join(", ")) };

    // Actions.
    let action = member(&doc, "action");
    let malware = action.and_then(|a| member(a, "malware")).filter(|m| m.is_object());
    let ransomware = malware.is_some_and(is_ransomware);
    let mut present: Vec<(&str, &str, &Value)> = Vec::new();
    for (key, label) in ACTIONS {
        if let Some(a) = action.and_then(|a| member(a, key)).filter(|a| a.is_object()) {
            let label = if key == "malware" && ransomware { "ransomware" } else { label };
            present.push((key, label, a));
        }
    }
    let kind = if present.is_empty() {
        "unknown".to_string()
    } else {
        present.iter().map(|(_, label, _)| *label).collect::<Vec<_>>().join(", ")
    };

    let mut vectors = BTreeSet::new();
    for (_, _, a) in &present {
        vectors.extend(strings(member(a, "vector")));
    }
    let known: Vec<String> = vectors.iter().filter(|v| !v.eq_ignore_ascii_case("unknown")).cloned().collect();
    let attack_vector = if known.is_empty() { join(vectors.iter().cloned()) } else { known.join(", ") };

    // Title and description.
    let victim_label =
        victim_name.as_deref().map(|n| clip(n, MAX_TITLE_PART_CHARS)).unwrap_or_else(|| "Unknown victim".to_string());
    let headline = if ransomware {
        "Ransomware".to_string()
    } else if let Some((_, label, a)) = present.first() {
        let label = capitalise(label);
        match strings(member(a, "variety")).into_iter().find(|v| !is_vague(v)) {
            Some(variety) => format!("{label} ({})", clip(&variety, MAX_TITLE_PART_CHARS)),
            None => label,
        }
    } else {
        "Unknown".to_string()
    };
    let title = format!("{victim_label} — {headline}");
    let description = match text_of(member(&doc, "summary")) {
        Some(summary) => summary,
        None => format!("{} incident affecting {victim_label}.", capitalise(&kind)),
    };

    // Actors.
    let actor = member(&doc, "actor");
    let mut actors = Vec::new();
    let mut motives = BTreeSet::new();
    for key in ACTORS {
        let Some(a) = actor.and_then(|x| member(x, key)).filter(|a| a.is_object()) else {
            continue;
        };
        let varieties: Vec<String> = strings(member(a, "variety")).into_iter().filter(|v| !is_vague(v)).collect();
        let names: Vec<String> =
            strings(member(a, "name")).into_iter().filter(|n| !is_vague(n) && !looks_like_uuid(n)).collect();
        let mut line = key.to_string();
        if !varieties.is_empty() {
            line.push_str(&format!(" ({})", varieties.join(", ")));
        }
        if !names.is_empty() {
            line.push_str(&format!(" named {}", names.join(", ")));
        }
        actors.push(line);
        for m in strings(member(a, "motive")) {
            let m = m.to_lowercase();
            motives.insert(if m == "na" { "not applicable".to_string() } else { m });
        }
    }
    let threat_actor = actors.join("; ");
    let informative: Vec<String> =
        motives.iter().filter(|m| !matches!(m.as_str(), "unknown" | "not applicable")).cloned().collect();
    let motivation = if informative.is_empty() { join(motives.iter().cloned()) } else { informative.join(", ") };

    // Dates.
    let timeline = member(&doc, "timeline");
    let detected = veris_date(timeline.and_then(|t| member(t, "incident")));
    let plus = member(&doc, "plus");
    let disclosed = veris_date(plus.and_then(|p| path(p, &["timeline", "notification"])));

    // Impact.
    let mut impact = Map::new();
    if let Some(imp) = member(&doc, "impact").filter(|v| v.is_object()) {
        put_text(&mut impact, "overall_rating", member(imp, "overall_rating"));
        put_number(&mut impact, "overall_amount", member(imp, "overall_amount"));
        put_text(&mut impact, "currency", member(imp, "iso_currency_code"));
        let losses: Vec<Value> = objects(member(imp, "loss"))
            .into_iter()
            .map(|l| {
                let mut o = Map::new();
                put_text(&mut o, "variety", member(l, "variety"));
                put_text(&mut o, "rating", member(l, "rating"));
                put_number(&mut o, "amount", member(l, "amount"));
                Value::Object(o)
            })
            .filter(|o| o.as_object().is_some_and(|o| !o.is_empty()))
            .collect();
        if !losses.is_empty() {
            impact.insert("loss".to_string(), Value::Array(losses));
        }
        put_text(&mut impact, "notes", member(imp, "notes"));
    }
    put_strings(&mut impact, "availability", path(&doc, &["attribute", "availability", "variety"]));

    // Affected entities.
    let mut entities = Vec::new();
    for (i, v) in victims.iter().enumerate() {
        let mut e = Map::new();
        e.insert("role".to_string(), Value::String((if i == 0 { "primary" } else { "other" }).to_string()));
        put_text(&mut e, "name", member(v, "victim_id"));
        put_text(&mut e, "industry_naics", member(v, "industry"));
        put_text(&mut e, "employee_count", member(v, "employee_count"));
        put_strings(&mut e, "country", member(v, "country"));
        put_text(&mut e, "state", member(v, "state"));
        put_number(&mut e, "locations_affected", member(v, "locations_affected"));
        if let Some(rev) = member(v, "revenue").filter(|r| r.is_object()) {
            let mut r = Map::new();
            put_number(&mut r, "amount", member(rev, "amount"));
            put_text(&mut r, "currency", member(rev, "iso_currency_code"));
            if !r.is_empty() {
                e.insert("revenue".to_string(), Value::Object(r));
            }
        }
        if e.len() > 1 {
            entities.push(Value::Object(e));
        }
        for name in strings(member(v, "secondary").and_then(|s| member(s, "victim_id"))) {
            let mut s = Map::new();
            s.insert("role".to_string(), Value::String("secondary".to_string()));
            s.insert("name".to_string(), Value::String(name));
            entities.push(Value::Object(s));
        }
    }

    // Response.
    let mut response = Map::new();
    if let Some(method) = discovery_method(member(&doc, "discovery_method")) {
        response.insert("discovery_method".to_string(), Value::String(method));
    }
    put_text(&mut response, "discovery_notes", member(&doc, "discovery_notes"));
    if let Some(span) = time_span(timeline.and_then(|t| member(t, "discovery"))) {
        response.insert("discovery_time".to_string(), span);
    }
    if let Some(span) = time_span(timeline.and_then(|t| member(t, "containment"))) {
        response.insert("containment".to_string(), span);
    }
    if let Some((_, precision)) = detected {
        response.insert("date_precision".to_string(), Value::String(precision.as_str().to_string()));
    }
    if let Some((_, precision)) = disclosed {
        response.insert("disclosure_date_precision".to_string(), Value::String(precision.as_str().to_string()));
    }

    // Data breach.
    let mut data_breach = Map::new();
    if let Some(c) = path(&doc, &["attribute", "confidentiality"]).filter(|c| c.is_object()) {
        let records = member(c, "data_total").filter(|n| n.is_number()).cloned().unwrap_or(Value::Null);
        data_breach.insert("records".to_string(), records);
        let mut varieties: Vec<String> = Vec::new();
        for d in objects(member(c, "data")) {
            if let Some(v) = text_of(member(d, "variety"))
                && !varieties.contains(&v)
            {
                varieties.push(v);
            }
        }
        data_breach
            .insert("data_varieties".to_string(), Value::Array(varieties.into_iter().map(Value::String).collect()));
        put_text(&mut data_breach, "data_disclosure", member(c, "data_disclosure"));
        put_strings(&mut data_breach, "state", member(c, "state"));
        put_strings(&mut data_breach, "data_victim", member(c, "data_victim"));
        put_text(
            &mut data_breach,
            "data_abuse",
            plus.and_then(|p| path(p, &["attribute", "confidentiality", "data_abuse"])),
        );
    }

    // Ransomware.
    let mut ransom = Map::new();
    ransom.insert("involved".to_string(), Value::Bool(ransomware));
    if ransomware {
        ransom.insert("variety".to_string(), Value::String("Ransomware".to_string()));
        put_text(&mut ransom, "name", malware.and_then(|m| member(m, "name")));
        put_strings(&mut ransom, "vector", malware.and_then(|m| member(m, "vector")));
    }

    // References.
    let mut references: Vec<String> = Vec::new();
    let raw_refs: Vec<String> = match member(&doc, "reference") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) => items.iter().filter_map(|x| x.as_str().map(str::to_string)).collect(),
        _ => Vec::new(),
    };
    for raw in &raw_refs {
        for part in raw.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            if !references.iter().any(|r| r == part) {
                references.push(part.to_string());
            }
        }
    }

    let investigation_status = plus
        .and_then(|p| text_of(member(p, "analysis_status")))
        .map(|s| s.to_lowercase())
        .unwrap_or_else(|| "unknown".to_string());

    let customer_advisories = credit_monitoring(plus);

    let incident = Incident {
        incident_id,
        title,
        description,
        date_detected: detected.map(|(d, _)| d),
        date_publicly_disclosed: disclosed.map(|(d, _)| d),
        kind,
        attack_vector,
        threat_actor,
        motivation,
        impact: Value::Object(impact),
        affected_entities: Value::Array(entities),
        response: Value::Object(response),
        data_breach: Value::Object(data_breach),
        ransomware: Value::Object(ransom),
        references: Value::Array(references.into_iter().map(Value::String).collect()),
        investigation_status,
        stakeholder_advisories: String::new(),
        customer_advisories,
    };
    Ok(VerisIncident { incident, victim_name, victim_industry, victim_employees, victim_country })
}

/// Reads every `*.json` file of `dir` (the extension in any case), in file-name
/// order. A file that cannot be read or mapped, or is larger than
/// `MAX_FILE_BYTES`, gives an error for that file and does not stop the others; a
/// file whose incident_id was already read gives `VerisError::Duplicate` and is
/// left out. Only an unreadable folder is fatal.
pub fn load_dir(dir: &Path) -> Result<(Vec<VerisIncident>, Vec<VerisError>), VerisError> {
    let shown = dir.display().to_string();
    let entries = std::fs::read_dir(dir).map_err(|e| VerisError::Io(shown.clone(), e))?;
    let mut errors = Vec::new();
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                errors.push(VerisError::Io(shown.clone(), e));
                continue;
            }
        };
        let path = entry.path();
        let is_json = path.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("json"));
        if is_json {
            files.push((entry.file_name().to_string_lossy().into_owned(), path));
        }
    }
    files.sort();

    let mut incidents = Vec::new();
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    for (name, path) in files {
        let parsed = read_bounded(&path, &name).and_then(|text| parse_incident(&text, &name));
        match parsed {
            Ok(found) => {
                let id = found.incident.incident_id.clone();
                if let Some(first) = seen.get(&id) {
                    errors.push(VerisError::Duplicate { file: name, incident_id: id, first: first.clone() });
                    continue;
                }
                seen.insert(id, name);
                incidents.push(found);
            }
            Err(e) => errors.push(e),
        }
    }
    Ok((incidents, errors))
}

/// Reads a regular file of at most `MAX_FILE_BYTES` bytes as UTF-8.
fn read_bounded(path: &Path, name: &str) -> Result<String, VerisError> {
    let meta = std::fs::metadata(path).map_err(|e| VerisError::Io(name.to_string(), e))?;
    if !meta.is_file() {
        return Err(VerisError::bad(name, "not a regular file"));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(VerisError::bad(name, format!("larger than {MAX_FILE_BYTES} bytes")));
    }
    let file = std::fs::File::open(path).map_err(|e| VerisError::Io(name.to_string(), e))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(|e| VerisError::Io(name.to_string(), e))?;
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > MAX_FILE_BYTES {
        return Err(VerisError::bad(name, format!("larger than {MAX_FILE_BYTES} bytes")));
    }
    String::from_utf8(bytes).map_err(|_| VerisError::bad(name, "not UTF-8 text"))
}

/// The member `key` of an object, matched exactly or else without regard to ASCII case.
fn member<'a>(obj: &'a Value, key: &str) -> Option<&'a Value> {
    let map = obj.as_object()?;
    if let Some(v) = map.get(key) {
        return Some(v);
    }
    map.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)).map(|(_, v)| v)
}

fn path<'a>(obj: &'a Value, keys: &[&str]) -> Option<&'a Value> {
    let mut cur = obj;
    for key in keys {
        cur = member(cur, key)?;
    }
    Some(cur)
}

/// A non-empty trimmed string.
fn text_of(v: Option<&Value>) -> Option<String> {
    let s = v?.as_str()?.trim();
    if s.is_empty() { None } else { Some(s.to_string()) }
}

/// The non-empty trimmed strings of an array (or of a lone string), duplicates dropped, in order.
fn strings(v: Option<&Value>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let items: Vec<&Value> = match v {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(s @ Value::String(_)) => vec![s],
        _ => Vec::new(),
    };
    for item in items {
        if let Some(s) = text_of(Some(item))
            && !out.contains(&s)
        {
            out.push(s);
        }
    }
    out
}

/// The objects of an array.
fn objects(v: Option<&Value>) -> Vec<&Value> {
    match v {
        Some(Value::Array(items)) => items.iter().filter(|x| x.is_object()).collect(),
        _ => Vec::new(),
    }
}

/// The victim objects: VERIS 1.3 writes one object, older records an array.
fn victim_objects(v: Option<&Value>) -> Vec<&Value> {
    match v {
        Some(o @ Value::Object(_)) => vec![o],
        other => objects(other),
    }
}

fn put_text(out: &mut Map<String, Value>, key: &str, v: Option<&Value>) {
    if let Some(s) = text_of(v) {
        out.insert(key.to_string(), Value::String(s));
    }
}

fn put_number(out: &mut Map<String, Value>, key: &str, v: Option<&Value>) {
    if let Some(n) = v.filter(|n| n.is_number()) {
        out.insert(key.to_string(), n.clone());
    }
}

fn put_strings(out: &mut Map<String, Value>, key: &str, v: Option<&Value>) {
    let items = strings(v);
    if !items.is_empty() {
        out.insert(key.to_string(), Value::Array(items.into_iter().map(Value::String).collect()));
    }
}

fn join(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(", ")
}

/// Values that say nothing: `Unknown`, `Other`, `NA`.
fn is_vague(s: &str) -> bool {
    ["unknown", "other", "na"].iter().any(|v| s.eq_ignore_ascii_case(v))
}

fn looks_like_uuid(s: &str) -> bool {
    s.len() == 36
        && s.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
        && s.chars().filter(|c| *c == '-').count() == 4
}

fn capitalise(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// At most `max` characters, with `…` when cut.
fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Ransomware: a malware variety or the malware name mentions it.
fn is_ransomware(malware: &Value) -> bool {
    strings(member(malware, "variety")).iter().any(|v| v.to_lowercase().contains("ransomware"))
        || text_of(member(malware, "name")).is_some_and(|n| n.to_lowercase().contains("ransom"))
}

/// An integer held as a number (integral) or as a string of digits.
fn integer(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::Number(n) => {
            n.as_i64().or_else(|| n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 1.0e9).map(|f| f as i64))
        }
        Value::String(s) => s.trim().parse::<i64>().ok(),
        _ => None,
    }
}

/// A VERIS date `{year, month, day}`. A missing or invalid month gives 1 January of
/// the year, a missing or invalid day the first of the month; a missing or
/// out-of-range year gives nothing.
fn veris_date(v: Option<&Value>) -> Option<(DateText, Precision)> {
    let v = v?;
    let year = integer(member(v, "year")).filter(|y| YEARS.contains(y))?;
    let year = i32::try_from(year).ok()?;
    let month = integer(member(v, "month")).and_then(|m| u8::try_from(m).ok()).and_then(|m| Month::try_from(m).ok());
    let Some(month) = month else {
        return Date::from_calendar_date(year, Month::January, 1).ok().map(|d| (DateText(d), Precision::Year));
    };
    if let Some(day) = integer(member(v, "day")).and_then(|d| u8::try_from(d).ok())
        && let Ok(date) = Date::from_calendar_date(year, month, day)
    {
        return Some((DateText(date), Precision::Day));
    }
    Date::from_calendar_date(year, month, 1).ok().map(|d| (DateText(d), Precision::Month))
}

/// A VERIS time span `{unit, value}`; nothing when it only says `Unknown` or `NA`.
fn time_span(v: Option<&Value>) -> Option<Value> {
    let v = v?;
    let unit = text_of(member(v, "unit"));
    let value = member(v, "value").filter(|n| n.is_number()).cloned();
    if value.is_none() && unit.as_deref().is_none_or(is_vague) {
        return None;
    }
    let mut out = Map::new();
    if let Some(unit) = unit {
        out.insert("unit".to_string(), Value::String(unit));
    }
    if let Some(value) = value {
        out.insert("value".to_string(), value);
    }
    Some(Value::Object(out))
}

/// `discovery_method` as text: `external - customer`, `internal - log review`,
/// `unknown`, `other`; several joined with `, `.
fn discovery_method(v: Option<&Value>) -> Option<String> {
    let v = v?;
    if v.is_string() {
        return text_of(Some(v));
    }
    let mut parts: Vec<String> = Vec::new();
    for key in ["external", "internal", "partner"] {
        let Some(c) = member(v, key).filter(|c| c.is_object()) else {
            continue;
        };
        let varieties = strings(member(c, "variety"));
        if varieties.is_empty() {
            parts.push(key.to_string());
        }
        for variety in varieties {
            parts.push(format!("{key} - {}", variety.to_lowercase()));
        }
    }
    for key in ["other", "unknown"] {
        match member(v, key) {
            Some(Value::Bool(true)) => parts.push(key.to_string()),
            Some(Value::Object(_)) => parts.push(key.to_string()),
            _ => {}
        }
    }
    if parts.is_empty() { None } else { Some(parts.join(", ")) }
}

/// `customer_advisories` from the VCDB `plus` credit-monitoring fields.
fn credit_monitoring(plus: Option<&Value>) -> String {
    let Some(plus) = plus else {
        return String::new();
    };
    let nested = path(plus, &["attribute", "confidentiality"]);
    let offered = nested
        .and_then(|c| text_of(member(c, "credit_monitoring")))
        .or_else(|| text_of(member(plus, "credit_monitoring")));
    let years = nested
        .and_then(|c| integer(member(c, "credit_monitoring_years")))
        .or_else(|| integer(member(plus, "credit_monitoring_years")));
    match offered.as_deref().map(str::to_lowercase).as_deref() {
        Some("yes" | "y") => match years {
            Some(1) => "Credit monitoring offered to affected individuals for 1 year.".to_string(),
            Some(n) if n > 1 => format!("Credit monitoring offered to affected individuals for {n} years."),
            _ => "Credit monitoring offered to affected individuals.".to_string(),
        },
        Some("no" | "n") => "No credit monitoring offered.".to_string(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(doc: Value) -> VerisIncident {
        match parse_incident(&doc.to_string(), "test.json") {
            Ok(found) => found,
            Err(e) => panic!("unexpected error: {e}"),
        }
    }

    fn date(d: &Option<DateText>) -> Option<String> {
        d.map(|d| model::timefmt::format_date(d.0))
    }

    fn base() -> Value {
        json!({
            "incident_id": "abc-123",
            "summary": "  Something happened.  ",
            "victim": {"victim_id": "Acme Hospital", "industry": "622110", "employee_count": "101 to 1000", "country": ["US"]},
            "action": {"hacking": {"variety": ["SQLi"], "vector": ["Web application"]}},
            "actor": {"external": {"variety": ["Organized crime"], "motive": ["Financial"]}},
            "timeline": {"incident": {"year": 2019, "month": 3, "day": 14}},
            "reference": "https://news.example/a"
        })
    }

    #[test]
    fn maps_a_plain_record() {
        let found = parse(base());
        let i = &found.incident;
        assert_eq!(i.incident_id, "ABC-123");
        assert_eq!(i.title, "Acme Hospital — Hacking (SQLi)");
        assert_eq!(i.description, "Something happened.");
        assert_eq!(date(&i.date_detected).as_deref(), Some("2019-03-14"));
        assert_eq!(i.date_publicly_disclosed, None);
        assert_eq!(i.kind, "hacking");
        assert_eq!(i.attack_vector, "Web application");
        assert_eq!(i.threat_actor, "external (Organized crime)");
        assert_eq!(i.motivation, "financial");
        assert_eq!(i.response["date_precision"], "day");
        assert_eq!(i.ransomware, json!({"involved": false}));
        assert_eq!(i.data_breach, json!({}));
        assert_eq!(i.investigation_status, "unknown");
        assert_eq!(found.victim_name.as_deref(), Some("Acme Hospital"));
        assert_eq!(found.victim_industry.as_deref(), Some("622110"));
        assert_eq!(found.victim_employees.as_deref(), Some("101 to 1000"));
        assert_eq!(found.victim_country.as_deref(), Some("US"));
        assert_eq!(i.affected_entities[0]["name"], "Acme Hospital");
        assert_eq!(i.affected_entities[0]["industry_naics"], "622110");
    }

    #[test]
    fn year_only_date_is_first_of_january() {
        let mut doc = base();
        doc["timeline"] = json!({"incident": {"year": 2017}});
        let i = parse(doc).incident;
        assert_eq!(date(&i.date_detected).as_deref(), Some("2017-01-01"));
        assert_eq!(i.response["date_precision"], "year");
    }

    #[test]
    fn year_and_month_date_is_first_of_month() {
        let mut doc = base();
        doc["timeline"] = json!({"incident": {"year": 2020, "month": 7}});
        doc["plus"] = json!({"timeline": {"notification": {"year": 2020, "month": 9}}});
        let i = parse(doc).incident;
        assert_eq!(date(&i.date_detected).as_deref(), Some("2020-07-01"));
        assert_eq!(i.response["date_precision"], "month");
        assert_eq!(date(&i.date_publicly_disclosed).as_deref(), Some("2020-09-01"));
        assert_eq!(i.response["disclosure_date_precision"], "month");
    }

    #[test]
    fn invalid_parts_of_dates_fall_back_or_drop() {
        let mut doc = base();
        doc["timeline"] = json!({"incident": {"year": 2021, "month": 2, "day": 30}});
        let i = parse(doc).incident;
        assert_eq!(date(&i.date_detected).as_deref(), Some("2021-02-01"));
        assert_eq!(i.response["date_precision"], "month");

        let mut doc = base();
        doc["timeline"] = json!({"incident": {"year": 2021, "month": 13}});
        let i = parse(doc).incident;
        assert_eq!(date(&i.date_detected).as_deref(), Some("2021-01-01"));
        assert_eq!(i.response["date_precision"], "year");

        for bad in [json!({"month": 3}), json!({"year": "soon"}), json!({"year": -5}), json!({"year": 1e300}), json!(7)]
        {
            let mut doc = base();
            doc["timeline"] = json!({"incident": bad});
            let i = parse(doc).incident;
            assert_eq!(i.date_detected, None);
            assert!(i.response.get("date_precision").is_none());
        }
    }

    #[test]
    fn detects_ransomware() {
        let mut doc = base();
        doc["action"] = json!({
            "malware": {"variety": ["Ransomware"], "vector": ["Direct install", "Unknown"]},
            "hacking": {"variety": ["Exploit vuln"], "vector": ["Unknown"]}
        });
        let i = parse(doc).incident;
        assert_eq!(i.kind, "hacking, ransomware");
        assert_eq!(i.title, "Acme Hospital — Ransomware");
        assert_eq!(i.attack_vector, "Direct install");
        assert_eq!(i.ransomware["involved"], true);
        assert_eq!(i.ransomware["variety"], "Ransomware");

        let mut doc = base();
        doc["action"] = json!({"malware": {"variety": ["Unknown"], "name": "WannaCry ransomware"}});
        assert_eq!(parse(doc).incident.ransomware["involved"], true);

        let mut doc = base();
        doc["action"] = json!({"malware": {"variety": ["Backdoor"]}});
        let i = parse(doc).incident;
        assert_eq!(i.kind, "malware");
        assert_eq!(i.ransomware, json!({"involved": false}));
    }

    #[test]
    fn action_categories_come_in_a_fixed_order() {
        let mut doc = base();
        doc["action"] = json!({
            "Unknown": {},
            "error": {"variety": ["Misdelivery"], "vector": ["Carelessness"]},
            "social": {"variety": ["Phishing"], "vector": ["Email"]},
            "physical": {"variety": ["Theft"], "vector": ["Unknown"]},
            "hacking": {"variety": ["Unknown"], "vector": ["Web application"]}
        });
        let i = parse(doc).incident;
        assert_eq!(i.kind, "hacking, social engineering, physical, error, unknown");
        assert_eq!(i.attack_vector, "Carelessness, Email, Web application");
        // The first category's variety is Unknown: the title gives the category alone.
        assert_eq!(i.title, "Acme Hospital — Hacking");

        let mut doc = base();
        doc["action"] = json!({"misuse": {"vector": ["Unknown"]}});
        let i = parse(doc).incident;
        assert_eq!(i.attack_vector, "Unknown");

        let mut doc = base();
        doc["action"] = json!("nothing");
        let i = parse(doc).incident;
        assert_eq!(i.kind, "unknown");
        assert_eq!(i.attack_vector, "");
        assert_eq!(i.title, "Acme Hospital — Unknown");
    }

    #[test]
    fn actors_and_motives() {
        let mut doc = base();
        doc["actor"] = json!({
            "internal": {"variety": ["End-user"], "motive": ["NA"]},
            "external": {"variety": ["Activist"], "motive": ["Ideology", "Unknown"], "name": ["Anonymous"]},
            "partner": {"motive": ["Unknown"]}
        });
        let i = parse(doc).incident;
        assert_eq!(i.threat_actor, "external (Activist) named Anonymous; internal (End-user); partner");
        assert_eq!(i.motivation, "ideology");

        let mut doc = base();
        doc["actor"] = json!({"internal": {"variety": ["Unknown"], "motive": ["Unknown"]}});
        let i = parse(doc).incident;
        assert_eq!(i.threat_actor, "internal");
        assert_eq!(i.motivation, "unknown");
    }

    #[test]
    fn splits_references() {
        let mut doc = base();
        doc["reference"] = json!(" http://a.example/x ; ;http://b.example/y;  http://a.example/x;Press release  ");
        let i = parse(doc).incident;
        assert_eq!(i.references, json!(["http://a.example/x", "http://b.example/y", "Press release"]));

        let mut doc = base();
        doc["reference"] = json!(42);
        assert_eq!(parse(doc).incident.references, json!([]));
    }

    #[test]
    fn breach_impact_response_and_advisories() {
        let mut doc = base();
        doc["attribute"] = json!({
            "confidentiality": {"data_total": 5000, "data": [{"variety": "Medical"}, {"variety": "Personal"}, {"variety": "Medical"}],
                                "data_disclosure": "Yes", "state": ["Stored"]},
            "availability": {"variety": ["Obscuration"]}
        });
        doc["impact"] = json!({"overall_rating": "Painful", "overall_amount": 100000, "iso_currency_code": "USD",
                               "loss": [{"variety": "Response and recovery", "rating": "Minor", "amount": 100000}, 3]});
        doc["discovery_method"] = json!({"external": {"variety": ["Customer"]}, "unknown": true});
        doc["timeline"] = json!({"incident": {"year": 2019}, "discovery": {"unit": "Months", "value": 5},
                                 "containment": {"unit": "Unknown"}});
        doc["plus"] = json!({"analysis_status": "Finalized",
                             "attribute": {"confidentiality": {"credit_monitoring": "Yes", "credit_monitoring_years": 2}}});
        let i = parse(doc).incident;
        assert_eq!(i.data_breach["records"], 5000);
        assert_eq!(i.data_breach["data_varieties"], json!(["Medical", "Personal"]));
        assert_eq!(i.data_breach["data_disclosure"], "Yes");
        assert_eq!(i.data_breach["state"], json!(["Stored"]));
        assert_eq!(i.impact["overall_rating"], "Painful");
        assert_eq!(i.impact["overall_amount"], 100000);
        assert_eq!(i.impact["currency"], "USD");
        assert_eq!(
            i.impact["loss"],
            json!([{"variety": "Response and recovery", "rating": "Minor", "amount": 100000}])
        );
        assert_eq!(i.impact["availability"], json!(["Obscuration"]));
        assert_eq!(i.response["discovery_method"], "external - customer, unknown");
        assert_eq!(i.response["discovery_time"], json!({"unit": "Months", "value": 5}));
        assert!(i.response.get("containment").is_none());
        assert_eq!(i.investigation_status, "finalized");
        assert_eq!(i.customer_advisories, "Credit monitoring offered to affected individuals for 2 years.");
        assert_eq!(i.stakeholder_advisories, "");

        // Nothing is invented.
        let mut doc = base();
        doc["impact"] = json!({"overall_rating": "Unknown"});
        doc["attribute"] = json!({"confidentiality": {}});
        let i = parse(doc).incident;
        assert_eq!(i.impact, json!({"overall_rating": "Unknown"}));
        assert_eq!(i.data_breach, json!({"records": null, "data_varieties": []}));
    }

    #[test]
    fn generated_description_and_missing_victim() {
        let mut doc = base();
        doc["summary"] = json!("   ");
        doc["victim"] = json!(null);
        let found = parse(doc);
        assert_eq!(found.incident.title, "Unknown victim — Hacking (SQLi)");
        assert_eq!(found.incident.description, "Hacking incident affecting Unknown victim.");
        assert_eq!(found.incident.affected_entities, json!([]));
        assert_eq!(found.victim_name, None);
    }

    #[test]
    fn missing_incident_id_is_an_error() {
        let mut doc = base();
        if let Some(o) = doc.as_object_mut() {
            o.remove("incident_id");
        }
        assert!(matches!(parse_incident(&doc.to_string(), "x.json"), Err(VerisError::Bad { .. })));
        for id in [json!(""), json!("   "), json!(17), json!(null), json!("a\u{0}b")] {
            let mut doc = base();
            doc["incident_id"] = id;
            assert!(parse_incident(&doc.to_string(), "x.json").is_err());
        }
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let deep = "[".repeat(100_000);
        for text in
            ["", "not json", "[1, 2]", "null", "\"incident\"", "{\"incident_id\": ", "{}", "\u{feff}", deep.as_str()]
        {
            match parse_incident(text, "g.json") {
                Err(VerisError::Bad { file, .. }) => assert_eq!(file, "g.json"),
                other => panic!("{text:.20}: expected an error, got {other:?}"),
            }
        }
        // Wrong types everywhere still map.
        let doc = json!({"incident_id": "x", "summary": 3, "victim": "acme", "action": [1], "actor": {"external": 5},
                         "timeline": [], "impact": "big", "attribute": {"confidentiality": "yes"}, "plus": 1,
                         "discovery_method": 2, "reference": {"a": 1}});
        let i = parse(doc).incident;
        assert_eq!(i.kind, "unknown");
        assert_eq!(i.title, "Unknown victim — Unknown");
    }

    #[test]
    fn load_dir_reads_json_files_in_order_and_collects_errors() {
        let dir = match tempfile::tempdir() {
            Ok(dir) => dir,
            Err(e) => panic!("tempdir: {e}"),
        };
        let write = |name: &str, text: &str| {
            if let Err(e) = std::fs::write(dir.path().join(name), text) {
                panic!("write {name}: {e}");
            }
        };
        let mut b = base();
        b["incident_id"] = json!("bbb");
        write("b.JSON", &b.to_string());
        let mut a = base();
        a["incident_id"] = json!("aaa");
        write("a.json", &a.to_string());
        write("c.json", "garbage");
        write("d.json", &a.to_string()); // repeats aaa
        write("notes.txt", "not a record");
        let big = match std::fs::File::create(dir.path().join("e.json")) {
            Ok(f) => f,
            Err(e) => panic!("create: {e}"),
        };
        if let Err(e) = big.set_len(MAX_FILE_BYTES + 1) {
            panic!("set_len: {e}");
        }

        let (found, errors) = match load_dir(dir.path()) {
            Ok(x) => x,
            Err(e) => panic!("load_dir: {e}"),
        };
        let ids: Vec<&str> = found.iter().map(|f| f.incident.incident_id.as_str()).collect();
        assert_eq!(ids, ["AAA", "BBB"]);
        let files: Vec<&str> = errors.iter().map(VerisError::file).collect();
        assert_eq!(files, ["c.json", "d.json", "e.json"]);
        assert!(
            matches!(&errors[1], VerisError::Duplicate { incident_id, first, .. } if incident_id == "AAA" && first == "a.json")
        );

        assert!(matches!(load_dir(&dir.path().join("absent")), Err(VerisError::Io(..))));
    }
}
