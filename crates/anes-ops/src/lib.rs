//! anes-ops: the shells around the pipeline's rules (`anes-pipeline`, which does no I/O): pipelines of
//! two workers compared frame by frame, their durable state, the design's Prometheus gauges and the
//! service's own metrics, the Alertmanager webhook, an HTTP API and status page, and the canary.
//!
//! - [`config`]: the TOML configuration, typed and checked at start;
//! - [`pipeline`]: the pipeline crate's names, [`pipeline::PipelineStorage`] (executes the journal
//!   actions, on [`pipeline::StorageThread`]) and [`pipeline::PipelineObserver`] (the one place
//!   counters become series);
//! - [`framed`], [`journal`], [`dlq`] and [`store`]: checksummed records, the input journal (every
//!   acknowledged record, the dead-letter queue's among them; in the data directory, or in the store
//!   when it is shared, under its fence), queue files of earlier versions, the fenced checkpoint store
//!   (filesystem, Redis, PostgreSQL, S3 with a Redis hot copy) and its writer thread;
//! - [`recovery`]: a pipeline's durable state opened at start (lock, takeover, newest verified
//!   checkpoint, the journal after it checked against its acknowledged mark);
//! - [`worker`]: the `anes-workers` crate under the path this crate's modules use (thread, process
//!   and remote transports, the protocol's codec);
//! - [`assign`]: which coordinator replica runs which pipeline (`serve --replica`);
//! - [`metrics`], [`alertmanager`], [`evidence`]: what `/metrics` exports, the webhook's payload and
//!   its deduplication, the referee and the evidence bundles;
//! - [`http`]: the HTTP API (axum on hyper, with the server's time, head size and connection limits);
//!   it knows a running pipeline only by its [`service::PipelineHandle`];
//! - [`service`]: the start (`bootstrap`), one driver thread per pipeline (`driver`) and the process
//!   around them (`run`: the tokio runtime, the signals, the shutdown sequence);
//! - [`canary`]: the canary gate, its worker children and the export of its metrics.
//!
//! Threads are started in these modules only, each for one reason: [`service`] (a driver per pipeline;
//! an evidence writer per investigation, so the driver does not wait for the disk; the HTTP runtime's
//! two workers, and its blocking pool for the drain), [`http`] (a task per connection, and a blocking
//! read per evidence file, on that runtime), [`store`] (one checkpoint writer per pipeline, off the
//! workers' path; the S3 store's current-thread runtime, run on the thread that uses the store; the
//! PostgreSQL store's runtime, whose one worker runs its connection's task), [`pipeline`] (one journal
//! thread per pipeline, so a commit never holds up the driver) and [`canary`] (the metrics endpoint's
//! current-thread runtime); the workers' threads are `anes-workers`'. Only [`service`], [`http`], the
//! canary's export and the S3 and PostgreSQL stores know tokio (the last two because their client
//! libraries are async), and only the first three axum
//! (`tests/shell_boundaries.rs` checks both).
//! Every file read goes through a size cap: `anes_fs::read_capped` (one cap per kind of file), or
//! [`evidence::read_served_file`] for what `/evidence/...` serves.

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
pub mod service;
pub mod store;
pub use anes_workers as worker;
