//! Improvement plans (docs/API.md, "Improvement plans"): the Underwriter's and the
//! Monitor's answer the same plan; it ends at the target; a grade already reached and a
//! wrong target are said so.

use std::collections::BTreeMap;

use axum::http::StatusCode;

use super::helpers::TestApp;

/// The rating of `sid` made from its findings, as a scan makes it (the sample's is
/// imported): every component assessed on the assets the imported one names, at least
/// one. Returns the findings it judged, the input of the rating.
async fn rated_from_findings(
    app: &TestApp,
    sid: &str,
) -> (Vec<model::Finding>, BTreeMap<model::RiskVector, u32>, std::collections::BTreeSet<String>) {
    let c = app.store.company_by_social_id(&model::SocialId::parse(sid).unwrap()).await.unwrap().unwrap();
    let latest = app.store.latest_score(c.id).await.unwrap().unwrap();
    let (findings, kev) = store::judged::rated_findings(&*app.store, c.id).await.unwrap();
    let assets: BTreeMap<model::RiskVector, u32> = model::RiskVector::ALL
        .iter()
        .map(|v| (*v, latest.components.get(v).map_or(1, |x| x.assets_checked.max(1))))
        .collect();
    let website = model::website_host(&c.website);
    let r = rating::rate(&rating::Input {
        findings: &findings,
        assets_checked: &assets,
        kev: &kev,
        website_host: website.as_deref(),
    });
    let at = model::OffsetDateTimeText(time::OffsetDateTime::now_utc().replace_nanosecond(0).unwrap());
    app.store.replace_rating(c.id, &rating::snapshot(&r, at).unwrap()).await.unwrap();
    (findings, assets, kev)
}

#[tokio::test]
async fn a_plan_reaches_the_target_grade_with_the_findings_to_fix() {
    let app = TestApp::spawn().await;
    let u = &app.underwriter;
    let (findings, assets, kev) = rated_from_findings(&app, "acme-robotics").await;
    let scores = app.ok("/underwriter-getcompanyscores?social_id=acme-robotics", u).await;
    let now = scores["global_score"].as_f64().unwrap();
    let plan = app.ok("/underwriter-getimprovementplan?social_id=acme-robotics&target_grade=A", u).await;
    assert_eq!((plan["score"].as_f64(), plan["target_score"].as_f64()), (Some(now), Some(90.0)), "{plan}");
    assert_eq!(plan["outcome"], "plan", "{plan}");
    let steps = plan["steps"].as_array().unwrap();
    assert!(!steps.is_empty());
    let after: Vec<f64> = steps.iter().map(|s| s["score_after"].as_f64().unwrap()).collect();
    assert!(after.windows(2).all(|w| w[0] <= w[1]), "the scores never fall: {after:?}");
    assert!(*after.last().unwrap() >= 90.0 && plan["grade_after"] == "A", "{plan}");
    assert_eq!(plan["score_after"].as_f64(), after.last().copied());
    // Each step is an open finding of the company, with its remediation.
    let open = app.ok("/underwriter-getcompanyfindings?social_id=acme-robotics&format=json", u).await;
    let total = open["pagination"]["total_items"].as_u64().unwrap();
    assert!(steps.len() as u64 <= total);
    for s in steps {
        assert!(s["finding"]["id"].as_i64().unwrap() > 0 && !s["finding"]["remediation"].as_str().unwrap().is_empty());
    }
    // Fixed, the planned findings leave a rating of at least the target (the method
    // itself says so).
    let planned: Vec<i64> = steps.iter().map(|s| s["finding"]["id"].as_i64().unwrap()).collect();
    let left: Vec<model::Finding> = findings.iter().filter(|f| !planned.contains(&f.id)).cloned().collect();
    let c = app.store.company_by_social_id(&model::SocialId::parse("acme-robotics").unwrap()).await.unwrap().unwrap();
    let website = model::website_host(&c.website);
    let again = rating::rate(&rating::Input {
        findings: &left,
        assets_checked: &assets,
        kev: &kev,
        website_host: website.as_deref(),
    });
    assert!(again.score.unwrap() >= 90.0 && again.score == plan["score_after"].as_f64(), "{:?} {plan}", again.score);

    // A critical finding caps the score below 80: a plan to B or better fixes each.
    let criticals = app.ok("/underwriter-getcompanyfindings?social_id=acme-robotics&severity=critical", u).await;
    let critical_ids: Vec<i64> =
        criticals["findings"].as_array().unwrap().iter().map(|f| f["id"].as_i64().unwrap()).collect();
    assert!(
        !critical_ids.is_empty() && critical_ids.iter().all(|id| planned.contains(id)),
        "{critical_ids:?} {planned:?}"
    );
    assert!(steps.iter().any(|s| s["lifts_cap"] == "a critical finding"), "{plan}");

    // The Monitor's plan of its own company is the same plan.
    let own = app.ok("/monitor-getimprovementplan?target_grade=A", &app.monitor).await;
    assert_eq!(own["steps"], plan["steps"]);

    // A grade the company has: nothing to fix.
    let f = app.ok("/underwriter-getimprovementplan?social_id=acme-robotics&target_grade=F", u).await;
    assert_eq!((f["outcome"].as_str(), f["steps"].as_array().map(Vec::len)), (Some("reached"), Some(0)));

    for (q, error) in [("&target_grade=Z", "target_grade"), ("", "target_grade")] {
        let (s, v) = app.get(&format!("/underwriter-getimprovementplan?social_id=acme-robotics{q}"), u).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{q}: {v}");
        assert!(v["error"].as_str().unwrap().contains(error), "{q}: {v}");
    }
}
