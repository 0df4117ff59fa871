//! Network namespaces for the network-fault tests: each worker gets a namespace of its own, two
//! router namespaces away from the coordinator's (the root namespace): root -- veth -- near router --
//! veth -- far router -- veth -- worker, on three private /30s (10.x, links only this test creates).
//! A partition is the link between the two routers taken down: neither end's own link changes, the
//! routers drop what they cannot deliver silently, and both ends' TCP see lost segments and back off
//! as across a real network. Silently: the far router's routes through the link go with it and its
//! blackhole default route takes over; the near router keeps its route (the link only lost its
//! carrier) and would answer every segment with an ICMP host unreachable (its neighbour is gone),
//! which makes TCP retry without backing off (RFC 6069), so its route is swapped for a blackhole
//! while the link is down. (Measured: with those ICMP errors a 60 s partition healed 0.56 s after
//! the link came back. A link down next to an end makes that end's sends fail locally, retried every
//! ~0.5 s: the same.) A blackhole route over the /28 in the root namespace makes sure
//! nothing meant for it ever leaves by this machine's default route.
//!
//! Everything is removed on drop (every exit path, panics included): the three namespaces (which take
//! their veth ends and so the pairs), then the blackhole route. The processes started in the worker's
//! namespace are their own guards' (`super::Guard`, killed by PID), declared after the namespace so
//! they go first. Namespaces left by a test process that was killed outright are removed by the next
//! run (their names carry the PID of the process that made them).

#![allow(dead_code)]

use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

/// The prefix of every namespace this binary makes: `anes-nf-<pid>-<n>`.
const PREFIX: &str = "anes-nf-";

static NEXT_LINK: AtomicU32 = AtomicU32::new(0);

fn ip(args: &[&str]) -> Result<(), String> {
    let output =
        Command::new("ip").args(args).stdin(Stdio::null()).output().map_err(|e| format!("ip: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!("ip {}: {}", args.join(" "), String::from_utf8_lossy(&output.stderr).trim()))
    }
}

/// For a test marked `#[ignore = "needs root and iproute2 ..."]`, run by `--include-ignored`: fails
/// saying why when namespaces cannot be made here (probed once per process).
pub fn require(test: &str) {
    static PROBE: OnceLock<Result<(), String>> = OnceLock::new();
    let probed = PROBE.get_or_init(|| {
        let probe = format!("{PREFIX}{}-probe", std::process::id());
        let result = ip(&["netns", "add", &probe]).and_then(|()| ip(&["netns", "del", &probe]));
        if result.is_ok() {
            remove_orphans();
        }
        result
    });
    if let Err(e) = probed {
        panic!("{test}: network namespaces are needed (root and iproute2): {e}");
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

/// A worker's namespace, reached through two routers' namespaces.
pub struct Netns {
    pub name: String,
    routers: [String; 2],
    /// The worker namespace's address (`10.a.b.10`); the coordinator's end is `10.a.b.1`.
    pub address: String,
    /// The far router's end of the link between the routers.
    far_link: String,
    /// The far router's way back to the coordinator, flushed when that link goes down.
    far_route: [String; 5],
    /// The near router's route to the worker, swapped for a blackhole during a partition.
    near_route: String,
    near_gateway: String,
    subnet: String,
}

impl Netns {
    /// Makes the three namespaces, their veth pairs, addresses and routes, and brings every link up.
    pub fn new() -> Netns {
        let pid = std::process::id();
        let n = NEXT_LINK.fetch_add(1, Ordering::SeqCst);
        // 10.(200 + pid % 50).(n % 16 * 16)/28: distinct per worker in this process, unlikely to meet
        // another run's, and far from anything on this machine's own interfaces.
        let base = format!("10.{}.{}", 200 + pid % 50, (n % 16) * 16);
        let name = format!("{PREFIX}{pid}-{n}");
        let (near, far) = (format!("{name}r"), format!("{name}s"));
        let link = |end: char| format!("nf{}{n}{end}", pid % 100_000);
        let (root_out, near_in, near_out, far_in, far_out, inner) =
            (link('o'), link('p'), link('q'), link('r'), link('s'), link('i'));
        let netns = Netns {
            name: name.clone(),
            routers: [near.clone(), far.clone()],
            address: format!("{base}.10"),
            far_link: far_in.clone(),
            far_route: ["route", "replace", &format!("{base}.0/30"), "via", &format!("{base}.5")]
                .map(String::from),
            near_route: format!("{base}.8/30"),
            near_gateway: format!("{base}.6"),
            subnet: format!("{base}.0/28"),
        };
        let steps: Vec<String> = vec![
            format!("netns add {near}"),
            format!("netns add {far}"),
            format!("netns add {name}"),
            format!("link add {root_out} type veth peer name {near_in} netns {near}"),
            format!("-n {near} link add {near_out} type veth peer name {far_in} netns {far}"),
            format!("-n {far} link add {far_out} type veth peer name {inner} netns {name}"),
            format!("addr add {base}.1/30 dev {root_out}"),
            format!("-n {near} addr add {base}.2/30 dev {near_in}"),
            format!("-n {near} addr add {base}.5/30 dev {near_out}"),
            format!("-n {far} addr add {base}.6/30 dev {far_in}"),
            format!("-n {far} addr add {base}.9/30 dev {far_out}"),
            format!("-n {name} addr add {base}.10/30 dev {inner}"),
            format!("link set {root_out} up"),
            format!("-n {near} link set {near_in} up"),
            format!("-n {near} link set {near_out} up"),
            format!("-n {far} link set {far_in} up"),
            format!("-n {far} link set {far_out} up"),
            format!("-n {name} link set {inner} up"),
            format!("-n {name} link set lo up"),
            format!("route add {base}.0/28 via {base}.2"),
            format!("route add blackhole {base}.0/28 metric 4000"),
            format!("-n {near} route add {base}.8/30 via {base}.6"),
            format!("-n {near} route add blackhole default"),
            format!("-n {far} route add {base}.0/30 via {base}.5"),
            format!("-n {far} route add blackhole default"),
            format!("-n {name} route add default via {base}.9"),
        ];
        for step in &steps {
            if let Err(e) = ip(&step.split(' ').collect::<Vec<_>>()) {
                panic!("setting up namespace {name}: {e}");
            }
        }
        for router in [&near, &far] {
            let forwarding = Command::new("ip")
                .args(["netns", "exec", router, "sysctl", "-qw", "net.ipv4.ip_forward=1"])
                .status()
                .is_ok_and(|s| s.success());
            assert!(forwarding, "enabling forwarding in {router}");
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

    /// Takes the link between the two routers down (the partition) or up again.
    pub fn set_link(&self, up: bool) {
        let [near, far] = &self.routers;
        if up {
            ip(&["-n", far, "link", "set", &self.far_link, "up"]).unwrap();
            // Taking the link down flushed the routes through it.
            let mut args = vec!["-n", far.as_str()];
            args.extend(self.far_route.iter().map(String::as_str));
            ip(&args).unwrap();
            ip(&["-n", near, "route", "replace", &self.near_route, "via", &self.near_gateway]).unwrap();
        } else {
            ip(&["-n", near, "route", "replace", "blackhole", &self.near_route]).unwrap();
            ip(&["-n", far, "link", "set", &self.far_link, "down"]).unwrap();
        }
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        for name in [&self.name, &self.routers[0], &self.routers[1]] {
            let _ = ip(&["netns", "del", name]);
        }
        let _ = ip(&["route", "del", "blackhole", &self.subnet, "metric", "4000"]);
    }
}
