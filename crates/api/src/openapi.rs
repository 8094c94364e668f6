//! The OpenAPI 3.1 document, generated from the handlers' annotations: the routes and
//! the document come from the same list, so they cannot drift apart.

use axum::handler::Handler;
use axum::routing::MethodRouter;
use utoipa::openapi::path::{Operation, Paths};
use utoipa::openapi::security::SecurityRequirement;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityScheme};
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouter};
use utoipa_axum::{PathItemExt, routes};

use crate::AppState;
use crate::error::{ErrorBody, RouteNotFound};
use crate::routes::{
    Named, Own, alerts, changes, company, disputes, general, guidelines, monitor, portfolio, predictions, underwriter,
    vulnerability,
};

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
        (name = "Monitor", description = "The same for the company bound to the calling key, plus subsidiaries, findings, rescans and predictions."),
        (name = "Portfolio", description = "Extension: the caller's organisation's portfolios — companies onboarded by domain, vendor records with tiers and tags, lists sorted, filtered and exported, summaries and findings across a portfolio.")
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
    let router = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(general::get_domain_by_social_id))
        .routes(routes!(general::get_social_id_by_company_name))
        .routes(routes!(general::get_social_id_by_domain))
        .routes(routes!(vulnerability::describe_cve_id))
        .routes(routes!(vulnerability::get_cve_from_cpe_id))
        .routes(routes!(vulnerability::get_last))
        .routes(routes!(vulnerability::get_product_by_vendor))
        .routes(routes!(vulnerability::get_vendors))
        .routes(routes!(vulnerability::search_by_vendor))
        .routes(routes!(underwriter::get_incident_detail_by_id))
        .routes(routes!(underwriter::get_last_companies_scanned))
        .routes(routes!(underwriter::get_company_history_domain))
        .routes(routes!(monitor::get_company_subsidiaries))
        .routes(routes!(monitor::list_subsidiaries))
        .routes(routes!(monitor::get_all_vulnerability_detection))
        .routes(routes!(monitor::get_all_subdomain_findings))
        .routes(routes!(monitor::get_subdomain_findings))
        .routes(routes!(monitor::rescan_subdomain_by_vector_id))
        .routes(routes!(monitor::add_subsidiary))
        .routes(routes!(monitor::delete_subsidiary))
        .routes(routes!(disputes::dispute_finding))
        .routes(routes!(disputes::get_disputes))
        .routes(routes!(disputes::add_asset))
        .routes(routes!(disputes::remove_asset))
        .routes(routes!(disputes::verify_domain))
        .routes(routes!(portfolio::create))
        .routes(routes!(portfolio::list))
        .routes(routes!(portfolio::rename))
        .routes(routes!(portfolio::delete))
        .routes(routes!(portfolio::add_companies))
        .routes(routes!(portfolio::update_company))
        .routes(routes!(portfolio::remove_company))
        .routes(routes!(portfolio::get_companies))
        .routes(routes!(portfolio::get_summary))
        .routes(routes!(portfolio::get_findings))
        .routes(routes!(guidelines::set))
        .routes(routes!(guidelines::get))
        .routes(routes!(guidelines::evaluate))
        .routes(routes!(changes::get_changes))
        .routes(routes!(alerts::set_rules))
        .routes(routes!(alerts::get_rules))
        .routes(routes!(alerts::get_alerts))
        .routes(routes!(alerts::ack));
    company_resources()
        .into_iter()
        .fold(router, |router, (underwriter, monitor)| router.routes(underwriter).routes(monitor))
}

/// The two operations of the company resource `company::$handler` ([`company_operations`]):
/// the Underwriter's its annotation documents, and the Monitor's at `$monitor`, summed up
/// as `$summary`.
macro_rules! resource {
    ($handler:ident, $monitor:literal, $summary:literal) => {
        resource!(company::$handler, $monitor, $summary)
    };
    ($module:ident :: $handler:ident, $monitor:literal, $summary:literal) => {
        utoipa_axum::paste! {
            company_operations::<$module::[<__path_ $handler>], _, _>(
                $module::$handler::<Named>,
                $module::$handler::<Own>,
                $monitor,
                $summary,
            )
        }
    };
}

/// The company resources, one handler each: the Underwriter operation on the company
/// `social_id` names, and the Monitor operation at the path given, on the calling key's
/// company, with its summary.
fn company_resources() -> [(UtoipaMethodRouter<AppState>, UtoipaMethodRouter<AppState>); 17] {
    [
        resource!(get_company_info, "/monitor-getcompanyinfo", "The caller's company information record."),
        resource!(
            get_company_applications_assets,
            "/monitor-getcompanyapplicationsassets",
            "Applications and technologies detected on the caller's assets."
        ),
        resource!(
            get_company_infrastructure_assets,
            "/monitor-getcompanyinfrastructureassets",
            "The caller's network endpoints."
        ),
        resource!(get_company_sbom, "/monitor-getcompanysbom", "The caller's external software bill of materials."),
        resource!(
            get_company_sbom_cve,
            "/monitor-getcompanysbomcve",
            "The caller's SBOM components that have known CVEs."
        ),
        resource!(
            get_company_sbom_domain,
            "/monitor-getcompanysbomdomain",
            "The caller's SBOM by subdomain of one domain."
        ),
        resource!(
            get_company_scores,
            "/monitor-getcompanyscores",
            "The caller's global score and its twelve components."
        ),
        resource!(get_company_stats, "/monitor-getcompanystats", "Statistics of each of the caller's subsidiaries."),
        resource!(
            get_company_subscores,
            "/monitor-getcompanysubscores",
            "Scores of each of the caller's subsidiaries."
        ),
        resource!(
            get_company_score_history,
            "/monitor-getcompanyscore-history",
            "The caller's ratings, newest first, each with its methodology version and component\nscores (an extension of the spec, as /underwriter-getcompanyscore-history is)."
        ),
        resource!(
            get_events,
            "/monitor-getevents",
            "The events of the caller's company and its subsidiaries, newest first (an extension\nof the spec)."
        ),
        resource!(
            get_company_history,
            "/monitor-getcompany-history",
            "Public incident history of the caller's company."
        ),
        resource!(
            get_company_findings,
            "/monitor-getcompanyfindings",
            "Every finding of the caller's company, filtered and paged (an extension of the spec,\nas /underwriter-getcompanyfindings is)."
        ),
        resource!(
            get_improvement_plan,
            "/monitor-getimprovementplan",
            "The smallest set of the caller's open findings whose fix reaches a target grade (an\nextension of the spec, as /underwriter-getimprovementplan is)."
        ),
        resource!(
            predictions::get_tail_risk_estimation,
            "/monitor-get-tail-risk-estimation",
            "Tail-risk (large-loss) estimation of the caller's company over `period` months."
        ),
        resource!(
            predictions::get_data_loss_prediction,
            "/monitor-get-data-loss-prediction",
            "Data-loss prediction of the caller's company over `period` months."
        ),
        resource!(
            predictions::get_incident_prediction,
            "/monitor-get-incident-prediction",
            "Incident prediction of the caller's company over `period` months."
        ),
    ]
}

/// A company resource's two operations, served by its one handler (`underwriter` and
/// `monitor` are it for [`Named`] and for [`Own`]): the Underwriter's, as `P` (the
/// handler's annotation) documents it, and the Monitor's at `monitor_path`, documented as
/// the same less `social_id` (its company is the key's), under the Monitor tag, with its
/// own operation id (its path) and `summary`.
fn company_operations<P, T1: 'static, T2: 'static>(
    underwriter: impl Handler<T1, AppState>,
    monitor: impl Handler<T2, AppState>,
    monitor_path: &str,
    summary: &str,
) -> (UtoipaMethodRouter<AppState>, UtoipaMethodRouter<AppState>)
where
    // What `utoipa_axum::routes!` reads of a handler's annotation. These two traits are
    // utoipa's hidden (`__dev`) API, the one its own macro uses: the lockfile pins the
    // version, and the contract test `openapi::committed_document_matches_the_code`
    // fails if an upgrade changes what they give.
    P: utoipa::Path + utoipa::__dev::SchemaReferences + for<'t> utoipa::__dev::Tags<'t>,
{
    let methods = P::methods();
    let mut schemas = Vec::new();
    P::schemas(&mut schemas);
    let operation = |tags: Vec<String>, edit: &dyn Fn(&mut Operation)| {
        let mut operation = P::operation();
        if !tags.is_empty() {
            operation.tags.get_or_insert_with(Vec::new).extend(tags);
        }
        edit(&mut operation);
        operation
    };
    let documented = |path: &str, operation: Operation| {
        let mut paths = Paths::new();
        paths.add_path_operation(path, methods.clone(), operation);
        paths
    };
    fn routed<T: 'static>(
        methods: &[utoipa::openapi::HttpMethod],
        handler: impl Handler<T, AppState>,
    ) -> MethodRouter<AppState> {
        methods.iter().fold(MethodRouter::new(), |router, method| router.on(method.to_method_filter(), handler.clone()))
    }
    let underwriter_doc = operation(P::tags().into_iter().map(str::to_owned).collect(), &|_| {});
    let monitor_doc = operation(vec!["Monitor".to_owned()], &|op| {
        op.operation_id = Some(monitor_path.trim_start_matches('/').to_owned());
        op.summary = Some(summary.to_owned());
        if let Some(params) = &mut op.parameters {
            params.retain(|p| p.name != "social_id");
        }
        if op.parameters.as_ref().is_some_and(Vec::is_empty) {
            op.parameters = None;
        }
    });
    (
        (schemas.clone(), documented(&P::path(), underwriter_doc), routed(&methods, underwriter)),
        (schemas, documented(monitor_path, monitor_doc), routed(&methods, monitor)),
    )
}

/// The OpenAPI document as JSON.
pub fn document() -> utoipa::openapi::OpenApi {
    operations().into_openapi()
}
