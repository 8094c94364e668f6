//! API keys and their monthly usage.

use model::{ApiKey, NewApiKey};

use crate::Result;
use async_trait::async_trait;

/// API keys and their monthly usage.
#[async_trait]
pub trait Keys: Send + Sync + 'static {
    async fn create_key(&self, key: &NewApiKey) -> Result<ApiKey>;

    async fn key_by_hash(&self, hash: &str) -> Result<Option<ApiKey>>;

    async fn keys(&self) -> Result<Vec<ApiKey>>;

    /// Sets a key's active flag by id or by prefix; false when no key matched.
    async fn set_key_active(&self, id_or_prefix: &str, active: bool) -> Result<bool>;

    /// Requests counted for a key in a month (`YYYY-MM`).
    async fn usage(&self, key_id: i64, month: &str) -> Result<u64>;

    async fn add_usage(&self, key_id: i64, month: &str, requests: u64) -> Result<()>;
}
