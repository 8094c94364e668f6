//! The OpenAPI document: generated from the code, all 43 operations (and the documented
//! extensions), KeyAuth, and
//! identical to the committed docs/openapi.json (regenerate with `rampart openapi`).

use serde_json::Value;

#[test]
fn document_lists_every_operation_with_key_auth() {
    let doc: Value = serde_json::to_value(api::openapi::document()).unwrap();
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(doc["info"]["version"], "0.0.1-beta");
    assert_eq!(
        doc["components"]["securitySchemes"]["KeyAuth"],
        serde_json::json!({"type": "apiKey", "in": "header", "name": "apikey"})
    );
    assert_eq!(doc["security"], serde_json::json!([{"KeyAuth": []}]));
    let mut ops = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            ops.push(format!("{} {path}", method.to_uppercase()));
            assert!(op["tags"][0].is_string(), "{path} has a tag");
            assert_eq!(op["operationId"].as_str(), path.strip_prefix('/'), "operationId is the path");
            assert!(op["responses"]["200"].is_object(), "{path} documents 200");
            assert!(
                op["responses"]["400"].is_object()
                    && op["responses"]["401"].is_object()
                    && op["responses"]["429"].is_object()
            );
        }
    }
    ops.sort();
    let mut expected: Vec<String> = crate::helpers::operations()
        .into_iter()
        .chain(crate::helpers::extensions())
        .map(|(m, p, _, _)| format!("{m} {}", p.split('?').next().unwrap()))
        .collect();
    expected.sort();
    assert_eq!(ops, expected);
}

fn refs<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                match (k.as_str(), x) {
                    ("$ref", Value::String(r)) => out.push(r),
                    _ => refs(x, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|x| refs(x, out)),
        _ => {}
    }
}

#[test]
fn every_reference_resolves() {
    let doc: Value = serde_json::to_value(api::openapi::document()).unwrap();
    let mut all = Vec::new();
    refs(&doc, &mut all);
    assert!(all.len() > 100);
    for r in all {
        let name = r.strip_prefix("#/components/schemas/").unwrap_or_else(|| panic!("unexpected $ref {r}"));
        assert!(doc["components"]["schemas"][name].is_object(), "{r} does not resolve");
    }
}

#[test]
fn committed_document_matches_the_code() {
    let generated = api::openapi::document().to_pretty_json().unwrap();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/openapi.json");
    if std::env::var_os("RAMPART_BLESS").is_some() {
        std::fs::write(&path, format!("{generated}\n")).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        committed.trim_end(),
        generated.trim_end(),
        "docs/openapi.json is stale: run RAMPART_BLESS=1 cargo nextest run -p api openapi"
    );
}
