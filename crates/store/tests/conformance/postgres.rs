//! The PostgreSQL backend: each check on a schema of its own in the test database
//! (`store::testkit::PgSchema`), dropped afterwards.

use std::sync::Arc;

use store::testkit::PgSchema;

use crate::Fresh;

pub async fn fresh() -> Option<Fresh> {
    let schema = PgSchema::create().await?;
    let store = schema.store().await;
    Some(Fresh { store: Arc::new(store), _keep: Box::new(schema) })
}
