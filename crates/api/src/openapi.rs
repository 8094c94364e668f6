//! The OpenAPI 3.1 document, generated from the handlers' annotations: the routes and
//! the document come from the same list, so they cannot drift apart.

use utoipa::openapi::security::SecurityRequirement;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityScheme};
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::{ErrorBody, RouteNotFound};
use crate::routes::{disputes, general, monitor, underwriter, vulnerability};

struct KeyAuth;

impl Modify for KeyAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme("KeyAuth", SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::new("apikey"))));
        openapi.security = Some(vec![SecurityRequirement::new("KeyAuth", Vec::<String>::new())]);
    }
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Rampart — Company Cyber-Risk Rating API",
        version = "0.0.1-beta",
        description = "Open, explainable cyber-risk ratings: company identity, vulnerability data, scores with evidence, assets, SBOM, incidents and predictions.",
        license(name = "Apache-2.0", identifier = "Apache-2.0")
    ),
    modifiers(&KeyAuth),
    components(schemas(ErrorBody, RouteNotFound)),
    tags(
        (name = "General", description = "Convert between a company's social_id, its company name and its web domain."),
        (name = "Vulnerability", description = "Look up public vulnerability (CVE) data, vendors and products."),
        (name = "Underwriter", description = "Profile, scores, assets, SBOM, subsidiaries' statistics and incident history of any company."),
        (name = "Monitor", description = "The same for the company bound to the calling key, plus subsidiaries, findings, rescans and predictions.")
    )
)]
struct ApiDoc;

/// What every text query parameter matches, unless it has a pattern of its own (which
/// has no control character either): no control character (`params::Params` refuses one).
pub const TEXT_PATTERN: &str = "^[^\\u0000-\\u001f\\u007f-\\u009f]*$";

/// Says of every text query parameter without a pattern that it takes no control
/// character ([`TEXT_PATTERN`]), as `params::Params` enforces.
fn text_without_control_characters(doc: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::path::ParameterIn;
    use utoipa::openapi::schema::{SchemaType, Type};
    use utoipa::openapi::{RefOr, Schema};
    for item in doc.paths.paths.values_mut() {
        let ops = [&mut item.get, &mut item.post, &mut item.put, &mut item.delete];
        for op in ops.into_iter().flatten() {
            for param in op.parameters.iter_mut().flatten() {
                if !matches!(param.parameter_in, ParameterIn::Query) {
                    continue;
                }
                if let Some(RefOr::T(Schema::Object(o))) = &mut param.schema
                    && matches!(o.schema_type, SchemaType::Type(Type::String))
                    && o.pattern.is_none()
                {
                    o.pattern = Some(TEXT_PATTERN.to_owned());
                }
            }
        }
    }
}

/// Every operation, routed and documented.
pub fn operations() -> OpenApiRouter<AppState> {
    let mut router = all_operations();
    text_without_control_characters(router.get_openapi_mut());
    router
}

fn all_operations() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(general::get_domain_by_social_id))
        .routes(routes!(general::get_social_id_by_company_name))
        .routes(routes!(general::get_social_id_by_domain))
        .routes(routes!(vulnerability::describe_cve_id))
        .routes(routes!(vulnerability::get_cve_from_cpe_id))
        .routes(routes!(vulnerability::get_last))
        .routes(routes!(vulnerability::get_product_by_vendor))
        .routes(routes!(vulnerability::get_vendors))
        .routes(routes!(vulnerability::search_by_vendor))
        .routes(routes!(underwriter::get_company_info))
        .routes(routes!(underwriter::get_company_applications_assets))
        .routes(routes!(underwriter::get_company_infrastructure_assets))
        .routes(routes!(underwriter::get_company_sbom))
        .routes(routes!(underwriter::get_company_sbom_cve))
        .routes(routes!(underwriter::get_company_sbom_domain))
        .routes(routes!(underwriter::get_company_scores))
        .routes(routes!(underwriter::get_company_stats))
        .routes(routes!(underwriter::get_company_subscores))
        .routes(routes!(underwriter::get_company_score_history))
        .routes(routes!(underwriter::get_events))
        .routes(routes!(underwriter::get_incident_detail_by_id))
        .routes(routes!(underwriter::get_last_companies_scanned))
        .routes(routes!(underwriter::get_company_history))
        .routes(routes!(underwriter::get_company_history_domain))
        .routes(routes!(monitor::get_company_info))
        .routes(routes!(monitor::get_company_applications_assets))
        .routes(routes!(monitor::get_company_infrastructure_assets))
        .routes(routes!(monitor::get_company_sbom))
        .routes(routes!(monitor::get_company_sbom_cve))
        .routes(routes!(monitor::get_company_sbom_domain))
        .routes(routes!(monitor::get_company_scores))
        .routes(routes!(monitor::get_company_stats))
        .routes(routes!(monitor::get_company_subscores))
        .routes(routes!(monitor::get_company_subsidiaries))
        .routes(routes!(monitor::list_subsidiaries))
        .routes(routes!(monitor::get_company_history))
        .routes(routes!(monitor::get_all_vulnerability_detection))
        .routes(routes!(monitor::get_company_score_history))
        .routes(routes!(monitor::get_events))
        .routes(routes!(monitor::get_all_subdomain_findings))
        .routes(routes!(monitor::get_subdomain_findings))
        .routes(routes!(monitor::get_tail_risk_estimation))
        .routes(routes!(monitor::get_data_loss_prediction))
        .routes(routes!(monitor::get_incident_prediction))
        .routes(routes!(monitor::rescan_subdomain_by_vector_id))
        .routes(routes!(monitor::add_subsidiary))
        .routes(routes!(monitor::delete_subsidiary))
        .routes(routes!(disputes::dispute_finding))
        .routes(routes!(disputes::get_disputes))
        .routes(routes!(disputes::add_asset))
        .routes(routes!(disputes::remove_asset))
        .routes(routes!(disputes::verify_domain))
}

/// The OpenAPI document as JSON.
pub fn document() -> utoipa::openapi::OpenApi {
    operations().into_openapi()
}
