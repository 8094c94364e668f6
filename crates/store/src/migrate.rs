//! Migrations embedded in the binary and applied on start.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;

use sqlx::error::BoxDynError;
use sqlx::migrate::{Migration, MigrationSource, MigrationType};

/// A backend's migrations: (version, description, SQL).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Embedded(pub &'static [(i64, &'static str, &'static str)]);

impl<'s> MigrationSource<'s> for Embedded {
    fn resolve(self) -> Pin<Box<dyn Future<Output = Result<Vec<Migration>, BoxDynError>> + Send + 's>> {
        Box::pin(async move {
            Ok(self
                .0
                .iter()
                .map(|(version, description, sql)| {
                    Migration::new(
                        *version,
                        Cow::Borrowed(*description),
                        MigrationType::Simple,
                        sqlx::SqlStr::from_static(sql),
                        false,
                    )
                })
                .collect())
        })
    }
}
