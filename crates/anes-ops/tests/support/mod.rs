//! Helpers shared by the integration tests.

pub mod postgres_server;
pub mod redis_server;
pub mod s3_server;
pub mod store_suite;
