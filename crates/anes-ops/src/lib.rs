//! anes-ops: the operations service around the lockstep runner. Pipelines of two workers compared frame
//! by frame, the design's Prometheus gauges and the service's own metrics, the Alertmanager webhook, the
//! automated rollback procedure, an HTTP API and status page.
//!
//! - [`pipeline`]: the pipeline and its rollback procedure as a state machine with no I/O;
//! - [`worker`]: the workers (threads or `anes worker` processes) and their protocol;
//! - [`metrics`]: what `/metrics` exports;
//! - [`alertmanager`]: the webhook's payload and the deduplication of notifications;
//! - [`store`]: the fenced checkpoint store (filesystem, Redis) and its writer thread;
//! - [`journal`] and [`dlq`]: the durable input journal and dead-letter queue;
//! - [`config`]: the TOML configuration;
//! - [`service`] and [`http`]: the only modules that know threads of the service, tokio and axum.

pub mod alertmanager;
pub use anes_pipeline::backoff;
pub mod canary;
pub mod config;
pub mod dlq;
pub mod evidence;
pub mod framed;
pub mod http;
pub mod journal;
pub mod metrics;
pub mod pipeline;
pub mod recovery;
pub mod service;
pub mod store;
pub mod worker;
