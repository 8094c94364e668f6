//! Contract tests: the real server, real HTTP, a real SQLite file. One binary.

mod alerts;
mod changes;
mod disputes;
mod errors;
mod guidelines;
mod helpers;
mod migrate;
mod mock;
mod openapi;
mod operations;
mod plans;
mod portfolios;
mod shapes;
mod tenancy;
