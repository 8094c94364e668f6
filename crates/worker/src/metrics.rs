//! The worker's metrics (one set per process, whatever runs the jobs): jobs by kind and
//! how they ended, their durations, checks a scan could not make by risk vector,
//! truncated scans, what the scheduler queued, events recorded and webhook deliveries. [`register`] adds them to the
//! registry `/metrics` renders.

use std::sync::LazyLock;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct JobLabels {
    kind: &'static str,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct VectorLabels {
    vector: &'static str,
}

struct WorkerMetrics {
    jobs: Family<JobLabels, Counter>,
    durations: Family<KindLabels, Histogram, fn() -> Histogram>,
    not_assessable: Family<VectorLabels, Counter>,
    truncated: Counter,
    scheduled: Counter,
    held_back: Gauge,
    events: Family<KindLabels, Counter>,
    deliveries: Family<OutcomeLabels, Counter>,
    delivery_durations: Histogram,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

fn duration_histogram() -> Histogram {
    // 50 ms to about 27 minutes, each bucket twice the one before.
    Histogram::new(exponential_buckets(0.05, 2.0, 16))
}

static METRICS: LazyLock<WorkerMetrics> = LazyLock::new(|| WorkerMetrics {
    jobs: Family::default(),
    durations: Family::new_with_constructor(duration_histogram),
    not_assessable: Family::default(),
    truncated: Counter::default(),
    scheduled: Counter::default(),
    held_back: Gauge::default(),
    events: Family::default(),
    deliveries: Family::default(),
    // 5 ms to about 20 s.
    delivery_durations: Histogram::new(exponential_buckets(0.005, 2.0, 13)),
});

/// Adds the worker's metrics to `registry`.
pub fn register(registry: &mut Registry) {
    let m = &*METRICS;
    registry.register(
        "rampart_jobs_finished",
        "Jobs that ended, by kind and outcome (done, retry, dead, panicked, lease_lost, released)",
        m.jobs.clone(),
    );
    registry.register("rampart_job_duration_seconds", "Time jobs ran, by kind", m.durations.clone());
    registry.register(
        "rampart_scan_checks_not_assessable",
        "Checks scans could not make (an error, a timeout, no answer), by risk vector",
        m.not_assessable.clone(),
    );
    registry.register("rampart_scans_truncated", "Domain scans cut short by their budget", m.truncated.clone());
    registry.register("rampart_scheduled_rescans", "Rescans the scheduler queued", m.scheduled.clone());
    registry.register(
        "rampart_scheduler_held_back",
        "Due companies the last scheduling round left for the workers to catch up",
        m.held_back.clone(),
    );
    registry.register("rampart_events", "Events recorded, by kind", m.events.clone());
    registry.register(
        "rampart_webhook_deliveries",
        "Webhook delivery attempts, by outcome (delivered, failed, gave_up)",
        m.deliveries.clone(),
    );
    registry.register(
        "rampart_webhook_delivery_seconds",
        "Time webhook delivery attempts took",
        m.delivery_durations.clone(),
    );
}

pub(crate) fn event_recorded(kind: model::EventKind) {
    METRICS.events.get_or_create(&KindLabels { kind: kind.as_str() }).inc();
}

pub(crate) fn delivery(outcome: &'static str, took: Duration) {
    METRICS.deliveries.get_or_create(&OutcomeLabels { outcome }).inc();
    METRICS.delivery_durations.observe(took.as_secs_f64());
}

pub(crate) fn job_ended(kind: &'static str, outcome: &'static str, took: Duration) {
    METRICS.jobs.get_or_create(&JobLabels { kind, outcome }).inc();
    METRICS.durations.get_or_create(&KindLabels { kind }).observe(took.as_secs_f64());
}

pub(crate) fn not_assessable(checks: &[model::Check]) {
    for c in checks.iter().filter(|c| c.outcome == model::CheckOutcome::NotAssessable) {
        METRICS.not_assessable.get_or_create(&VectorLabels { vector: c.risk_vector.as_str() }).inc();
    }
}

pub(crate) fn truncated() {
    METRICS.truncated.inc();
}

pub(crate) fn scheduled(queued: u64, held_back: u64) {
    METRICS.scheduled.inc_by(queued);
    METRICS.held_back.set(i64::try_from(held_back).unwrap_or(i64::MAX));
}
