//! Real TCP through `dcfair-switch` between network namespaces (needs root, iproute2, ethtool).
//!
//! Rules:
//! - Builds 2 host namespaces and 1 switch namespace (`dcfsw-test-<pid>-{h1,h2,sw}`, never the
//!   testbed's `dcf-` names) joined by veth pairs, gives each host a static ARP entry with the
//!   other's real MAC (the switch is transparent at layer 2), and turns off transmit checksum
//!   offload and TSO/GSO on the host veths: a packet socket sees the bytes as the sender left
//!   them, so an offloaded (partial) checksum or a 64 KB GSO frame would reach the other host as
//!   such; GRO is off on the switch's veths for the same reason.
//! - Runs the switch with DropTail, then HCF, then DropTail with FairQ (`wscale = "off"`), all
//!   in the `poll` wait mode, then HCF in the `busy` and in the `hybrid` wait modes; each
//!   time moves real TCP bytes over two connections (std `TcpStream`s in threads that entered
//!   the host namespaces with `setns`), checks every byte arrived intact, stops the switch with
//!   SIGTERM, and checks its stats: exit 0, frames in = out + dropped + queued on every port,
//!   rx = forwarded + flooded + malformed + no_route + hairpin, the payload crossed the switch,
//!   and (FairQ) windows were rewritten and the SYN options removed (so Linux answers with a
//!   SYN-ACK without one); that the wait mode ran (`busy` never sleeps, the others do) and that
//!   every received frame had a receive timestamp for the input-delay histogram.
//! - Removes everything it made (a guard deletes the namespaces, which deletes the veths, also
//!   when an assertion fails), and on start removes what a crashed earlier run left behind.
//! - Skips, saying so on stderr, when not root or when namespaces, `ip` or `ethtool` are missing.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const PREFIX: &str = "dcfsw-test-";

fn sh(args: &[&str]) -> Result<String, String> {
    let out = Command::new(args[0]).args(&args[1..]).output().map_err(|e| format!("{}: {e}", args.join(" ")))?;
    if !out.status.success() {
        return Err(format!("{}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Says why the test did not run, on stderr directly (not `eprintln!`, which the test harness
/// captures and hides for a test that returns normally).
fn skip(why: &str) {
    let _ = writeln!(
        std::io::stderr(),"SKIPPED crates/switch/tests/netns.rs: {why} (the real-packet switch test needs root, `ip netns` and ethtool)"
    );
}

/// The namespaces of one test run; dropping it removes them (and the veths in them).
struct Bed {
    ns: [String; 3],
    switch: Option<Child>,
}

impl Drop for Bed {
    fn drop(&mut self) {
        if let Some(c) = self.switch.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
        for n in &self.ns {
            let _ = sh(&["ip", "netns", "del", n]);
        }
    }
}

/// Removes namespaces left by earlier runs whose process is gone.
fn remove_stale() {
    let Ok(list) = sh(&["ip", "netns", "list"]) else { return };
    for line in list.lines() {
        let name = line.split_whitespace().next().unwrap_or("");
        if let Some(rest) = name.strip_prefix(PREFIX) {
            let pid = rest.split('-').next().unwrap_or("");
            if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
                let _ = sh(&["ip", "netns", "del", name]);
            }
        }
    }
}

fn mac(ns: &str, dev: &str) -> String {
    let out = sh(&["ip", "-n", ns, "link", "show", dev]).unwrap();
    let i = out.find("link/ether ").expect("no MAC") + "link/ether ".len();
    out[i..i + 17].to_string()
}

fn build() -> Result<Bed, String> {
    let pid = std::process::id();
    let bed = Bed { ns: ["h1", "h2", "sw"].map(|s| format!("{PREFIX}{pid}-{s}")), switch: None };
    let [h1, h2, sw] = &bed.ns;
    for n in &bed.ns {
        sh(&["ip", "netns", "add", n])?;
    }
    for (h, peer, addr) in [(h1, "p1", "10.199.0.1/24"), (h2, "p2", "10.199.0.2/24")] {
        sh(&["ip", "-n", h, "link", "add", "veth0", "type", "veth", "peer", "name", peer, "netns", sw])?;
        sh(&["ip", "-n", h, "addr", "add", addr, "dev", "veth0"])?;
        sh(&["ip", "-n", h, "link", "set", "veth0", "up"])?;
        sh(&["ip", "-n", h, "link", "set", "lo", "up"])?;
        sh(&["ip", "netns", "exec", h, "ethtool", "-K", "veth0", "tx", "off", "tso", "off", "gso", "off"])?;
        sh(&["ip", "-n", sw, "link", "set", peer, "up"])?;
        sh(&["ip", "netns", "exec", sw, "ethtool", "-K", peer, "gro", "off"])?;
    }
    let (m1, m2) = (mac(h1, "veth0"), mac(h2, "veth0"));
    sh(&["ip", "-n", h1, "neigh", "replace", "10.199.0.2", "lladdr", &m2, "dev", "veth0", "nud", "permanent"])?;
    sh(&["ip", "-n", h2, "neigh", "replace", "10.199.0.1", "lladdr", &m1, "dev", "veth0", "nud", "permanent"])?;
    Ok(bed)
}

/// The byte at offset `i` of connection `c` (so a reordered or altered byte is caught).
fn pattern(c: usize, i: usize) -> u8 {
    ((i * 31 + c * 7 + i / 997) % 251) as u8
}

/// Moves `bytes` over each of `conns` connections from h1 to h2; returns bytes received intact.
fn transfer(bed: &Bed, conns: usize, bytes: usize, port: u16) -> Vec<usize> {
    let (h1, h2) = (format!("/var/run/netns/{}", bed.ns[0]), format!("/var/run/netns/{}", bed.ns[1]));
    let (tx_ready, rx_ready) = std::sync::mpsc::channel();
    let server = std::thread::spawn(move || {
        dcfair_switch::sock::enter_netns(&h2).expect("setns h2");
        let l = TcpListener::bind(("10.199.0.2", port)).expect("bind");
        tx_ready.send(()).unwrap();
        let mut handles = Vec::new();
        for _ in 0..conns {
            let (mut s, _) = l.accept().expect("accept");
            s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
            handles.push(std::thread::spawn(move || {
                let mut id = [0u8; 1];
                s.read_exact(&mut id).unwrap();
                let c = id[0] as usize;
                let mut good = 0usize;
                let mut buf = vec![0u8; 65536];
                let mut off = 0usize;
                loop {
                    let n = match s.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    for &b in &buf[..n] {
                        if b == pattern(c, off) {
                            good += 1;
                        }
                        off += 1;
                    }
                }
                (c, good)
            }));
        }
        let mut res = vec![0; conns];
        for h in handles {
            let (c, g) = h.join().unwrap();
            res[c] = g;
        }
        res
    });
    rx_ready.recv_timeout(Duration::from_secs(10)).expect("server did not start");
    let clients: Vec<_> = (0..conns)
        .map(|c| {
            let h1 = h1.clone();
            std::thread::spawn(move || {
                dcfair_switch::sock::enter_netns(&h1).expect("setns h1");
                let mut s = TcpStream::connect_timeout(&(std::net::Ipv4Addr::new(10, 199, 0, 2), port).into(), Duration::from_secs(10))
                    .expect("connect through the switch");
                s.set_write_timeout(Some(Duration::from_secs(30))).unwrap();
                s.write_all(&[c as u8]).unwrap();
                let data: Vec<u8> = (0..bytes).map(|i| pattern(c, i)).collect();
                s.write_all(&data).unwrap();
                s.shutdown(std::net::Shutdown::Write).unwrap();
                // wait for the receiver to close, so every byte is acknowledged
                let mut sink = [0u8; 16];
                let _ = s.read(&mut sink);
            })
        })
        .collect();
    for c in clients {
        c.join().unwrap();
    }
    server.join().unwrap()
}

fn start_switch(bed: &mut Bed, config: &str, dir: &std::path::Path) -> std::path::PathBuf {
    let cfg = dir.join("switch.toml");
    let stats = dir.join("stats.json");
    let _ = std::fs::remove_file(&stats);
    std::fs::write(&cfg, config).unwrap();
    let mut child = Command::new("ip")
        .args(["netns", "exec", &bed.ns[2], env!("CARGO_BIN_EXE_dcfair-switch"), "--config"])
        .arg(&cfg)
        .arg("--stats")
        .arg(&stats)
        .stdout(Stdio::piped())
        .spawn()
        .expect("start dcfair-switch");
    let out = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(out).read_line(&mut line);
        let _ = tx.send(line);
    });
    bed.switch = Some(child);
    let line = rx.recv_timeout(Duration::from_secs(10)).expect("switch did not say ready");
    assert_eq!(line.trim(), "ready");
    stats
}

fn stop_switch(bed: &mut Bed, stats: &std::path::Path) -> serde_json::Value {
    let mut child = bed.switch.take().unwrap();
    // through kill(1): no unsafe needed here
    sh(&["kill", "-TERM", &child.id().to_string()]).unwrap();
    let t = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(t.elapsed() < Duration::from_secs(10), "switch did not exit on SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "switch exited with {status}");
    serde_json::from_str(&std::fs::read_to_string(stats).unwrap()).unwrap()
}

fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// The stats identities of `switch.rs`, on every port.
fn check_stats(doc: &serde_json::Value, kind: &str, payload: usize) {
    let ports = doc["ports"].as_array().unwrap();
    for p in ports {
        let q = &p["queue"];
        assert_eq!(q["kind"], kind);
        assert_eq!(
            u(&q["received_pkts"]),
            u(&p["tx_frames"]) + u(&p["tx_errors"]) + u(&q["drops_pkts"]) + u(&q["queued_pkts"]) + u(&q["in_delay_line"]),
            "frames in != out + dropped + queued at {}",
            p["iface"]
        );
        assert_eq!(
            u(&p["rx_frames"]),
            u(&p["forwarded"]) + u(&p["flooded"]) + u(&p["malformed_total"]) + u(&p["no_route"]) + u(&p["hairpin"]),
            "rx frames not all accounted for at {}",
            p["iface"]
        );
        assert_eq!(u(&p["tx_errors"]), 0, "send errors at {}", p["iface"]);
    }
    // the payload crossed from p1 to p2: p2 sent at least the payload (plus headers)
    assert_eq!(ports[1]["iface"], "p2");
    assert!(u(&ports[1]["tx_bytes"]) >= payload as u64, "p2 sent {} bytes < payload {payload}", ports[1]["tx_bytes"]);
    assert!(u(&ports[0]["forwarded"]) > (payload / 1500) as u64);
    assert!(u(&ports[1]["forwarded"]) > 0, "no ACK crossed back");
}

fn config(kind: &str, fairq: bool, wait: &str) -> String {
    let fq = if fairq { "[fairq]\nwscale = \"off\"\n" } else { "" };
    let port = |iface: &str, pre: &str| {
        format!("[[port]]\niface = \"{iface}\"\nprefixes = [\"{pre}\"]\nrate_bps = 50e6\ndelay_us = 100\n[port.queue]\nkind = \"{kind}\"\nlimit_pkts = 50\n")
    };
    format!("seed = 3\nwait = \"{wait}\"\n{fq}{}{}", port("p1", "10.199.0.1/32"), port("p2", "10.199.0.2/32"))
}

#[test]
fn real_tcp_through_droptail_hcf_and_fairq() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return skip("not root");
    }
    for tool in ["ip", "ethtool"] {
        if Command::new(tool).arg("-V").output().is_err() && Command::new(tool).arg("--version").output().is_err() {
            return skip(&format!("`{tool}` not found"));
        }
    }
    remove_stale();
    let mut bed = match build() {
        Ok(b) => b,
        Err(e) => return skip(&format!("could not build the namespaces: {e}")),
    };
    let dir = std::env::temp_dir().join(format!("{PREFIX}{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (conns, bytes) = (2, 1_500_000);
    let runs = [("droptail", false, "poll"), ("hcf", false, "poll"), ("droptail", true, "poll"), ("hcf", false, "busy"), ("hcf", false, "hybrid")];
    for (i, (kind, fairq, wait)) in runs.into_iter().enumerate() {
        let stats = start_switch(&mut bed, &config(kind, fairq, wait), &dir);
        let got = transfer(&bed, conns, bytes, 15201 + i as u16);
        let doc = stop_switch(&mut bed, &stats);
        assert_eq!(got, vec![bytes; conns], "{kind} fairq={fairq}: bytes lost or altered");
        check_stats(&doc, kind, conns * bytes);
        // the wait mode ran, and the latency figures saw every frame (receive timestamps on)
        assert_eq!(doc["wait"], wait);
        assert_eq!(doc["arrival"], "kernel", "the default arrival time");
        assert_eq!(u(&doc["sleeps"]) == 0, wait == "busy", "{wait}: {} sleeps", doc["sleeps"]);
        let rx: u64 = doc["ports"].as_array().unwrap().iter().map(|p| u(&p["rx_frames"])).sum();
        assert_eq!(u(&doc["rx_delay"]["count"]) + u(&doc["rx_delay"]["negative"]), rx, "a frame without a receive timestamp");
        assert!(u(&doc["tx_late"]["count"]) > 0, "no frame waited in the 100 us delay line");
        if fairq {
            assert!(u(&doc["fairq_rewrites"]) > 0, "FairQ rewrote no window");
            let p1 = &doc["ports"][0]["fairq"];
            let p2 = &doc["ports"][1]["fairq"];
            assert!(u(&p2["window_rewrites"]) > 0, "ACKs from h2 not rewritten");
            // the SYNs (entering through p1) lose their option; by RFC 7323 the SYN-ACKs then carry none
            assert!(u(&p1["wscale_rewrites"]) >= conns as u64, "SYN options not removed: {p1}");
            assert_eq!(u(&p2["wscale_rewrites"]), 0, "a SYN-ACK carried a window-scale option the SYN no longer had: {p2}");
        } else {
            assert!(doc["ports"][0]["fairq"].is_null());
        }
        eprintln!(
            "{kind} fairq={fairq} wait={wait}: input delay p50/p99 {}/{} us, timers late p50/p99 {}/{} us, CPU {:.2} s",
            doc["rx_delay"]["p50_us"],
            doc["rx_delay"]["p99_us"],
            doc["tx_late"]["p50_us"],
            doc["tx_late"]["p99_us"],
            doc["cpu_user_s"].as_f64().unwrap() + doc["cpu_sys_s"].as_f64().unwrap()
        );
        eprintln!(
            "{kind} fairq={fairq}: p2 tx {} frames, drops {}, max queue {} pkts, rewrites {}",
            doc["ports"][1]["tx_frames"],
            doc["ports"][1]["queue"]["drops_pkts"],
            doc["ports"][1]["queue"]["max_len_pkts"],
            doc["fairq_rewrites"]
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    drop(bed);
    let left = sh(&["ip", "netns", "list"]).unwrap_or_default();
    assert!(!left.contains(&format!("{PREFIX}{}-", std::process::id())), "namespaces left behind: {left}");
}
