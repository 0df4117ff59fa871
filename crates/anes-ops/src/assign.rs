//! Which coordinator replica runs which pipeline, when `anes serve` runs as N replicas (a Kubernetes
//! StatefulSet, deploy/kubernetes): every replica reads the same configuration and runs only the
//! pipelines this rule gives its ordinal.
//!
//! The rule is rendezvous (highest random weight) hashing: for each replica ordinal `r` in `0..count`
//! the weight of a pipeline is the first 8 bytes, little-endian, of
//! `blake3(pipeline_id ‖ 0x00 ‖ r as u32 little-endian)`; the replica with the highest weight runs the
//! pipeline (equal weights: the lower ordinal). Pipeline ids never contain a 0 byte (the configuration
//! allows letters, digits, `-`, `_` and `.`), so the separator keeps every (id, ordinal) input distinct.
//!
//! Why rendezvous rather than `hash(id) mod count`: going from N to N+1 replicas, a pipeline moves only
//! if the new ordinal N outweighs every old one, which is 1/(N+1) of the pipelines, and it moves to the
//! new replica; with `mod` about N/(N+1) of them would change replicas, each a takeover through the
//! store epoch. blake3 rather than `std`'s hasher: every replica, of every build, must agree forever.
//! The cost is `count` hashes per pipeline at start, hence the bound on `count`.

use thiserror::Error;

use crate::config::Config;

/// Most replicas a rule is computed for.
pub const MAX_REPLICAS: u32 = 1024;

/// One replica's place among its peers: ordinal `ordinal` of `count` (0-based, as StatefulSet pods).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replica {
    /// This replica's ordinal, below `count`.
    pub ordinal: u32,
    /// How many replicas share the pipelines.
    pub count: u32,
}

/// A replica that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ReplicaError {
    /// `--replica` text that is not ORDINAL/COUNT.
    #[error("--replica {text:?}: {problem}")]
    Spec {
        /// What was given.
        text: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A host name without a StatefulSet ordinal suffix, or one out of range.
    #[error("host name {hostname:?}: {problem}")]
    Hostname {
        /// The host name read.
        hostname: String,
        /// What is wrong with it.
        problem: String,
    },
}

impl Replica {
    /// Checks the ordinal and count; `problem` text on failure.
    fn checked(ordinal: u32, count: u32) -> Result<Replica, String> {
        if count == 0 || count > MAX_REPLICAS {
            return Err(format!("{count} replicas: use 1 to {MAX_REPLICAS}"));
        }
        if ordinal >= count {
            return Err(format!("ordinal {ordinal} is not below the replica count {count}"));
        }
        Ok(Replica { ordinal, count })
    }

    /// Parses `ORDINAL/COUNT`, e.g. `1/3`.
    pub fn parse(text: &str) -> Result<Replica, ReplicaError> {
        let spec = |problem: String| ReplicaError::Spec { text: text.to_string(), problem };
        let (ordinal, count) =
            text.split_once('/').ok_or_else(|| spec("write ORDINAL/COUNT, e.g. 1/3".into()))?;
        let number = |part: &str, what: &str| {
            decimal(part).ok_or_else(|| spec(format!("{what} {part:?} is not a decimal number")))
        };
        Replica::checked(number(ordinal, "ordinal")?, number(count, "count")?).map_err(spec)
    }

    /// The replica of a StatefulSet pod named `hostname` (`anes-coordinator-2` is ordinal 2) among
    /// `count`. Only the first label of a dotted name counts (a pod may see its FQDN).
    pub fn from_hostname(hostname: &str, count: u32) -> Result<Replica, ReplicaError> {
        let host = |problem: String| ReplicaError::Hostname { hostname: hostname.to_string(), problem };
        let name = hostname.split('.').next().unwrap_or("");
        let suffix = name.rsplit_once('-').map(|(_, s)| s).ok_or_else(|| {
            host("no StatefulSet ordinal: expected NAME-ORDINAL such as anes-coordinator-2".into())
        })?;
        let ordinal = decimal(suffix).ok_or_else(|| {
            host(format!("the suffix {suffix:?} is not a StatefulSet ordinal (expected NAME-ORDINAL such as anes-coordinator-2)"))
        })?;
        Replica::checked(ordinal, count).map_err(|problem| {
            host(format!(
                "{problem}: is the StatefulSet's replica count the one --replica-from-hostname says?"
            ))
        })
    }

    /// True when this replica runs `pipeline_id`.
    pub fn serves(&self, pipeline_id: &str) -> bool {
        replica_of(pipeline_id, self.count) == self.ordinal
    }
}

impl std::fmt::Display for Replica {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.ordinal, self.count)
    }
}

/// A decimal `u32` without sign, spaces or leading zeros (a StatefulSet writes `2`, never `02`).
fn decimal(text: &str) -> Option<u32> {
    let plain = !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'));
    if plain { text.parse().ok() } else { None }
}

/// The weight of `pipeline_id` on replica `ordinal` (the module's rule).
fn weight(pipeline_id: &str, ordinal: u32) -> u64 {
    let mut hasher = blake3::Hasher::new();
    hasher.update(pipeline_id.as_bytes());
    hasher.update(&[0]);
    hasher.update(&ordinal.to_le_bytes());
    let hash = hasher.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&hash.as_bytes()[..8]);
    u64::from_le_bytes(first)
}

/// Drops from `config` the pipelines other replicas run, and logs what `replica` keeps (an empty share
/// is a warning: the replica serves its HTTP endpoints only).
pub fn keep_share(config: &mut Config, replica: Replica) {
    let configured = config.pipelines.len();
    config.pipelines.retain(|p| replica.serves(&p.settings.id));
    let ids: Vec<&str> = config.pipelines.iter().map(|p| p.settings.id.as_str()).collect();
    if ids.is_empty() {
        tracing::warn!(%replica, configured, "replica {replica} runs none of the {configured} configured pipelines: serving the HTTP endpoints only");
    } else {
        tracing::info!(%replica, configured, pipelines = %ids.join(","), "replica {replica} runs {} of the {configured} configured pipelines", ids.len());
    }
}

/// The ordinal, below `replicas`, of the replica that runs `pipeline_id`. `replicas` of 0 counts as 1.
pub fn replica_of(pipeline_id: &str, replicas: u32) -> u32 {
    let mut best = (0u32, weight(pipeline_id, 0));
    for ordinal in 1..replicas {
        let w = weight(pipeline_id, ordinal);
        // Strictly greater: on equal weights the lower ordinal keeps the pipeline.
        if w > best.1 {
            best = (ordinal, w);
        }
    }
    best.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule written out again from its documentation, with blake3's one-shot API.
    fn documented_rule(id: &str, replicas: u32) -> u32 {
        let weights: Vec<u64> = (0..replicas)
            .map(|r| {
                let input = [id.as_bytes(), &[0u8], &r.to_le_bytes()].concat();
                u64::from_le_bytes(blake3::hash(&input).as_bytes()[0..8].try_into().unwrap())
            })
            .collect();
        let max = *weights.iter().max().unwrap();
        weights.iter().position(|&w| w == max).unwrap() as u32
    }

    fn ids(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("pipeline-{i}")).collect()
    }

    #[test]
    fn the_rule_is_the_documented_one() {
        for id in ids(200).iter().map(String::as_str).chain(["p1", "p2", "live", "demo", "a.b_c-d"]) {
            for replicas in 1..=9 {
                assert_eq!(replica_of(id, replicas), documented_rule(id, replicas), "{id} of {replicas}");
            }
        }
    }

    /// Pinned: a change here reassigns the pipelines of every running deployment on upgrade
    /// (deploy/kubernetes's p1 and p2 among them). The values agree with `documented_rule`, which the
    /// test above compares on the same ids.
    #[test]
    fn known_assignments_stay_put() {
        let table: &[(&str, u32, u32)] = &[("p1", 2, 1), ("p2", 2, 0), ("live", 3, 2), ("demo", 4, 2)];
        for &(id, replicas, expected) in table {
            assert_eq!(replica_of(id, replicas), expected, "{id} of {replicas}");
            assert_eq!(documented_rule(id, replicas), expected, "{id} of {replicas}");
        }
        assert_eq!(replica_of("anything", 1), 0);
        assert_eq!(replica_of("anything", 0), 0);
    }

    #[test]
    fn pipelines_spread_evenly() {
        let ids = ids(1000);
        for replicas in [2u32, 3, 5, 8] {
            let mut counts = vec![0usize; replicas as usize];
            for id in &ids {
                counts[replica_of(id, replicas) as usize] += 1;
            }
            let fair = 1000.0 / f64::from(replicas);
            for (ordinal, &n) in counts.iter().enumerate() {
                let share = n as f64 / fair;
                assert!(
                    (0.75..=1.25).contains(&share),
                    "{replicas} replicas: ordinal {ordinal} runs {n} of 1000"
                );
            }
        }
    }

    #[test]
    fn one_more_replica_moves_few_pipelines_and_only_to_itself() {
        let ids = ids(1000);
        for n in 1u32..=8 {
            let moved: Vec<&String> =
                ids.iter().filter(|id| replica_of(id, n) != replica_of(id, n + 1)).collect();
            let limit = 1.5 * 1000.0 / f64::from(n + 1);
            assert!((moved.len() as f64) <= limit, "{n} -> {}: {} of 1000 moved", n + 1, moved.len());
            assert!(!moved.is_empty(), "{n} -> {}: the new replica got nothing", n + 1);
            for id in moved {
                assert_eq!(replica_of(id, n + 1), n, "{id} moved between old replicas");
            }
        }
    }

    #[test]
    fn replica_text_and_host_names() {
        assert_eq!(Replica::parse("1/3"), Ok(Replica { ordinal: 1, count: 3 }));
        assert_eq!(Replica::parse("0/1"), Ok(Replica { ordinal: 0, count: 1 }));
        for bad in ["3/3", "1", "1/0", "-1/2", "01/2", "a/2", "1/2/3", "", "1/2000"] {
            let error = Replica::parse(bad).unwrap_err();
            assert!(matches!(&error, ReplicaError::Spec { text, .. } if text == bad), "{bad}: {error}");
        }
        assert_eq!(Replica::from_hostname("anes-coordinator-2", 3), Ok(Replica { ordinal: 2, count: 3 }));
        assert_eq!(
            Replica::from_hostname("anes-coordinator-0.anes-coordinator.anes.svc.cluster.local", 2),
            Ok(Replica { ordinal: 0, count: 2 })
        );
        for bad in ["vm", "anes-coordinator", "anes-coordinator-", "anes-coordinator-x", "anes-coordinator-3"]
        {
            let error = Replica::from_hostname(bad, 3).unwrap_err().to_string();
            assert!(error.starts_with(&format!("host name {bad:?}: ")), "{error}");
        }
        assert!(
            Replica::from_hostname("anes-coordinator-3", 3)
                .unwrap_err()
                .to_string()
                .contains("not below the replica count 3")
        );
    }

    #[test]
    fn a_replica_serves_exactly_its_share() {
        let ids = ids(50);
        let replicas: Vec<Replica> = (0..4).map(|ordinal| Replica { ordinal, count: 4 }).collect();
        for id in &ids {
            let owners: Vec<u32> = replicas.iter().filter(|r| r.serves(id)).map(|r| r.ordinal).collect();
            assert_eq!(owners, [documented_rule(id, 4)], "{id}");
        }
    }

    #[test]
    fn keep_share_keeps_exactly_the_replicas_pipelines() {
        let text: String =
            ["p1", "p2", "live", "demo"].iter().map(|id| format!("[[pipeline]]\nid = \"{id}\"\n")).collect();
        let mut all = Vec::new();
        for ordinal in 0..3 {
            let mut config = Config::parse(&text, "anes.toml").unwrap();
            keep_share(&mut config, Replica { ordinal, count: 3 });
            let kept: Vec<String> = config.pipelines.iter().map(|p| p.settings.id.clone()).collect();
            let expected: Vec<String> = ["p1", "p2", "live", "demo"]
                .iter()
                .filter(|id| documented_rule(id, 3) == ordinal)
                .map(|id| id.to_string())
                .collect();
            assert_eq!(kept, expected, "replica {ordinal}/3");
            all.extend(kept);
        }
        all.sort();
        assert_eq!(all, ["demo", "live", "p1", "p2"]);
    }
}
