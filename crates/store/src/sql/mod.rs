//! The statements both backends run, written once.
//!
//! This directory is compiled twice, as `sqlite::sql` and `postgres::sql` (a `#[path]`
//! module of each backend), against the seam its backend module defines:
//!
//! - `Backend`, the store type; `Db`, its database; `DbRow`, its row type;
//! - `Backend::reader()`: a connection for reads (one of SQLite's read connections, a
//!   pooled PostgreSQL connection);
//! - `Backend::writer()`: the pool one autocommit statement runs on;
//! - `Backend::begin()`: a write transaction (`BEGIN IMMEDIATE` on SQLite's one writer);
//! - `Backend::grouped(write)`: a unit of small writes: group commit on SQLite (it shares
//!   a commit with the units waiting beside it), its own transaction on PostgreSQL;
//!   `Backend::grouped_one(write)` the same for a single statement (on PostgreSQL no
//!   transaction around it: a statement is one);
//! - `Backend::announce_jobs()`: after a commit that queued jobs with plain SQL, wakes
//!   the workers waiting (SQLite: those of this process; PostgreSQL: `NOTIFY`);
//! - `in_list(column, n)` and `list(values)`: `column` is one of the values bound at
//!   `$n` (SQLite reads a JSON array with `json_each`, PostgreSQL an array with `ANY`).
//!
//! The SQL is the dialect both read: `$N` parameters, `TRUE`/`FALSE`, upserts whose
//! columns are qualified by their table, `LIMIT CAST($N AS BIGINT)` (a bare bound LIMIT
//! makes SQLite prepare the statement again for every value). What truly differs stays
//! in the backend modules, each place saying why: opening and migrating, the queue's
//! lease, the CVE bulk writes and one-row answers.

use super::*;

pub(super) mod assets;
pub(super) mod companies;
pub(super) mod disputes;
pub(super) mod events;
pub(super) mod findings;
pub(super) mod incidents;
pub(super) mod intel;
pub(super) mod keys;
pub(super) mod portfolios;
pub(super) mod queue;
pub(super) mod read;
pub(super) mod rows;
pub(super) mod schedule;
pub(super) mod write;
