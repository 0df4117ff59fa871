//! The Alertmanager webhook (payload version 4): parsing a notification and deciding, alert by alert,
//! what it asks of which pipeline.
//!
//! Delivery is at least once (Alertmanager retries on a 5xx or a network error), so notifications are
//! deduplicated on the alert's `fingerprint` and `startsAt` (and its status: a firing and the resolved
//! notification of one alert share both). The group's `status` is not looked at: a "firing"
//! notification can carry alerts that are already resolved.

use std::collections::{BTreeMap, HashSet, VecDeque};

use serde::Deserialize;
use thiserror::Error;

/// The alert the design defines; other alerts reaching the webhook are logged and ignored.
pub const DIVERGENCE_ALERT: &str = "DualWorkerStateDivergence";

/// The only payload version this webhook reads.
pub const PAYLOAD_VERSION: &str = "4";

/// Notifications remembered for deduplication.
const REMEMBERED: usize = 4096;

/// Longest fingerprint accepted (Alertmanager's are 16 hex digits) and longest `startsAt` (an RFC 3339
/// time with nanoseconds and an offset has 35 bytes): with [`REMEMBERED`], they bound the bytes the
/// deduplication memory holds.
const MAX_FINGERPRINT_LEN: usize = 32;
const MAX_STARTS_AT_LEN: usize = 64;

/// A webhook notification.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Notification {
    /// Payload version (`"4"`).
    pub version: String,
    /// The group's status (not used for decisions).
    pub status: Status,
    /// Receiver name.
    pub receiver: String,
    /// The alerts.
    pub alerts: Vec<Alert>,
    /// The group key.
    #[serde(default)]
    pub group_key: String,
    /// Alerts left out because of `max_alerts`.
    #[serde(default)]
    pub truncated_alerts: u64,
}

/// `firing` or `resolved`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The condition holds.
    Firing,
    /// It no longer does.
    Resolved,
}

/// One alert of a notification.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Alert {
    /// This alert's status.
    pub status: Status,
    /// Its labels (`alertname`, `pipeline_id`, ...).
    pub labels: BTreeMap<String, String>,
    /// Its annotations (`summary`, `description`...), absent in some deliveries.
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
    /// When it started (RFC 3339).
    pub starts_at: String,
    /// When it ended (`0001-01-01T00:00:00Z` while firing).
    #[serde(default)]
    pub ends_at: String,
    /// Link to the expression in Prometheus.
    #[serde(default, rename = "generatorURL")]
    pub generator_url: String,
    /// Identity of the alert (16 hex digits), the same for its firing and resolved notifications.
    pub fingerprint: String,
}

/// Why a body is not a notification this webhook reads.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum WebhookError {
    /// Not JSON of the expected shape.
    #[error("not an Alertmanager notification: {0}")]
    Shape(String),
    /// Another payload version.
    #[error("payload version {found:?} is not supported (this webhook reads version \"4\")")]
    Version {
        /// The version found.
        found: String,
    },
    /// An alert whose fingerprint is not 1 to 32 hex digits, or whose `startsAt` is not an RFC 3339
    /// time of at most 64 bytes.
    #[error("alert {index}: {problem}")]
    Alert {
        /// Index in `alerts`.
        index: usize,
        /// What is wrong.
        problem: String,
    },
}

/// Parses and checks a notification body.
pub fn parse(body: &[u8]) -> Result<Notification, WebhookError> {
    let notification: Notification =
        serde_json::from_slice(body).map_err(|e| WebhookError::Shape(e.to_string()))?;
    if notification.version != PAYLOAD_VERSION {
        return Err(WebhookError::Version { found: notification.version });
    }
    for (index, alert) in notification.alerts.iter().enumerate() {
        // Lengths first: the reason quotes the value only when it is short.
        let (fingerprint, starts_at) = (alert.fingerprint.len(), alert.starts_at.len());
        if fingerprint > MAX_FINGERPRINT_LEN {
            return Err(WebhookError::Alert {
                index,
                problem: format!(
                    "fingerprint of {fingerprint} bytes is longer than {MAX_FINGERPRINT_LEN} hex digits"
                ),
            });
        }
        if starts_at > MAX_STARTS_AT_LEN {
            return Err(WebhookError::Alert {
                index,
                problem: format!("startsAt of {starts_at} bytes is longer than {MAX_STARTS_AT_LEN} bytes"),
            });
        }
        if alert.fingerprint.is_empty() || !alert.fingerprint.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(WebhookError::Alert {
                index,
                problem: format!("fingerprint {:?} is not hex", alert.fingerprint),
            });
        }
        if !looks_like_rfc3339(&alert.starts_at) {
            return Err(WebhookError::Alert {
                index,
                problem: format!("startsAt {:?} is not an RFC 3339 time", alert.starts_at),
            });
        }
    }
    Ok(notification)
}

/// `YYYY-MM-DDTHH:MM:SS` then optional fraction and a zone (`Z` or `±HH:MM`).
fn looks_like_rfc3339(text: &str) -> bool {
    let b = text.as_bytes();
    let digits = |r: std::ops::Range<usize>| b.get(r).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    if b.len() < 20
        || !digits(0..4)
        || b[4] != b'-'
        || !digits(5..7)
        || b[7] != b'-'
        || !digits(8..10)
        || !matches!(b[10], b'T' | b't')
        || !digits(11..13)
        || b[13] != b':'
        || !digits(14..16)
        || b[16] != b':'
        || !digits(17..19)
    {
        return false;
    }
    let mut rest = &b[19..];
    if let Some(fraction) = rest.strip_prefix(b".") {
        let n = fraction.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return false;
        }
        rest = &fraction[n..];
    }
    match rest {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => [h1, h2, m1, m2].iter().all(|c| c.is_ascii_digit()),
        _ => false,
    }
}

/// What one alert asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// The divergence alert fires for this pipeline: roll it back.
    Firing {
        /// `pipeline_id`.
        pipeline: String,
    },
    /// It resolved: information only, never a reason to re-admit a worker.
    Resolved {
        /// `pipeline_id`.
        pipeline: String,
    },
    /// Already seen (a retried delivery).
    Duplicate,
    /// Not the divergence alert, no `pipeline_id` label, or a pipeline this service does not run.
    NotOurs {
        /// Which check turned it away.
        reason: &'static str,
    },
}

/// Remembers the notifications already acted on.
///
/// ```
/// use anes_ops::alertmanager::{parse, Decision, Deduplicator};
/// let body = r#"{"version":"4","status":"firing","receiver":"anes","alerts":[{"status":"firing",
///   "labels":{"alertname":"DualWorkerStateDivergence","pipeline_id":"p1"},
///   "startsAt":"2026-11-29T07:06:24.878Z","fingerprint":"72d33b258b0722f7"}]}"#;
/// let notification = parse(body.as_bytes()).unwrap();
/// let mut dedup = Deduplicator::new();
/// let runs = |id: &str| id == "p1";
/// assert_eq!(dedup.decide(&notification.alerts[0], runs), Decision::Firing { pipeline: "p1".into() });
/// assert_eq!(dedup.decide(&notification.alerts[0], runs), Decision::Duplicate);
/// ```
#[derive(Debug, Default)]
pub struct Deduplicator {
    seen: HashSet<(String, String, Status)>,
    order: VecDeque<(String, String, Status)>,
}

impl Deduplicator {
    /// An empty memory.
    pub fn new() -> Deduplicator {
        Deduplicator::default()
    }

    /// Decides what `alert` asks for, remembering it when it is for a pipeline that `runs` names.
    pub fn decide(&mut self, alert: &Alert, runs: impl Fn(&str) -> bool) -> Decision {
        if alert.labels.get("alertname").map(String::as_str) != Some(DIVERGENCE_ALERT) {
            return Decision::NotOurs { reason: "other_alert" };
        }
        let Some(pipeline) = alert.labels.get("pipeline_id").filter(|p| !p.is_empty()) else {
            return Decision::NotOurs { reason: "no_pipeline_label" };
        };
        // Not remembered: alerts for pipelines nobody runs would evict the memory of real ones.
        if !runs(pipeline) {
            return Decision::NotOurs { reason: "unknown_pipeline" };
        }
        let key = (alert.fingerprint.clone(), alert.starts_at.clone(), alert.status);
        if !self.seen.insert(key.clone()) {
            return Decision::Duplicate;
        }
        self.order.push_back(key);
        if self.order.len() > REMEMBERED
            && let Some(old) = self.order.pop_front()
        {
            self.seen.remove(&old);
        }
        match alert.status {
            Status::Firing => Decision::Firing { pipeline: pipeline.clone() },
            Status::Resolved => Decision::Resolved { pipeline: pipeline.clone() },
        }
    }
}

/// Labels logged of an alert that is ignored, and characters logged of each name and value: a
/// notification body may be 1 MiB, and a log line should not.
const LOGGED_LABELS: usize = 8;
const LOGGED_LABEL_CHARS: usize = 64;

/// `labels` for a log line: `name=value` pairs joined by commas, at most `LOGGED_LABELS` of
/// them and `LOGGED_LABEL_CHARS` characters of each name and value, control characters escaped
/// (a newline in a value must not start a forged log line); what is left out is counted.
pub fn labels_for_log(labels: &BTreeMap<String, String>) -> String {
    let mut line = String::new();
    for (k, v) in labels.iter().take(LOGGED_LABELS) {
        if !line.is_empty() {
            line.push(',');
        }
        push_for_log(&mut line, k);
        line.push('=');
        push_for_log(&mut line, v);
    }
    if labels.len() > LOGGED_LABELS {
        line.push_str(&format!(" and {} more labels", labels.len() - LOGGED_LABELS));
    }
    line
}

/// `text`, at most [`LOGGED_LABEL_CHARS`] characters of it, escaped as Rust's debug output does.
fn push_for_log(line: &mut String, text: &str) {
    let mut chars = text.chars();
    for c in chars.by_ref().take(LOGGED_LABEL_CHARS) {
        line.extend(c.escape_debug());
    }
    let rest = chars.count();
    if rest > 0 {
        line.push_str(&format!("...({rest} more characters)"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_logged_bounded_and_escaped() {
        let mut labels = BTreeMap::new();
        labels.insert("alertname".to_string(), "Other\nforged line".to_string());
        labels.insert("big".to_string(), "x".repeat(1 << 20));
        let line = labels_for_log(&labels);
        assert_eq!(
            line,
            format!(
                "alertname=Other\\nforged line,big={}...({} more characters)",
                "x".repeat(64),
                (1 << 20) - 64
            )
        );
        for i in 0..100 {
            labels.insert(format!("l{i:03}"), String::new());
        }
        let line = labels_for_log(&labels);
        assert!(line.ends_with(" and 94 more labels"), "{line}");
        assert!(line.len() < 1000, "{}", line.len());
    }
    use proptest::prelude::*;

    const FIRING: &str = include_str!("../tests/fixtures/alertmanager-firing.raw.json");
    const RESOLVED: &str = include_str!("../tests/fixtures/alertmanager-resolved.raw.json");
    const FIRING_PRETTY: &str = include_str!("../tests/fixtures/alertmanager-firing.json");
    const RESOLVED_PRETTY: &str = include_str!("../tests/fixtures/alertmanager-resolved.json");

    /// The service runs pipeline `p1` only.
    fn p1(id: &str) -> bool {
        id == "p1"
    }

    #[test]
    fn the_real_fixtures_parse() {
        for body in [FIRING, FIRING_PRETTY] {
            let n = parse(body.as_bytes()).unwrap();
            assert_eq!(n.status, Status::Firing);
            assert_eq!(n.alerts.len(), 1);
            let alert = &n.alerts[0];
            assert_eq!(alert.fingerprint, "72d33b258b0722f7");
            assert_eq!(alert.ends_at, "0001-01-01T00:00:00Z");
            assert_eq!(alert.labels["pipeline_id"], "p1");
            assert!(alert.generator_url.contains("worker_state_divergence_flag"));
        }
        for body in [RESOLVED, RESOLVED_PRETTY] {
            let n = parse(body.as_bytes()).unwrap();
            assert_eq!(n.alerts[0].status, Status::Resolved);
        }
    }

    #[test]
    fn decisions_are_per_alert_and_deduplicated() {
        let mut dedup = Deduplicator::new();
        let firing = parse(FIRING.as_bytes()).unwrap();
        let resolved = parse(RESOLVED.as_bytes()).unwrap();
        assert_eq!(dedup.decide(&firing.alerts[0], p1), Decision::Firing { pipeline: "p1".into() });
        assert_eq!(dedup.decide(&firing.alerts[0], p1), Decision::Duplicate, "a retried delivery");
        assert_eq!(dedup.decide(&resolved.alerts[0], p1), Decision::Resolved { pipeline: "p1".into() });
        assert_eq!(dedup.decide(&resolved.alerts[0], p1), Decision::Duplicate);
        // The same alert firing again later (a new startsAt) is a new incident.
        let mut again = firing.alerts[0].clone();
        again.starts_at = "2026-11-29T08:00:00.5Z".into();
        assert_eq!(dedup.decide(&again, p1), Decision::Firing { pipeline: "p1".into() });
        let mut other = again.clone();
        other.labels.insert("alertname".into(), "AnesExporterDown".into());
        assert_eq!(dedup.decide(&other, p1), Decision::NotOurs { reason: "other_alert" });
        other.labels.insert("alertname".into(), DIVERGENCE_ALERT.into());
        other.labels.remove("pipeline_id");
        assert_eq!(dedup.decide(&other, p1), Decision::NotOurs { reason: "no_pipeline_label" });
    }

    #[test]
    fn a_firing_group_can_carry_a_resolved_alert() {
        let text = FIRING.replacen(r#""alerts":[{"status":"firing""#, r#""alerts":[{"status":"resolved""#, 1);
        let n = parse(text.as_bytes()).unwrap();
        assert_eq!(n.status, Status::Firing);
        assert_eq!(
            Deduplicator::new().decide(&n.alerts[0], p1),
            Decision::Resolved { pipeline: "p1".into() }
        );
    }

    #[test]
    fn bad_bodies_are_refused_with_a_reason() {
        assert!(matches!(parse(b""), Err(WebhookError::Shape(_))));
        assert!(matches!(parse(&FIRING.as_bytes()[..100]), Err(WebhookError::Shape(_))));
        let v3 = FIRING.replace(r#""version":"4""#, r#""version":"3""#);
        assert_eq!(parse(v3.as_bytes()), Err(WebhookError::Version { found: "3".into() }));
        let bad_time = FIRING.replace("2026-11-29T07:06:24.878Z", "yesterday");
        assert!(matches!(parse(bad_time.as_bytes()), Err(WebhookError::Alert { index: 0, .. })));
        let bad_print = FIRING.replace("72d33b258b0722f7", "not-hex");
        assert!(parse(bad_print.as_bytes()).unwrap_err().to_string().contains("fingerprint"));
        assert!(looks_like_rfc3339("2026-11-29T07:06:24+01:00"));
        assert!(!looks_like_rfc3339("2026-11-29T07:06:24."));
    }

    #[test]
    fn fingerprints_and_start_times_are_bounded() {
        let firing = parse(FIRING.as_bytes()).unwrap();
        let refusal = |from: &str, to: &str| {
            let body = FIRING.replace(from, to);
            match parse(body.as_bytes()) {
                Err(WebhookError::Alert { index: 0, problem }) => problem,
                other => panic!("{to:.40}: {other:?}"),
            }
        };
        let fingerprint = &firing.alerts[0].fingerprint;
        let problem = refusal(fingerprint, &"f".repeat(33));
        assert!(problem.contains("fingerprint of 33 bytes") && !problem.contains("fff"), "{problem}");
        assert!(refusal(fingerprint, &"0".repeat(1 << 20)).contains("longer than 32 hex digits"));
        let at_limit = FIRING.replace(fingerprint.as_str(), &"a".repeat(32));
        assert_eq!(parse(at_limit.as_bytes()).unwrap().alerts[0].fingerprint.len(), 32);
        // Still RFC 3339, but its fraction makes it 65 bytes.
        let starts_at = &firing.alerts[0].starts_at;
        let long = format!("2026-11-29T07:06:24.{}Z", "8".repeat(44));
        assert_eq!(long.len(), 65);
        assert!(looks_like_rfc3339(&long));
        let problem = refusal(starts_at, &long);
        assert!(problem.contains("startsAt of 65 bytes"), "{problem}");
        let at_limit = format!("2026-11-29T07:06:24.{}Z", "8".repeat(43));
        let body = FIRING.replace(starts_at.as_str(), &at_limit);
        assert_eq!(parse(body.as_bytes()).unwrap().alerts[0].starts_at.len(), 64);
    }

    #[test]
    fn alerts_for_pipelines_not_run_here_are_not_remembered() {
        let firing = parse(FIRING.as_bytes()).unwrap();
        let mut dedup = Deduplicator::new();
        assert_eq!(dedup.decide(&firing.alerts[0], p1), Decision::Firing { pipeline: "p1".into() });
        let mut stranger = firing.alerts[0].clone();
        stranger.labels.insert("pipeline_id".into(), "nobody".into());
        for i in 0..2 * REMEMBERED {
            stranger.fingerprint = format!("{i:016x}");
            assert_eq!(dedup.decide(&stranger, p1), Decision::NotOurs { reason: "unknown_pipeline" });
        }
        assert!(dedup.order.len() == 1 && dedup.seen.len() == 1);
        // A retried delivery of the real alert is still known for what it is.
        assert_eq!(dedup.decide(&firing.alerts[0], p1), Decision::Duplicate);
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let _ = parse(&bytes);
        }

        #[test]
        fn truncated_fixtures_are_refused(cut in 0usize..1020) {
            let cut = cut.min(FIRING.len() - 1);
            prop_assert!(parse(&FIRING.as_bytes()[..cut]).is_err());
        }

        #[test]
        fn arbitrary_times_never_panic(text in ".{0,40}") {
            let _ = looks_like_rfc3339(&text);
        }
    }
}
