//! Group commit: the small writes of concurrent callers share one transaction.
//!
//! Every SQLite commit is an `fsync` of the write-ahead log (`synchronous=FULL`), and
//! there is one writer, so small writes (a job leased or completed, a rescan queued, a
//! subsidiary unlinked) each paying their own commit queue up behind each other's
//! `fsync`s: about 1 000 of them a second on this machine, whatever the concurrency.
//!
//! Here a small write is handed over as a unit of work and waits. Whoever takes the
//! writer connection next (the leader: any waiting caller) takes every unit waiting at
//! that moment and runs them in one `BEGIN IMMEDIATE` transaction, each inside its own
//! savepoint, then commits once; only after the commit does each caller get its answer
//! (so a caller never sees a write that is not durable). A unit that fails is rolled back
//! to its savepoint and gets its own error; the others go on. A commit that fails gives
//! its error to every unit of the group. While one group commits, the next collects: the
//! busier the writer, the larger the groups, without any waiting for company when it is
//! idle (a lone write is a group of one).
//!
//! The leader runs the group on a task of its own, so a caller that goes away (a client
//! that disconnects) cannot abandon the others' writes half-way. Units hold owned data
//! only and never call back into the store (the writer is theirs while they run).

use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::future::BoxFuture;
use sqlx::pool::PoolConnection;
use sqlx::{Connection as _, Sqlite, SqliteConnection};
use tokio::sync::oneshot;

use super::SqliteStore;
use crate::{Result, StoreError};

/// The most units one commit takes: bounds the time one group holds the writer.
const MAX_GROUP: usize = 512;

/// Called after the group's commit: `None` when it committed, else why it did not.
type Delivery = Box<dyn FnOnce(Option<&str>) + Send>;

/// One caller's write, waiting for a leader.
trait Unit: Send {
    /// Runs the write on the group's transaction; `None` when it failed (the caller has
    /// its error then), else what to do once the group is committed.
    fn run<'c>(self: Box<Self>, conn: &'c mut SqliteConnection) -> BoxFuture<'c, Option<Delivery>>;
    /// The group could not run it.
    fn fail(self: Box<Self>, why: &str);
}

struct Pending<T, F> {
    write: F,
    answer: oneshot::Sender<Result<T>>,
}

impl<T, F> Unit for Pending<T, F>
where
    T: Send + 'static,
    F: for<'c> FnOnce(&'c mut SqliteConnection) -> BoxFuture<'c, Result<T>> + Send + 'static,
{
    fn run<'c>(self: Box<Self>, conn: &'c mut SqliteConnection) -> BoxFuture<'c, Option<Delivery>> {
        let Pending { write, answer } = *self;
        Box::pin(async move {
            match write(conn).await {
                Ok(value) => Some(Box::new(move |failed: Option<&str>| {
                    let _ = answer.send(match failed {
                        None => Ok(value),
                        Some(why) => Err(not_committed(why)),
                    });
                }) as Delivery),
                Err(e) => {
                    let _ = answer.send(Err(e));
                    None
                }
            }
        })
    }

    fn fail(self: Box<Self>, why: &str) {
        let _ = self.answer.send(Err(not_committed(why)));
    }
}

fn not_committed(why: &str) -> StoreError {
    StoreError::NotCommitted(why.to_owned())
}

/// The units waiting for a leader.
#[derive(Default)]
pub(super) struct Group {
    waiting: std::sync::Mutex<Vec<(u64, Box<dyn Unit>)>>,
    next: AtomicU64,
    /// Groups committed and units they held, for tests and figures.
    groups: AtomicU64,
    units: AtomicU64,
}

impl std::fmt::Debug for Group {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Group").field("groups", &self.groups).field("units", &self.units).finish_non_exhaustive()
    }
}

impl Group {
    fn waiting(&self) -> std::sync::MutexGuard<'_, Vec<(u64, Box<dyn Unit>)>> {
        // A poisoned lock only means a push or a take panicked; the list is whole.
        self.waiting.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl SqliteStore {
    /// Runs `write` on the writer inside a group commit (module documentation) and answers
    /// once it is durable.
    pub(super) async fn grouped<T, F>(&self, write: F) -> Result<T>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut SqliteConnection) -> BoxFuture<'c, Result<T>> + Send + 'static,
    {
        let (answer, mut answered) = oneshot::channel();
        let id = self.group.next.fetch_add(1, Ordering::Relaxed);
        self.group.waiting().push((id, Box::new(Pending { write, answer })));
        let abandoned = || Err(not_committed("the group that took it ended without an answer"));
        tokio::select! {
            biased;
            done = &mut answered => return done.unwrap_or_else(|_| abandoned()),
            conn = self.write.acquire() => match conn {
                Ok(conn) => {
                    let units = std::mem::take(&mut *self.group.waiting());
                    if !units.is_empty() {
                        let group = self.group.clone();
                        tokio::spawn(async move { run(&group, conn, units).await });
                    }
                }
                Err(e) => {
                    // Still waiting: taken back, answered with the error. Taken by a
                    // leader meanwhile: its answer comes below.
                    let mut waiting = self.group.waiting();
                    if let Some(at) = waiting.iter().position(|(i, _)| *i == id) {
                        waiting.remove(at);
                        return Err(e.into());
                    }
                }
            },
        }
        answered.await.unwrap_or_else(|_| abandoned())
    }

    /// Groups committed and units they held since the store was opened.
    pub fn group_commits(&self) -> (u64, u64) {
        (self.group.groups.load(Ordering::Relaxed), self.group.units.load(Ordering::Relaxed))
    }
}

/// Runs `units` in one transaction on `conn` (at most [`MAX_GROUP`] of them per commit).
async fn run(group: &Group, mut conn: PoolConnection<Sqlite>, mut units: Vec<(u64, Box<dyn Unit>)>) {
    while !units.is_empty() {
        let rest = units.split_off(units.len().min(MAX_GROUP));
        let n = units.len() as u64;
        commit_one(&mut conn, units).await;
        group.groups.fetch_add(1, Ordering::Relaxed);
        group.units.fetch_add(n, Ordering::Relaxed);
        units = rest;
    }
}

async fn commit_one(conn: &mut SqliteConnection, units: Vec<(u64, Box<dyn Unit>)>) {
    let mut tx = match conn.begin_with("BEGIN IMMEDIATE").await {
        Ok(tx) => tx,
        Err(e) => {
            let why = e.to_string();
            units.into_iter().for_each(|(_, u)| u.fail(&why));
            return;
        }
    };
    // A unit alone needs no savepoint: if it fails, the transaction is dropped. In a
    // group each unit runs in the savepoint `unit`, ended as the next one is taken (one
    // statement between units: each is a trip to SQLite's connection thread).
    let alone = units.len() == 1;
    let mut done: Vec<Delivery> = Vec::with_capacity(units.len());
    let mut previous: Option<bool> = None; // whether the unit before succeeded
    let mut units = units.into_iter();
    while let Some((_, unit)) = units.next() {
        if !alone {
            let next = match previous {
                None => "SAVEPOINT unit",
                Some(true) => "RELEASE unit; SAVEPOINT unit",
                Some(false) => "ROLLBACK TO unit; RELEASE unit; SAVEPOINT unit",
            };
            // The transaction itself failed (SQLite rolled it back, or a savepoint could
            // not be taken or ended): nothing of the group holds.
            if let Err(e) = sqlx::raw_sql(next).execute(&mut *tx).await {
                let why = e.to_string();
                unit.fail(&why);
                done.into_iter().for_each(|d| d(Some(&why)));
                units.for_each(|(_, u)| u.fail(&why));
                return;
            }
        }
        let delivery = unit.run(&mut tx).await;
        previous = Some(delivery.is_some());
        done.extend(delivery);
    }
    let ended = match previous {
        Some(false) if alone => return,
        Some(false) => sqlx::raw_sql("ROLLBACK TO unit; RELEASE unit").execute(&mut *tx).await.map(|_| ()),
        _ => Ok(()),
    };
    match ended {
        Ok(()) => {}
        Err(e) => {
            let why = e.to_string();
            done.into_iter().for_each(|d| d(Some(&why)));
            return;
        }
    }
    // COMMIT ends any savepoint still open.
    match tx.commit().await {
        Ok(()) => done.into_iter().for_each(|d| d(None)),
        Err(e) => {
            let why = e.to_string();
            done.into_iter().for_each(|d| d(Some(&why)));
        }
    }
}
