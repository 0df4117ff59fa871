//! anes-ops: the operations service around the lockstep runner. Pipelines of two workers compared frame
//! by frame, the design's Prometheus gauges and the service's own metrics, the Alertmanager webhook, the
//! automated rollback procedure, an HTTP API and status page.
//!
//! - [`pipeline`]: the pipeline and its rollback procedure as a state machine with no I/O;
//! - [`worker`]: the `anes-workers` crate (the workers' transports and the protocol's codec), under
//!   the path this crate's modules use;
//! - [`metrics`]: what `/metrics` exports;
//! - [`alertmanager`]: the webhook's payload and the deduplication of notifications;
//! - [`store`]: the fenced checkpoint store (filesystem, Redis) and its writer thread;
//! - [`journal`] and [`dlq`]: the durable input journal and dead-letter queue;
//! - [`config`]: the TOML configuration;
//! - [`assign`]: which coordinator replica runs which pipeline (`serve --replica`);
//! - [`runtime`] and [`http`]: the only modules that know threads of the service, tokio and axum.

pub mod alertmanager;
pub mod assign;
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
pub mod runtime;
pub mod store;
pub use anes_workers as worker;
