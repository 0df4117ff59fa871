//! Network namespaces for the network-fault tests: each worker gets a namespace of its own, joined to
//! the root namespace by a veth pair on a private /30 (10.x, links only this test creates). A
//! partition is the namespace's end of the link taken down: the root end loses its carrier, keeps its
//! route, and what the coordinator sends there is dropped silently, as on a cut cable. A blackhole
//! route over the same /30 makes sure nothing meant for it ever leaves by the default route.
//!
//! Everything is removed on drop (every exit path, panics included): the namespace (which takes its
//! veth end and so the pair), then the blackhole route. The processes started in it are their own
//! guards' (`super::Guard`, killed by PID), declared after the namespace so they go first. Namespaces left by a test process that was killed outright are removed
//! by the next run (their names carry the PID of the process that made them).

#![allow(dead_code)]

use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

/// The prefix of every namespace this binary makes: `anes-nf-<pid>-<n>`.
const PREFIX: &str = "anes-nf-";

static NEXT_LINK: AtomicU32 = AtomicU32::new(0);

fn ip(args: &[&str]) -> Result<(), String> {
    let output = Command::new("ip").args(args).stdin(Stdio::null()).output().map_err(|e| format!("ip: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!("ip {}: {}", args.join(" "), String::from_utf8_lossy(&output.stderr).trim()))
    }
}

/// Whether namespaces can be made here (root, `ip` installed); false with the reason printed, or a
/// panic under `CI`, where these tests must run. Probed once per process.
pub fn available(test: &str) -> bool {
    static PROBE: OnceLock<Result<(), String>> = OnceLock::new();
    let probed = PROBE.get_or_init(|| {
        let probe = format!("{PREFIX}{}-probe", std::process::id());
        let result = ip(&["netns", "add", &probe]).and_then(|()| ip(&["netns", "del", &probe]));
        if result.is_ok() {
            remove_orphans();
        }
        result
    });
    match probed {
        Ok(()) => true,
        Err(e) if anes_fs::ci_is_set() => panic!("{test}: network namespaces are needed: {e}"),
        Err(e) => {
            println!("{test} skipped: network namespaces are not available (root and iproute2 needed): {e}");
            false
        }
    }
}

/// Removes the namespaces of test processes that no longer exist.
fn remove_orphans() {
    let Ok(output) = Command::new("ip").args(["netns", "list"]).output() else { return };
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let name = line.split_whitespace().next().unwrap_or_default();
        let Some(pid) = name.strip_prefix(PREFIX).and_then(|r| r.split('-').next()) else { continue };
        if pid.parse::<u32>().is_ok() && !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = ip(&["netns", "del", name]);
        }
    }
}

/// One namespace with its link to the root namespace.
pub struct Netns {
    pub name: String,
    /// The namespace's address (`10.a.b.2`); the root end is `10.a.b.1`.
    pub address: String,
    inner_link: String,
    subnet: String,
}

impl Netns {
    /// Makes the namespace, its veth pair and their addresses, and brings both ends up.
    pub fn new() -> Netns {
        let pid = std::process::id();
        let n = NEXT_LINK.fetch_add(1, Ordering::SeqCst);
        // 10.(200 + pid % 50).(n % 64 * 4)/30: distinct per link in this process, unlikely to meet
        // another run's, and far from anything on this machine's own interfaces.
        let base = format!("10.{}.{}", 200 + pid % 50, (n % 64) * 4);
        let subnet = format!("{base}.0/30");
        let name = format!("{PREFIX}{pid}-{n}");
        let outer_link = format!("nf{}{n}o", pid % 100_000);
        let inner_link = format!("nf{}{n}i", pid % 100_000);
        let netns = Netns {
            name: name.clone(),
            address: format!("{base}.2"),
            inner_link: inner_link.clone(),
            subnet: subnet.clone(),
        };
        let steps: [Vec<String>; 8] = [
            vec!["netns".into(), "add".into(), name.clone()],
            vec!["link".into(), "add".into(), outer_link.clone(), "type".into(), "veth".into(), "peer".into(), "name".into(), inner_link.clone(), "netns".into(), name.clone()],
            vec!["addr".into(), "add".into(), format!("{base}.1/30"), "dev".into(), outer_link.clone()],
            vec!["link".into(), "set".into(), outer_link.clone(), "up".into()],
            vec!["-n".into(), name.clone(), "addr".into(), "add".into(), format!("{base}.2/30"), "dev".into(), inner_link.clone()],
            vec!["-n".into(), name.clone(), "link".into(), "set".into(), inner_link.clone(), "up".into()],
            vec!["-n".into(), name.clone(), "link".into(), "set".into(), "lo".into(), "up".into()],
            vec!["route".into(), "add".into(), "blackhole".into(), subnet.clone(), "metric".into(), "4000".into()],
        ];
        for step in &steps {
            let args: Vec<&str> = step.iter().map(String::as_str).collect();
            if let Err(e) = ip(&args) {
                panic!("setting up namespace {name}: {e}");
            }
        }
        netns
    }

    /// A command that runs `program` inside the namespace (`ip netns exec` replaces itself with the
    /// program, so the child's PID is the program's).
    pub fn command(&self, program: &str) -> Command {
        let mut command = Command::new("ip");
        command.args(["netns", "exec", &self.name, program]);
        command
    }

    /// Takes the namespace's end of the link down (the partition) or up again.
    pub fn set_link(&self, up: bool) {
        let state = if up { "up" } else { "down" };
        ip(&["-n", &self.name, "link", "set", &self.inner_link, state]).unwrap();
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = ip(&["netns", "del", &self.name]);
        let _ = ip(&["route", "del", "blackhole", &self.subnet, "metric", "4000"]);
    }
}
