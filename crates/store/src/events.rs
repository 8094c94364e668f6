//! Events of companies, the webhooks they are delivered to, and the log of deliveries.

use async_trait::async_trait;
use model::{Delivery, Event, NewEvent, NewWebhook, Page, Webhook};

use crate::{Paged, Result};

/// Events, webhooks and deliveries.
#[async_trait]
pub trait Events: Send + Sync + 'static {
    /// Keeps the events, in one transaction; an event already kept (same company, kind,
    /// subject and time: a job run again) is not kept twice. Returns the events kept
    /// now, with their ids, in the order given.
    async fn record_events(&self, events: &[NewEvent]) -> Result<Vec<Event>>;

    /// The events of `companies`, newest first (by time, then id).
    async fn events(&self, companies: &[i64], page: Page) -> Result<Paged<Event>>;

    async fn event(&self, id: i64) -> Result<Option<Event>>;

    async fn add_webhook(&self, webhook: &NewWebhook) -> Result<Webhook>;

    /// Every webhook, oldest first.
    async fn webhooks(&self) -> Result<Vec<Webhook>>;

    async fn webhook(&self, id: i64) -> Result<Option<Webhook>>;

    /// Removes a webhook and its delivery log; false when there was none. Deliveries
    /// queued for it find it gone and end.
    async fn remove_webhook(&self, id: i64) -> Result<bool>;

    /// The webhooks that follow `company`: its own, and those of the companies it is a
    /// subsidiary of.
    async fn webhooks_for(&self, company: i64) -> Result<Vec<Webhook>>;

    async fn record_delivery(&self, delivery: &Delivery) -> Result<()>;

    /// The latest deliveries to a webhook, newest first, at most `limit`.
    async fn deliveries(&self, webhook: i64, limit: u32) -> Result<Vec<Delivery>>;
}

/// The columns an event is read from (`events e JOIN companies c`), by both backends.
pub(crate) const EVENT_COLUMNS: &str = "e.id, e.company_id, c.social_id, c.company_name, e.kind, e.subject, \
     e.occurred_at, e.summary, e.data, e.links";
/// The columns a webhook is read from (`webhooks w JOIN companies c`).
pub(crate) const WEBHOOK_COLUMNS: &str = "w.id, w.company_id, c.social_id, w.url, w.secret, w.kinds, w.created_at";

/// The stored list of a webhook's kinds (comma-separated; empty: all).
pub(crate) fn kinds_text(kinds: &[model::EventKind]) -> String {
    kinds.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(",")
}

pub(crate) fn kinds_of(text: &str) -> Result<Vec<model::EventKind>> {
    model::EventKind::parse_list(text).map_err(crate::StoreError::Corrupt)
}
