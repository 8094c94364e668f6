//! Query parameters, parsed at the edge into domain types with the spec's messages.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use model::{Domain, Page, RiskVector, SocialId};

use crate::error::ApiError;

/// The query string of a request. A parameter given more than once is refused (400
/// `Invalid request`): the document allows one value, and no value is picked silently.
/// No operation takes more than a few parameters, so they are kept in a list, and a
/// query of more than [`MAX_PARAMS`] is refused the same way. A value with a control
/// character is refused (`X is not valid`), and so is, for an operation, a parameter the
/// OpenAPI document does not list for it ([`Params::admit`], in `metrics::Gate`).
#[derive(Debug, Default, Clone)]
pub struct Params(Vec<(String, String)>);

/// Parameters a query may have at most.
pub const MAX_PARAMS: usize = 32;

/// The longest parameter name an error message repeats.
const NAME_SHOWN: usize = 64;

impl<S: Send + Sync> FromRequestParts<S> for Params {
    type Rejection = ApiError;

    /// The parameters the gate admitted (parsed once), else the query parsed here (the
    /// trusted router has no gate).
    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        if let Some(admitted) = parts.extensions.remove::<Params>() {
            return Ok(admitted);
        }
        let p = Params::parse(parts.uri.query().unwrap_or(""))?;
        p.check_values()?;
        Ok(p)
    }
}

impl Params {
    /// A query string (`a=1&b=2`, percent- and plus-decoded).
    pub fn parse(query: &str) -> Result<Params, ApiError> {
        let mut pairs: Vec<(String, String)> = Vec::new();
        for (k, v) in form_urlencoded::parse(query.as_bytes()) {
            if pairs.len() == MAX_PARAMS || pairs.iter().any(|(seen, _)| *seen == k) {
                return Err(ApiError::bad(crate::error::INVALID_REQUEST));
            }
            pairs.push((k.into_owned(), v.into_owned()));
        }
        Ok(Params(pairs))
    }

    /// The parameters of an operation that takes `allowed`: the first one it does not
    /// take is a 400 naming it (`Unknown parameter: foo`), then a value with a control
    /// character is refused ([`Params::check_values`]).
    pub fn admit(&self, mut allowed: impl FnMut(&str) -> bool) -> Result<(), ApiError> {
        if let Some((name, _)) = self.0.iter().find(|(k, _)| !allowed(k)) {
            let shown: String = name.chars().take(NAME_SHOWN).collect();
            let cut = if shown.len() < name.len() { "…" } else { "" };
            return Err(ApiError::unknown_parameter(&format!("{shown}{cut}")));
        }
        self.check_values()
    }

    /// A value with a control character (U+0000–U+001F, U+007F–U+009F, decoded: `%00`,
    /// `%0A`, …) is `X is not valid`: no parameter takes one, and some reached the store
    /// (`company_name=%00` listed every company).
    pub fn check_values(&self) -> Result<(), ApiError> {
        match self.0.iter().find(|(_, v)| v.chars().any(char::is_control)) {
            Some((name, _)) => Err(ApiError::not_valid(name)),
            None => Ok(()),
        }
    }

    fn get(&self, name: &str) -> Option<&String> {
        self.0.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    /// The parameters in one canonical string (sorted), for keys of cached answers.
    pub fn cache_key(&self) -> String {
        let mut pairs: Vec<(&String, &String)> = self.0.iter().map(|(k, v)| (k, v)).collect();
        pairs.sort();
        let mut key = String::new();
        for (k, v) in pairs {
            key.push_str(k);
            key.push('=');
            key.push_str(v);
            key.push('&');
        }
        key
    }
}

/// A request's body, of at most [`crate::BODY_LIMIT`] bytes: a larger one is answered
/// 413 in the API's error shape, as soon as the limit is passed (the rest is not read).
pub struct RawBody(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for RawBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, _: &S) -> Result<Self, ApiError> {
        body_of(request, crate::BODY_LIMIT, crate::error::TOO_LARGE).await.map(RawBody)
    }
}

/// The body of a bulk operation (`/portfolio-add-companies`), of at most
/// [`crate::BULK_BODY_LIMIT`] bytes.
pub struct BulkBody(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for BulkBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, _: &S) -> Result<Self, ApiError> {
        body_of(request, crate::BULK_BODY_LIMIT, crate::error::BULK_TOO_LARGE).await.map(BulkBody)
    }
}

async fn body_of(request: Request, limit: usize, too_large: &'static str) -> Result<Bytes, ApiError> {
    use http_body_util::BodyExt;
    match http_body_util::Limited::new(request.into_body(), limit).collect().await {
        Ok(body) => Ok(body.to_bytes()),
        Err(e) if e.downcast_ref::<http_body_util::LengthLimitError>().is_some() => Err(ApiError::TooLarge(too_large)),
        // The client stopped sending it.
        Err(_) => Err(ApiError::bad(crate::error::INVALID_REQUEST)),
    }
}

/// Longest list a body field takes (`dkim_selectors`): a longer one is read and not kept.
pub const MAX_LIST: usize = model::MAX_DKIM_SELECTORS;

/// A field of a JSON request body as sent, before it is checked: text (borrowed from
/// the body when it has no escapes), a count, a list (of at most [`MAX_LIST`] items),
/// or anything else (which no field accepts). A null field is an absent one (`Option`).
/// Each operation checks its fields with its own messages.
#[derive(Debug)]
pub enum Sent<'a> {
    Text(std::borrow::Cow<'a, str>),
    Count(u64),
    List(Vec<Sent<'a>>),
    Other,
}

impl<'de: 'a, 'a> serde::Deserialize<'de> for Sent<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for V<'a> {
            type Value = Sent<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Sent<'a>, E> {
                Ok(Sent::Text(std::borrow::Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Sent<'a>, E> {
                Ok(Sent::Text(std::borrow::Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Sent<'a>, E> {
                Ok(Sent::Text(std::borrow::Cow::Owned(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Sent<'a>, E> {
                Ok(Sent::Count(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Sent<'a>, E> {
                Ok(u64::try_from(v).map_or(Sent::Other, Sent::Count))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Sent<'a>, E> {
                Ok(Sent::Other)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Sent<'a>, E> {
                Ok(Sent::Other)
            }
            fn visit_unit<E>(self) -> Result<Sent<'a>, E> {
                Ok(Sent::Other)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Sent<'a>, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<Sent<'a>>()? {
                    if items.len() == MAX_LIST {
                        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                        return Ok(Sent::Other);
                    }
                    items.push(item);
                }
                Ok(Sent::List(items))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Sent<'a>, A::Error> {
                while map.next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?.is_some() {}
                Ok(Sent::Other)
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

impl Sent<'_> {
    /// The text of a text field; `None` for anything else.
    pub fn text(&self) -> Option<&str> {
        match self {
            Sent::Text(t) => Some(t),
            _ => None,
        }
    }
}

/// A body that must be one JSON object, read into `T` (a struct of `Option<Sent>`
/// fields, each given at most once; fields it does not name are ignored). Anything
/// else is `None`: an array (which serde would read as the fields in order), trailing
/// bytes, a field twice, or bytes that are not JSON.
pub fn object<'a, T: serde::Deserialize<'a>>(raw: &'a [u8]) -> Option<T> {
    if raw.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return None;
    }
    serde_json::from_slice(raw).ok()
}

// --- Parameters as the OpenAPI document declares them -----------------------------------
//
// Each parameter several operations take is declared once here, for `params(...)` of
// their `#[utoipa::path]`; the handlers read it with [`Params`]. Nothing is deserialised
// into these types.

/// `social_id`: the company an operation is about.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct CompanyQuery {
    /// The company's social_id
    #[param(pattern = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")]
    social_id: String,
}

/// [`CompanyQuery`] in a name of another role (`subsidiary_id`), or described as the
/// parent company's.
fn social_id_as(name: &str, description: &str) -> Vec<utoipa::openapi::path::Parameter> {
    use utoipa::IntoParams;
    let mut params = CompanyQuery::into_params(|| Some(utoipa::openapi::path::ParameterIn::Query));
    for p in &mut params {
        p.name = name.to_owned();
        p.description = Some(description.to_owned());
    }
    params
}

/// `social_id` of a parent company: the operation is about its subsidiaries.
pub struct ParentQuery;

impl utoipa::IntoParams for ParentQuery {
    fn into_params(
        _: impl Fn() -> Option<utoipa::openapi::path::ParameterIn>,
    ) -> Vec<utoipa::openapi::path::Parameter> {
        social_id_as("social_id", "The parent company's social_id")
    }
}

/// `subsidiary_id`: the social_id of one of the caller's subsidiaries.
pub struct SubsidiaryQuery;

impl utoipa::IntoParams for SubsidiaryQuery {
    fn into_params(
        _: impl Fn() -> Option<utoipa::openapi::path::ParameterIn>,
    ) -> Vec<utoipa::openapi::path::Parameter> {
        social_id_as("subsidiary_id", "The subsidiary's social_id")
    }
}

/// `page`: which page of a paged answer ([`Params::page`]).
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct PageQuery {
    /// Page number, from 1
    #[param(minimum = 1, maximum = 2147483647)]
    page: Option<u64>,
}

/// `period`: the months a prediction covers ([`Params::period`]).
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct PeriodQuery {
    /// Months, 1 to 60 (default 6)
    #[param(minimum = 1, maximum = 60)]
    period: Option<u32>,
}

/// Largest `limit` the CVE operations accept; larger values are capped.
pub const MAX_LIMIT: u32 = 5000;

impl Params {
    pub fn optional(&self, name: &str) -> Option<&str> {
        self.get(name).map(|v| v.trim()).filter(|v| !v.is_empty())
    }

    pub fn required(&self, name: &str) -> Result<&str, ApiError> {
        self.optional(name).ok_or_else(|| ApiError::required(name))
    }

    pub fn social_id(&self) -> Result<SocialId, ApiError> {
        SocialId::parse(self.required("social_id")?).map_err(|_| ApiError::not_valid("social_id"))
    }

    pub fn domain(&self, name: &str) -> Result<Domain, ApiError> {
        Domain::parse(self.required(name)?).map_err(|_| ApiError::not_valid(name))
    }

    pub fn page(&self) -> Result<Page, ApiError> {
        Page::parse(self.get("page").map(String::as_str)).map_err(|e| ApiError::bad(e.to_string()))
    }

    /// `limit`: a positive integer, `default` when absent, capped at [`MAX_LIMIT`].
    pub fn limit(&self, default: u32) -> Result<u32, ApiError> {
        match self.get("limit") {
            None => Ok(default),
            // What the OpenAPI document says: 1 to 2^31−1 (an int32; an empty value is
            // not one); above MAX_LIMIT the answer is MAX_LIMIT records.
            Some(raw) => match raw.parse::<u32>() {
                Ok(n) if (1..=i32::MAX.unsigned_abs()).contains(&n) => Ok(n.min(MAX_LIMIT)),
                _ => Err(ApiError::bad("limit must be a positive integer")),
            },
        }
    }

    /// `period`: months, 1 to 60, 6 when absent.
    pub fn period(&self) -> Result<u32, ApiError> {
        match self.get("period").map(String::as_str) {
            None => Ok(6),
            Some(raw) => raw
                .parse::<u32>()
                .ok()
                .filter(|p| (1..=60).contains(p))
                .ok_or_else(|| ApiError::bad("period must be an integer from 1 to 60 (months)")),
        }
    }

    pub fn risk_vector(&self, name: &str) -> Result<RiskVector, ApiError> {
        RiskVector::parse(self.required(name)?)
            .map_err(|e| ApiError::bad(format!("{name} must be one of: {}", e.allowed)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_is_decoded_and_each_parameter_given_once() {
        let p = Params::parse("social_id=acme-corp&company_name=Acme+%26+Sons&page=2").unwrap();
        assert_eq!(p.required("company_name").unwrap(), "Acme & Sons");
        assert_eq!(p.social_id().unwrap().as_str(), "acme-corp");
        assert_eq!(p.page().unwrap().number(), 2);
        assert_eq!(p.cache_key(), "company_name=Acme & Sons&page=2&social_id=acme-corp&");
        assert!(p.optional("absent").is_none());
        // Empty segments are no parameters; an empty query has none.
        assert_eq!(Params::parse("&&a=1&").unwrap().required("a").unwrap(), "1");
        assert!(Params::parse("").unwrap().0.is_empty());
        // Twice, or more parameters than any operation takes: refused.
        assert!(Params::parse("page=1&page=2").is_err());
        let many: String = (0..=MAX_PARAMS).map(|i| format!("p{i}=1&")).collect();
        assert!(Params::parse(&many).is_err());
        assert!(Params::parse(&many[..many.len() - "p32=1&".len()]).is_ok());
    }

    #[test]
    fn an_operation_takes_only_its_parameters_and_no_control_characters() {
        let message = |r: Result<(), ApiError>| match r {
            Err(ApiError::BadRequest(m)) => m,
            other => panic!("{other:?}"),
        };
        let takes = |n: &str| ["company_name", "page"].contains(&n);
        assert!(Params::parse("company_name=acme&page=2").unwrap().admit(takes).is_ok());
        assert!(Params::parse("").unwrap().admit(|_| false).is_ok());
        let p = Params::parse("company_name=acme&colour=red&size=9").unwrap();
        assert_eq!(message(p.admit(takes)), "Unknown parameter: colour");
        let long = format!("{}=1", "é".repeat(100));
        assert_eq!(
            message(Params::parse(&long).unwrap().admit(takes)),
            format!("Unknown parameter: {}…", "é".repeat(64))
        );
        // An unknown name before a bad value: the name is what is wrong.
        let p = Params::parse("colour=%00&company_name=%00").unwrap();
        assert_eq!(message(p.admit(takes)), "Unknown parameter: colour");
        for bad in ["%00", "a%0Ab", "%09x", "x%7F", "%C2%9F", "%1B[2J"] {
            let p = Params::parse(&format!("page=1&company_name={bad}")).unwrap();
            assert_eq!(message(p.admit(takes)), "company_name is not valid", "{bad}");
            assert_eq!(message(p.check_values()), "company_name is not valid", "{bad}");
        }
        // Spaces, non-ASCII letters and an empty value are text.
        assert!(Params::parse("company_name=+A%C3%A9+b+&page=").unwrap().check_values().is_ok());
    }

    proptest::proptest! {
        #[test]
        fn any_query_parses_or_is_refused(q in ".{0,400}") {
            if let Ok(p) = Params::parse(&q) {
                proptest::prop_assert!(p.0.len() <= MAX_PARAMS);
            }
        }
    }

    #[derive(serde::Deserialize)]
    struct Body<'a> {
        #[serde(default, borrow)]
        f: Option<Sent<'a>>,
        #[serde(default, borrow)]
        g: Option<Sent<'a>>,
    }

    #[test]
    fn a_body_is_one_object_of_fields_as_sent() {
        let b: Body = object(br#" {"f":"plain","g":"es\"caped","h":[1,2]}"#).unwrap();
        assert!(matches!(b.f, Some(Sent::Text(std::borrow::Cow::Borrowed("plain")))), "{:?}", b.f);
        assert_eq!(b.g.as_ref().and_then(Sent::text), Some("es\"caped"));
        let b: Body = object(br#"{"f":null,"g":[7,-1,1.5,true,null,{"a":[]},"x"]}"#).unwrap();
        assert!(b.f.is_none(), "a null is an absent field");
        match b.g {
            Some(Sent::List(items)) => {
                let kinds: Vec<String> = items.iter().map(|i| format!("{i:?}")).collect();
                assert_eq!(kinds, ["Count(7)", "Other", "Other", "Other", "Other", "Other", "Text(\"x\")"]);
            }
            other => panic!("{other:?}"),
        }
        for refused in [&b"[\"a\",\"b\"]"[..], b"", b"  ", b"{\"f\":1,\"f\":2}", b"{} {}", b"{\"f\":", b"\xff{}", b"7"]
        {
            assert!(object::<Body>(refused).is_none(), "{:?}", String::from_utf8_lossy(refused));
        }
    }

    proptest::proptest! {
        /// Any bytes: read or refused, never a panic.
        #[test]
        fn any_body_is_read_or_refused(raw in proptest::collection::vec(proptest::num::u8::ANY, 0..600)) {
            let _ = object::<Body>(&raw);
        }

        /// Bytes that look like JSON objects (most random bytes are refused at the first).
        #[test]
        fn any_json_like_body_is_read_or_refused(raw in r#"\{["fg:,\[\]{}\\ .e+\-0-9a-z]{0,300}"#) {
            let _ = object::<Body>(raw.as_bytes());
        }

        #[test]
        fn lists_are_kept_up_to_their_bound(n in 0usize..64, text in proptest::bool::ANY) {
            let item = if text { "\"s\"" } else { "3" };
            let raw = format!("{{\"f\":[{}]}}", vec![item; n].join(","));
            let b: Body = object(raw.as_bytes()).unwrap();
            match b.f {
                Some(Sent::List(items)) => proptest::prop_assert!(n <= MAX_LIST && items.len() == n),
                Some(Sent::Other) => proptest::prop_assert!(n > MAX_LIST),
                other => proptest::prop_assert!(false, "{:?}", other),
            }
        }
    }
}
