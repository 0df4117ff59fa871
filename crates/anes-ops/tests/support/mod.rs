//! Helpers shared by the integration tests.

pub mod journal_suite;
pub mod postgres_server;
pub mod redis_server;
pub mod s3_server;
pub mod store_suite;
