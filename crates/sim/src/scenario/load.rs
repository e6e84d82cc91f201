//! Loading a scenario: TOML text, dotted-key overrides, per-group TCP, TCP profiles, then the
//! typed [`Scenario`], validated, its CDF file read, and admitted.
//!
//! Rules:
//! - A scenario is a TOML document. It is parsed into a generic tree, `--set KEY=VALUE`
//!   overrides are applied to the tree by dotted path (creating tables as needed), and only then
//!   is the tree deserialized into [`Scenario`]. Unknown keys and wrong types are rejected with
//!   the full dotted path (`serde_path_to_error`), so a typo in `--set` is caught like one in
//!   the file.
//! - Override values are TOML literals (`20`, `0.5`, `true`, `"x"`, `[1, 2]`); anything that is
//!   not a valid literal is taken as a string, so `--set queue.kind=hcf` works unquoted.
//! - **Per-group TCP.** `[flows]` and every `[groups.NAME]` may hold a partial `tcp` table
//!   (`[groups.mice.tcp] cc = "cubic"`). After the overrides, and before deserialization,
//!   each such table is merged over a copy of the scenario's `[tcp]` in the tree (its keys
//!   win, the others are inherited, sub-tables merge key by key), so a group's TCP is
//!   deserialized, checked for unknown keys and validated like `[tcp]` itself, and errors
//!   name the group's full path (`groups.mice.tcp.cubic_beta`). `--set
//!   groups.mice.tcp.cc=cubic` creates the table like any other override. The scenario's
//!   `[tcp]` is checked first on its own, so a bad key there is named `tcp.KEY`, not after
//!   the first group that inherited it. Groups without a `tcp` table use `[tcp]`
//!   ([`Scenario::tcp_of`]).
//! - **TCP profiles** (`tcp.profile = "pfabric"`, `tcp.profile_categories`): after the groups
//!   have inherited `[tcp]`, every `tcp` table (`[tcp]`, `flows.tcp`, `groups.NAME.tcp`) that
//!   names a profile gets the profile's keys of the chosen categories inserted where the table
//!   does not set them (`dcfair_core::tcp::profile`), so keys written in the scenario, by
//!   `--set` or inherited from `[tcp]`, win. A value that depends on the buffer (`max_cwnd_pkts`
//!   = queue - 1) reads `queue.limit_pkts` (or `limit_bytes` over one full segment, or the
//!   default 100). A bad profile or category names `….tcp.profile` / `….tcp.profile_categories`.
//! - Every quantity carries its unit in its key name (`_s`, `_ms`, `_us`, `_mbps`, `_bytes`,
//!   `_pkts`). After deserialization [`Scenario::validate`] (`validate.rs`) checks values
//!   (positive rates, windows inside the run, ...) and names the key on failure; then the
//!   Poisson CDF file is read ([`PoissonConfig::prepare`](super::poisson::PoissonConfig::prepare))
//!   and the scenario's memory need is held against the machine's (`admission.rs`). Nothing
//!   runs before that.
//! - Imports nothing of this crate but the error type and the config layer.

use super::admission::admit;
use super::schema::{default_name, Scenario};
use crate::error::Error;
use dcfair_core::tcp::TcpConfig;

/// Parses a TOML scenario, applies overrides, deserializes and validates it.
pub fn load(text: &str, origin: &str, overrides: &[(String, String)]) -> Result<Scenario, Error> {
    let mut tree: toml::Value = toml::from_str(text).map_err(|e| {
        Error::invalid(origin, format!("not valid TOML: {}", e.message().trim()) + &locate(text, e.span()))
    })?;
    for (key, value) in overrides {
        apply_override(&mut tree, key, value)?;
    }
    inherit_tcp(&mut tree)?;
    apply_tcp_profiles(&mut tree)?;
    let mut sc: Scenario = serde_path_to_error::deserialize(tree).map_err(|e| {
        let path = e.path().to_string();
        let top = path == "." || path.is_empty();
        let message = tidy_serde_message(&e.inner().to_string());
        // A missing key is named by its own path, not its table's: `measure.trace.port`.
        if let Some(field) = message.strip_prefix("missing field `").and_then(|m| m.strip_suffix('`')) {
            let key = if top { field.to_string() } else { format!("{path}.{field}") };
            return Error::invalid(key, "required, and missing");
        }
        Error::invalid(if top { origin.to_string() } else { path }, message)
    })?;
    if sc.name == default_name() {
        if let Some(stem) = std::path::Path::new(origin).file_stem().and_then(|s| s.to_str()) {
            sc.name = stem.to_string();
        }
    }
    sc.validate().map_err(|e| Error::invalid(e.key, e.reason))?;
    if let Some(p) = sc.poisson.as_mut() {
        p.prepare(origin)?;
    }
    // too large for this machine: refused now, before anything of its size is built
    admit(&sc)?;
    Ok(sc)
}

/// Merges every group's `tcp` table (`flows.tcp`, `groups.NAME.tcp`) over a copy of the
/// top-level `tcp` table, in place. The top-level table is checked first (as a [`TcpConfig`]),
/// so its errors are named `tcp.KEY` even though groups inherit its keys.
fn inherit_tcp(tree: &mut toml::Value) -> Result<(), Error> {
    let Some(root) = tree.as_table_mut() else { return Ok(()) };
    let base = match root.get("tcp") {
        Some(toml::Value::Table(t)) => t.clone(),
        Some(_) => return Ok(()), // not a table: deserialization names `tcp`
        None => toml::Table::new(),
    };
    let mut group_tables: Vec<&mut toml::Table> = Vec::new();
    for (k, v) in root.iter_mut() {
        match (k.as_str(), v) {
            ("flows", toml::Value::Table(f)) => group_tables.push(f),
            ("groups", toml::Value::Table(gs)) => group_tables.extend(gs.iter_mut().filter_map(|(_, g)| g.as_table_mut())),
            _ => {}
        }
    }
    let mut merging = group_tables.into_iter().filter_map(|g| match g.get_mut("tcp") {
        Some(toml::Value::Table(t)) => Some(t),
        _ => None, // absent, or not a table (deserialization names it)
    });
    let Some(first) = merging.next() else { return Ok(()) };
    serde_path_to_error::deserialize::<_, TcpConfig>(toml::Value::Table(base.clone())).map_err(|e| {
        let path = e.path().to_string();
        let key = if path == "." || path.is_empty() { "tcp".to_string() } else { format!("tcp.{path}") };
        Error::invalid(key, tidy_serde_message(&e.inner().to_string()))
    })?;
    for t in std::iter::once(first).chain(merging) {
        let own = std::mem::take(t);
        *t = base.clone();
        merge_table(t, own);
    }
    Ok(())
}

/// Applies `tcp.profile` to every `tcp` table of the tree (module rules).
fn apply_tcp_profiles(tree: &mut toml::Value) -> Result<(), Error> {
    let Some(root) = tree.as_table_mut() else { return Ok(()) };
    let queue = root.get("queue").and_then(|q| q.as_table());
    let pkts = queue.and_then(|q| q.get("limit_pkts")).and_then(|v| v.as_integer());
    let bytes = queue.and_then(|q| q.get("limit_bytes")).and_then(|v| v.as_integer());
    let mut tables: Vec<(String, &mut toml::Table)> = Vec::new();
    for (k, v) in root.iter_mut() {
        match (k.as_str(), v) {
            ("tcp", toml::Value::Table(t)) => tables.push(("tcp".into(), t)),
            ("flows", toml::Value::Table(f)) => {
                if let Some(toml::Value::Table(t)) = f.get_mut("tcp") {
                    tables.push(("flows.tcp".into(), t));
                }
            }
            ("groups", toml::Value::Table(gs)) => {
                for (name, g) in gs.iter_mut() {
                    if let Some(toml::Value::Table(t)) = g.as_table_mut().and_then(|g| g.get_mut("tcp")) {
                        tables.push((format!("groups.{name}.tcp"), t));
                    }
                }
            }
            _ => {}
        }
    }
    for (path, t) in tables {
        apply_profile(t, &path, pkts, bytes)?;
    }
    Ok(())
}

/// Fills `t` (the `tcp` table at `path`) from its profile, if it names one.
fn apply_profile(t: &mut toml::Table, path: &str, queue_pkts: Option<i64>, queue_bytes: Option<i64>) -> Result<(), Error> {
    use dcfair_core::tcp::profile::{self, ProfileCategory, ProfileValue, TcpProfile};
    let Some(v) = t.get("profile") else { return Ok(()) };
    let key = format!("{path}.profile");
    let name = v.as_str().ok_or_else(|| Error::invalid(&key, "must be a string (\"pfabric\")"))?;
    let prof = TcpProfile::from_name(name).ok_or_else(|| {
        Error::invalid(&key, format!("unknown profile '{name}' (known: {})", TcpProfile::NAMES.join(", ")))
    })?;
    let ckey = format!("{path}.profile_categories");
    let cats: Vec<ProfileCategory> = match t.get("profile_categories") {
        None => ProfileCategory::ALL.to_vec(),
        Some(toml::Value::Array(a)) => a
            .iter()
            .map(|c| c.as_str().and_then(ProfileCategory::from_name))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| {
                Error::invalid(&ckey, format!("each category must be one of {}", ProfileCategory::NAMES.join(", ")))
            })?,
        Some(_) => return Err(Error::invalid(&ckey, "must be a list such as [\"rtx\", \"rx\", \"cc\"]")),
    };
    let int = |t: &toml::Table, k: &str, d: i64| t.get(k).and_then(|v| v.as_integer()).unwrap_or(d);
    for s in profile::settings(prof).iter().filter(|s| cats.contains(&s.category)) {
        if t.contains_key(s.key) {
            continue; // set in the scenario: it wins
        }
        let value = match s.value {
            ProfileValue::Float(x) => toml::Value::Float(x),
            ProfileValue::Int(n) => toml::Value::Integer(n as i64),
            ProfileValue::QueueMinusOne => {
                let seg = int(t, "mss_bytes", 1460) + int(t, "header_bytes", 40);
                let q = queue_pkts.or(queue_bytes.map(|b| b / seg.max(1))).unwrap_or(100);
                let init = int(t, "init_cwnd_pkts", 2);
                toml::Value::Integer(profile::queue_minus_one(q.max(0) as u64, init.max(0) as u64) as i64)
            }
        };
        t.insert(s.key.to_string(), value);
    }
    Ok(())
}

/// Puts every key of `over` into `into`; where both hold a table, merges them key by key.
fn merge_table(into: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (into.get_mut(&k), v) {
            (Some(toml::Value::Table(a)), toml::Value::Table(b)) => merge_table(a, b),
            (_, v) => {
                into.insert(k, v);
            }
        }
    }
}

fn locate(text: &str, span: Option<std::ops::Range<usize>>) -> String {
    match span {
        Some(r) => {
            let line = text[..r.start.min(text.len())].matches('\n').count() + 1;
            format!(" (line {line})")
        }
        None => String::new(),
    }
}

fn tidy_serde_message(m: &str) -> String {
    // toml's messages may carry a trailing newline or a "TOML parse error" prefix with a span dump.
    m.lines().next().unwrap_or(m).trim().to_string()
}

/// Sets `key` (dotted path) in `tree` to `value` parsed as a TOML literal (bare words: strings).
pub fn apply_override(tree: &mut toml::Value, key: &str, value: &str) -> Result<(), Error> {
    if key.is_empty() || key.split('.').any(|p| p.is_empty()) {
        return Err(Error::invalid(key, "an override key must be a dotted path such as queue.kind"));
    }
    let parsed = parse_literal(value);
    let parts: Vec<&str> = key.split('.').collect();
    let mut cur = tree;
    for (i, part) in parts.iter().enumerate() {
        let table = match cur {
            toml::Value::Table(t) => t,
            _ => {
                return Err(Error::invalid(parts[..i].join("."), format!("is not a table, so {key} cannot be set")))
            }
        };
        if i == parts.len() - 1 {
            table.insert(part.to_string(), parsed);
            return Ok(());
        }
        cur = table.entry(part.to_string()).or_insert_with(|| toml::Value::Table(Default::default()));
    }
    unreachable!("loop returns on the last part")
}

fn parse_literal(value: &str) -> toml::Value {
    let doc = format!("v = {value}");
    match toml::from_str::<toml::Table>(&doc) {
        Ok(mut t) => t.remove("v").unwrap_or_else(|| toml::Value::String(value.to_string())),
        Err(_) => toml::Value::String(value.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::schema::TieBreak;
    use dcfair_core::tcp::CcKind;

    const MINI: &str = r#"
        name = "mini"
        [sim]
        duration_s = 1.0
        [topology]
        kind = "dumbbell"
        senders = 2
        access_rate_mbps = 1000.0
        access_delay_us = 10.0
        bottleneck_rate_mbps = 100.0
        bottleneck_delay_us = 10.0
        [queue]
        kind = "droptail"
        limit_pkts = 20
        [flows]
        count = 2
    "#;

    fn ov(k: &str, v: &str) -> (String, String) {
        (k.to_string(), v.to_string())
    }

    fn err_key(r: Result<Scenario, Error>) -> String {
        match r {
            Err(Error::Invalid { key, .. }) => key,
            other => panic!("expected invalid input, got {other:?}"),
        }
    }

    // --- parsing and overrides ----------------------------------------------------------
    #[test]
    fn loads_and_overrides() {
        let sc = load(MINI, "mini.toml", &[ov("queue.kind", "red"), ov("sim.duration_s", "2"), ov("seed", "9")]).unwrap();
        assert_eq!(sc.queue.kind, dcfair_core::qdisc::QdiscKind::Red);
        assert_eq!(sc.sim.duration_s, 2.0);
        assert_eq!(sc.seed, 9);
        assert_eq!(sc.window_s(), 2.0);
    }

    #[test]
    fn override_creates_missing_tables() {
        let sc = load(MINI, "mini.toml", &[ov("measure.window_s", "0.5"), ov("udp.rate_fraction", "0.1")]).unwrap();
        assert_eq!(sc.window_s(), 0.5);
        assert_eq!(sc.udp.unwrap().rate_fraction, 0.1);
    }

    // --- errors name the key ------------------------------------------------------------
    #[test]
    fn unknown_key_names_its_path() {
        assert_eq!(err_key(load(MINI, "m.toml", &[ov("queue.limt_pkts", "3")])), "queue.limt_pkts");
        assert_eq!(err_key(load(MINI, "m.toml", &[ov("bogus", "3")])), "bogus");
        let k = err_key(load(MINI, "m.toml", &[ov("topology.sendrs", "3")]));
        assert!(k.starts_with("topology"), "{k}");
    }

    #[test]
    fn missing_key_names_its_own_path() {
        assert_eq!(err_key(load(MINI, "m.toml", &[ov("groups.mice.size_pkts", "5")])), "groups.mice.count");
        assert_eq!(err_key(load(MINI, "m.toml", &[ov("measure.trace.start_s", "0.1")])), "measure.trace.port");
        assert_eq!(err_key(load("[topology]\nkind = \"dumbbell\"\n", "m.toml", &[])), "topology.senders");
    }

    #[test]
    fn wrong_type_names_its_path() {
        assert_eq!(err_key(load(MINI, "m.toml", &[ov("flows.count", "many")])), "flows.count");
        assert_eq!(err_key(load(MINI, "m.toml", &[ov("queue.kind", "fifo")])), "queue.kind");
    }

    #[test]
    fn impossible_values_name_their_key() {
        assert_eq!(err_key(load(MINI, "m.toml", &[ov("topology.bottleneck_rate_mbps", "-100")])), "topology.bottleneck_rate_mbps");
        assert_eq!(err_key(load(MINI, "m.toml", &[ov("topology.access_rate_mbps", "0")])), "topology.access_rate_mbps");
        assert_eq!(err_key(load(MINI, "m.toml", &[ov("sim.duration_s", "0")])), "sim.duration_s");
        assert_eq!(err_key(load(MINI, "m.toml", &[ov("measure.window_s", "5")])), "measure.window_s");
        assert_eq!(err_key(load(MINI, "m.toml", &[ov("queue.limit_pkts", "0")])), "queue.limit_pkts");
        assert_eq!(err_key(load(MINI, "m.toml", &[ov("tcp.mss_bytes", "0")])), "tcp.mss_bytes");
        assert_eq!(err_key(load(MINI, "m.toml", &[ov("tcp.min_rto_ms", "-1")])), "tcp.min_rto_ms");
        assert_eq!(err_key(load(MINI, "m.toml", &[ov("queue.red.max_p", "2")])), "queue.red.max_p");
    }

    #[test]
    fn bad_toml_names_the_file_and_line() {
        match load("[sim\nduration_s = 1", "bad.toml", &[]) {
            Err(Error::Invalid { key, reason }) => {
                assert_eq!(key, "bad.toml");
                assert!(reason.contains("line 1"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn override_through_a_value_is_rejected() {
        assert_eq!(err_key(load(MINI, "m.toml", &[ov("seed.x", "1")])), "seed");
    }

    // --- TCP profiles ---------------------------------------------------------------------------
    fn with_profile(extra: &[(&str, &str)]) -> Result<Scenario, Error> {
        let mut ov = vec![ov("tcp.profile", "pfabric")];
        ov.extend(extra.iter().map(|(k, v)| self::ov(k, v)));
        load(MINI, "m.toml", &ov)
    }

    #[test]
    fn each_profile_category_sets_exactly_its_keys() {
        let d = TcpConfig::default();
        let all = with_profile(&[]).unwrap().tcp;
        assert_eq!((all.min_rto_ms, all.max_rto_s, all.initial_rto_s, all.clock_granularity_us), (0.045, 2.0, 0.000045, 1.0));
        assert_eq!((all.delack_timeout_ms, all.rcv_buf_bytes), (0.006, dcfair_core::tcp::MAX_SCALED_WINDOW));
        // queue of 20 packets: max cwnd 19 (above the initial 12)
        assert_eq!((all.init_cwnd_pkts, all.max_cwnd_pkts), (12, 19));
        // the profile touches nothing else
        assert_eq!((all.cc, all.priority, all.delayed_ack, all.sack), (d.cc, d.priority, d.delayed_ack, d.sack));
        let rtx = with_profile(&[("tcp.profile_categories", "[\"rtx\"]")]).unwrap().tcp;
        assert_eq!((rtx.min_rto_ms, rtx.max_rto_s, rtx.initial_rto_s, rtx.clock_granularity_us), (0.045, 2.0, 0.000045, 1.0));
        assert_eq!((rtx.delack_timeout_ms, rtx.rcv_buf_bytes, rtx.init_cwnd_pkts, rtx.max_cwnd_pkts), (d.delack_timeout_ms, d.rcv_buf_bytes, d.init_cwnd_pkts, 0));
        let rx = with_profile(&[("tcp.profile_categories", "[\"rx\"]")]).unwrap().tcp;
        assert_eq!((rx.delack_timeout_ms, rx.rcv_buf_bytes), (0.006, dcfair_core::tcp::MAX_SCALED_WINDOW));
        assert_eq!((rx.min_rto_ms, rx.initial_rto_s, rx.init_cwnd_pkts, rx.max_cwnd_pkts), (d.min_rto_ms, d.initial_rto_s, d.init_cwnd_pkts, 0));
        let cc = with_profile(&[("tcp.profile_categories", "[\"cc\"]")]).unwrap().tcp;
        assert_eq!((cc.init_cwnd_pkts, cc.max_cwnd_pkts), (12, 19));
        assert_eq!((cc.min_rto_ms, cc.delack_timeout_ms, cc.rcv_buf_bytes), (d.min_rto_ms, d.delack_timeout_ms, d.rcv_buf_bytes));
        let none = with_profile(&[("tcp.profile_categories", "[]")]).unwrap().tcp;
        assert_eq!((none.min_rto_ms, none.init_cwnd_pkts, none.max_cwnd_pkts), (d.min_rto_ms, d.init_cwnd_pkts, 0));
        // a small buffer: the cap is the initial window, as the pFabric scripts do
        let small = with_profile(&[("queue.limit_pkts", "8")]).unwrap().tcp;
        assert_eq!(small.max_cwnd_pkts, 12);
    }

    #[test]
    fn explicit_keys_win_over_the_profile() {
        let t = with_profile(&[("tcp.min_rto_ms", "1.0"), ("tcp.init_cwnd_pkts", "4")]).unwrap().tcp;
        assert_eq!((t.min_rto_ms, t.init_cwnd_pkts, t.max_rto_s), (1.0, 4, 2.0));
        // the cap follows the initial window in force (queue 20: 19)
        assert_eq!(t.max_cwnd_pkts, 19);
        let t = with_profile(&[("tcp.max_cwnd_pkts", "0")]).unwrap().tcp;
        assert_eq!(t.max_cwnd_pkts, 0);
        // a group: its own profile and keys, over what it inherits from [tcp]
        let sc = load(
            MINI,
            "m.toml",
            &[ov("tcp.min_rto_ms", "5.0"), ov("flows.tcp.profile", "pfabric"), ov("flows.tcp.profile_categories", "[\"rtx\", \"cc\"]")],
        )
        .unwrap();
        let f = sc.flows.as_ref().unwrap().tcp.as_ref().unwrap();
        assert_eq!((f.min_rto_ms, f.initial_rto_s, f.init_cwnd_pkts, f.delack_timeout_ms), (5.0, 0.000045, 12, 40.0));
        assert_eq!(sc.tcp.init_cwnd_pkts, 2, "[tcp] itself names no profile");
    }

    #[test]
    fn bad_profiles_name_their_key() {
        assert_eq!(err_key(with_profile(&[("tcp.profile", "fabric")])), "tcp.profile");
        assert_eq!(err_key(with_profile(&[("tcp.profile", "3")])), "tcp.profile");
        assert_eq!(err_key(with_profile(&[("tcp.profile_categories", "[\"rtx\", \"tx\"]")])), "tcp.profile_categories");
        assert_eq!(err_key(with_profile(&[("tcp.profile_categories", "rtx")])), "tcp.profile_categories");
        assert_eq!(err_key(load(MINI, "m.toml", &[ov("flows.tcp.profile", "x")])), "flows.tcp.profile");
        assert_eq!(err_key(load(MINI, "m.toml", &[ov("tcp.pfabric_probe_after", "0")])), "tcp.pfabric_probe_after");
        assert_eq!(err_key(load(MINI, "m.toml", &[ov("tcp.priority", "size")])), "tcp.priority");
    }

    #[test]
    fn groups_are_validated_with_their_path() {
        let sc = load(MINI, "m.toml", &[ov("groups.mice.count", "5"), ov("groups.mice.size_pkts", "10")]).unwrap();
        let g = sc.flow_groups();
        assert_eq!(g.len(), 2);
        assert_eq!(g[1].0, "mice");
        assert_eq!(g[1].1.size(1460), Some(14600));
        assert_eq!(err_key(load(MINI, "m.toml", &[ov("groups.mice.count", "5"), ov("groups.mice.size_pkts", "0")])), "groups.mice.size_pkts");
        assert_eq!(err_key(load(MINI, "m.toml", &[ov("flows.start_max_s", "-1")])), "flows.start_max_s");
        assert_eq!(err_key(load(MINI, "m.toml", &[ov("groups.mice.cnt", "5")])), "groups.mice.cnt");
    }

    // --- per-group TCP -----------------------------------------------------------------------
    #[test]
    fn a_group_tcp_table_is_merged_over_the_scenario_tcp() {
        let text = format!(
            "{MINI}\n[tcp]\ncc = \"reno\"\nmss_bytes = 1000\n[groups.two_hop]\ncount = 1\n[groups.two_hop.tcp]\ncc = \"cubic\"\ncubic_beta = 0.8\n"
        );
        let sc = load(&text, "m.toml", &[]).unwrap();
        let g = &sc.groups["two_hop"];
        let t = sc.tcp_of(g);
        assert_eq!((t.cc, t.cubic_beta, t.mss_bytes), (CcKind::Cubic, 0.8, 1000), "own keys win, the rest is inherited");
        assert_eq!(t.header_bytes, 40, "defaults where neither table says");
        // [flows] has no table: the scenario's [tcp]
        let f = sc.flows.as_ref().unwrap();
        assert!(f.tcp.is_none());
        assert_eq!(sc.tcp_of(f).cc, CcKind::Reno);
        // an override of [tcp] reaches the groups that do not set the key
        let sc = load(&text, "m.toml", &[ov("tcp.mss_bytes", "1200")]).unwrap();
        assert_eq!(sc.tcp_of(&sc.groups["two_hop"]).mss_bytes, 1200);
        // size_pkts counts the group's segments
        let sc = load(&text, "m.toml", &[ov("groups.two_hop.size_pkts", "3"), ov("groups.two_hop.tcp.mss_bytes", "500")]).unwrap();
        let g = &sc.groups["two_hop"];
        assert_eq!(g.size(sc.tcp_of(g).mss_bytes), Some(1500));
    }

    #[test]
    fn set_creates_a_group_tcp_table() {
        let sc = load(MINI, "m.toml", &[ov("groups.x.count", "2"), ov("groups.x.tcp.cc", "cubic"), ov("flows.tcp.cubic_c", "0.1")]).unwrap();
        assert_eq!(sc.tcp_of(&sc.groups["x"]).cc, CcKind::Cubic);
        let f = sc.flows.as_ref().unwrap();
        assert_eq!((sc.tcp_of(f).cc, sc.tcp_of(f).cubic_c), (CcKind::Newreno, 0.1));
        assert_eq!(sc.tcp.cubic_c, 0.4, "the scenario's [tcp] is untouched");
    }

    #[test]
    fn bad_group_tcp_values_name_the_full_key() {
        let g = |k: &str, v: &str| vec![ov("groups.two_hop.count", "1"), ov(&format!("groups.two_hop.tcp.{k}"), v)];
        // validate(): out of range
        assert_eq!(err_key(load(MINI, "m.toml", &g("cubic_beta", "1.5"))), "groups.two_hop.tcp.cubic_beta");
        assert_eq!(err_key(load(MINI, "m.toml", &g("cubic_c", "0"))), "groups.two_hop.tcp.cubic_c");
        assert_eq!(err_key(load(MINI, "m.toml", &g("mss_bytes", "0"))), "groups.two_hop.tcp.mss_bytes");
        assert_eq!(err_key(load(MINI, "m.toml", &[ov("flows.tcp.cubic_beta", "0")])), "flows.tcp.cubic_beta");
        // deserialization: wrong type, unknown option value, unknown key
        assert_eq!(err_key(load(MINI, "m.toml", &g("cubic_beta", "high"))), "groups.two_hop.tcp.cubic_beta");
        assert_eq!(err_key(load(MINI, "m.toml", &g("cc", "vegas"))), "groups.two_hop.tcp.cc");
        assert_eq!(err_key(load(MINI, "m.toml", &g("cubic_betta", "0.7"))), "groups.two_hop.tcp.cubic_betta");
        assert_eq!(err_key(load(MINI, "m.toml", &[ov("groups.two_hop.count", "1"), ov("groups.two_hop.tcp", "3")])), "groups.two_hop.tcp");
        // a combination that only the merged table has: the group's key is named
        let ns2 = [ov("tcp.handshake", "false"), ov("tcp.headerless_first_segment", "true")];
        load(MINI, "m.toml", &ns2).unwrap();
        let mut both = ns2.to_vec();
        both.extend(g("handshake", "true"));
        assert_eq!(err_key(load(MINI, "m.toml", &both)), "groups.two_hop.tcp.headerless_first_segment");
    }

    #[test]
    fn a_bad_scenario_tcp_key_is_named_at_tcp_even_when_groups_inherit_it() {
        let g = [ov("groups.a.count", "1"), ov("groups.a.tcp.cc", "cubic")];
        for (k, v) in [("tcp.bogus", "1"), ("tcp.mss_bytes", "\"big\""), ("tcp.cc", "vegas")] {
            let mut o = g.to_vec();
            o.push(ov(k, v));
            assert_eq!(err_key(load(MINI, "m.toml", &o)), k);
        }
        let mut o = g.to_vec();
        o.push(ov("tcp.cubic_beta", "2"));
        assert_eq!(err_key(load(MINI, "m.toml", &o)), "tcp.cubic_beta", "validate() checks [tcp] first");
    }

    #[test]
    fn the_mtu_is_the_largest_segment_of_any_group() {
        assert_eq!(load(MINI, "m.toml", &[]).unwrap().mtu(), 1500);
        let sc = load(MINI, "m.toml", &[ov("groups.jumbo.count", "1"), ov("groups.jumbo.tcp.mss_bytes", "8960")]).unwrap();
        assert_eq!(sc.mtu(), 9000);
        let sc = load(MINI, "m.toml", &[ov("groups.small.count", "1"), ov("groups.small.tcp.mss_bytes", "536")]).unwrap();
        assert_eq!(sc.mtu(), 1500);
    }

    #[test]
    fn sub_tables_merge_key_by_key() {
        let parse = |t: &str| -> toml::Table { toml::from_str(t).unwrap() };
        let mut into = parse("a = 1\nb = 2\n[sub]\nx = 1\ny = 2\n");
        merge_table(&mut into, parse("b = 3\n[sub]\ny = 4\nz = 5\n"));
        assert_eq!(into, parse("a = 1\nb = 3\n[sub]\nx = 1\ny = 4\nz = 5\n"));
    }

    // --- traffic patterns ------------------------------------------------------------------
    #[test]
    fn a_pattern_replaces_count_src_and_dst_and_bad_values_name_their_key() {
        // MINI's dumbbell: hosts s0, s1, r0 (the UDP host is not one of them)
        let pat = |p: &str, more: &[(&str, &str)]| {
            let mut o = vec![ov("groups.p.pattern", p)];
            o.extend(more.iter().map(|(k, v)| ov(k, v)));
            load(MINI, "m.toml", &o)
        };
        let flows = |r: Result<Scenario, Error>| {
            let sc = r.unwrap();
            sc.group_flows(&sc.groups["p"])
        };
        assert_eq!(flows(pat("permutation", &[])), 3);
        assert_eq!(flows(pat("random", &[])), 3);
        assert_eq!(flows(pat("all_to_all", &[])), 6);
        assert_eq!(flows(pat("stride", &[("groups.p.stride", "2")])), 3);
        assert_eq!(flows(pat("incast", &[])), 2);
        assert_eq!(flows(pat("incast", &[("groups.p.dst", "r0"), ("groups.p.hosts", r#"["s0", "s1"]"#)])), 2, "receiver outside the hosts");
        assert_eq!(flows(pat("outcast", &[("groups.p.src", "s1")])), 2);
        assert_eq!(flows(pat("all_to_all", &[("groups.p.hosts", r#"["s1", "r0"]"#)])), 2);
        // unknown value: the key, with the values it takes
        match pat("ring", &[]) {
            Err(Error::Invalid { key, reason }) => {
                assert_eq!(key, "groups.p.pattern");
                assert!(reason.contains("permutation") && reason.contains("all_to_all") && reason.contains("outcast"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        // what a pattern excludes, and what it needs
        assert_eq!(err_key(load(MINI, "m.toml", &[ov("flows.pattern", "permutation")])), "flows.pattern", "MINI has flows.count");
        assert_eq!(err_key(pat("permutation", &[("groups.p.src", "s0")])), "groups.p.pattern");
        assert_eq!(err_key(pat("incast", &[("groups.p.src", "s0")])), "groups.p.pattern");
        assert_eq!(err_key(pat("outcast", &[("groups.p.dst", "s0")])), "groups.p.pattern");
        assert_eq!(err_key(pat("incast", &[("groups.p.dst", r#"["s0", "s1"]"#)])), "groups.p.dst");
        assert_eq!(err_key(pat("incast", &[("groups.p.dst", "h9")])), "groups.p.dst");
        assert_eq!(err_key(pat("stride", &[])), "groups.p.stride");
        assert_eq!(err_key(pat("stride", &[("groups.p.stride", "0")])), "groups.p.stride");
        assert_eq!(err_key(pat("stride", &[("groups.p.stride", "3")])), "groups.p.stride", "a multiple of the 3 hosts");
        assert_eq!(err_key(pat("stride", &[("groups.p.stride", "-1")])), "groups.p.stride");
        assert_eq!(err_key(pat("random", &[("groups.p.stride", "1")])), "groups.p.stride");
        assert_eq!(err_key(pat("random", &[("groups.p.hosts", r#"["s0", "h9"]"#)])), "groups.p.hosts");
        assert_eq!(err_key(pat("random", &[("groups.p.hosts", r#"["s0", "s0"]"#)])), "groups.p.hosts");
        assert_eq!(err_key(pat("random", &[("groups.p.hosts", "[]")])), "groups.p.hosts");
        assert_eq!(err_key(pat("permutation", &[("groups.p.hosts", "s0")])), "groups.p.hosts", "one host has no derangement");
        assert_eq!(err_key(pat("incast", &[("groups.p.hosts", "r0"), ("groups.p.dst", "r0")])), "groups.p.hosts");
        // the keys of a pattern without one
        assert_eq!(err_key(load(MINI, "m.toml", &[ov("groups.q.count", "1"), ov("groups.q.stride", "1")])), "groups.q.stride");
        assert_eq!(err_key(load(MINI, "m.toml", &[ov("groups.q.count", "1"), ov("groups.q.hosts", "s0")])), "groups.q.hosts");
    }

    #[test]
    fn a_pattern_too_large_to_number_or_to_hold_is_refused_naming_it() {
        let big = |hosts: &str, p: &str| {
            let o = [ov("topology.senders", hosts), ov("groups.p.pattern", p)];
            load(MINI, "m.toml", &o)
        };
        // all_to_all over 70,001 hosts: 4.9e9 flows, more than flow ids can number
        assert_eq!(err_key(big("70000", "all_to_all")), "groups.p.pattern");
        // over 8,194 hosts: 67 M flows, about 256 GiB: refused by admission (when the machine
        // says how much it has; an explicit bound here)
        let sc = crate::scenario::load::load(
            MINI,
            "m.toml",
            &[ov("topology.senders", "8192"), ov("groups.p.pattern", "all_to_all"), ov("flows.count", "1")],
        );
        match sc {
            Err(Error::Invalid { key, .. }) => assert_eq!(key, "groups.p.pattern"),
            Ok(sc) => {
                let e = crate::scenario::admission::admit_within(&sc, Some((64 << 30, "--max-memory"))).unwrap_err();
                assert!(matches!(e, Error::Invalid { ref key, .. } if key == "groups.p.pattern"), "{e:?}");
            }
            Err(other) => panic!("{other:?}"),
        }
        let ok = big("8192", "permutation").unwrap();
        assert_eq!(ok.group_flows(&ok.groups["p"]), 8193);
    }

    #[test]
    fn incast_is_validated() {
        let ok = [ov("incast.servers", "2"), ov("incast.block_bytes", "1000"), ov("incast.rounds", "3")];
        let sc = load(MINI, "m.toml", &ok).unwrap();
        assert_eq!(sc.incast.as_ref().unwrap().per_server(), 500);
        let mut too_many = ok.to_vec();
        too_many[0] = ov("incast.servers", "3");
        assert_eq!(err_key(load(MINI, "m.toml", &too_many)), "incast.servers");
        let mut both = ok.to_vec();
        both.push(ov("incast.server_bytes", "10"));
        assert_eq!(err_key(load(MINI, "m.toml", &both)), "incast.server_bytes");
        // Named hosts: any number of servers over the named sources.
        let mut named = ok.to_vec();
        named[0] = ov("incast.servers", "6");
        named.extend([ov("incast.src", r#"["s0", "s1"]"#), ov("incast.dst", "r0")]);
        let sc = load(MINI, "m.toml", &named).unwrap();
        assert_eq!(sc.incast.as_ref().unwrap().endpoints(), (vec!["s0".to_string(), "s1".into()], vec!["r0".to_string()]));
        let mut unknown = named.clone();
        unknown.push(ov("incast.src", r#"["s0", "h9"]"#));
        assert_eq!(err_key(load(MINI, "m.toml", &unknown)), "incast.src");
        let mut own_host = named.clone();
        own_host.push(ov("incast.dst", "s1"));
        assert_eq!(err_key(load(MINI, "m.toml", &own_host)), "incast.dst");
        let mut no_epochs = named.clone();
        no_epochs.push(ov("incast.epochs", "0"));
        assert_eq!(err_key(load(MINI, "m.toml", &no_epochs)), "incast.epochs");
        let mut neg = named.clone();
        neg.push(ov("incast.epoch_interval_s", "-1"));
        assert_eq!(err_key(load(MINI, "m.toml", &neg)), "incast.epoch_interval_s");
    }

    #[test]
    fn incast_off_the_dumbbell_names_its_hosts() {
        let custom = r#"
            name = "c"
            [sim]
            duration_s = 1.0
            [topology]
            kind = "custom"
            hosts = ["a", "b", "c"]
            switches = ["sw"]
            links = [
              { a = "a", b = "sw", rate_mbps = 1000.0, delay_us = 10.0 },
              { a = "b", b = "sw", rate_mbps = 1000.0, delay_us = 10.0 },
              { a = "c", b = "sw", rate_mbps = 1000.0, delay_us = 10.0, measured = true },
            ]
            [queue]
            kind = "droptail"
            limit_pkts = 20
            [incast]
            servers = 4
            server_bytes = 1000
            rounds = 2
        "#;
        assert_eq!(err_key(load(custom, "c.toml", &[])), "incast.src");
        assert_eq!(err_key(load(custom, "c.toml", &[ov("incast.src", r#"["a", "b"]"#)])), "incast.dst");
        let sc = load(custom, "c.toml", &[ov("incast.src", r#"["a", "b"]"#), ov("incast.dst", "c")]).unwrap();
        assert_eq!(sc.incast.unwrap().servers, 4);
    }

    #[test]
    fn ns2_mirror_keys_parse_and_bad_values_name_their_path() {
        let sc = load(
            MINI,
            "m.toml",
            &[
                ov("sim.tie_break", "float_clock"),
                ov("tcp.handshake", "false"),
                ov("tcp.ssthresh_from", "cwnd"),
                ov("tcp.recovery_cwnd", "half_window"),
                ov("tcp.recovery_exit", "deflated"),
                ov("tcp.recovery_max_burst", "2"),
                ov("tcp.headerless_first_segment", "true"),
                ov("tcp.first_ack_resets_cwnd", "true"),
            ],
        )
        .unwrap();
        assert_eq!(sc.sim.tie_break, TieBreak::FloatClock);
        assert_eq!(sc.tcp.recovery_max_burst, 2);
        assert_eq!(load(MINI, "m.toml", &[]).unwrap().sim.tie_break, TieBreak::Fifo);
        assert_eq!(err_key(load(MINI, "m.toml", &[ov("sim.tie_break", "float")])), "sim.tie_break");
        assert_eq!(err_key(load(MINI, "m.toml", &[ov("tcp.ssthresh_from", "flight")])), "tcp.ssthresh_from");
        assert_eq!(err_key(load(MINI, "m.toml", &[ov("tcp.recovery_exits", "deflated")])), "tcp.recovery_exits");
        // a start-up quirk needs the handshake off: validate() names the key
        assert_eq!(
            err_key(load(MINI, "m.toml", &[ov("tcp.headerless_first_segment", "true")])),
            "tcp.headerless_first_segment"
        );
    }

    #[test]
    fn sack_and_pacing_keys_parse_and_bad_values_name_their_path() {
        let sc = load(
            MINI,
            "m.toml",
            &[ov("tcp.sack", "true"), ov("tcp.pacing", "true"), ov("tcp.pacing_ss_ratio", "2"), ov("tcp.pacing_ca_ratio", "1.2")],
        )
        .unwrap();
        assert!(sc.tcp.sack && sc.tcp.pacing);
        assert_eq!((sc.tcp.pacing_ss_ratio, sc.tcp.pacing_ca_ratio), (2.0, 1.2));
        let off = load(MINI, "m.toml", &[]).unwrap();
        assert!(!off.tcp.sack && !off.tcp.pacing);
        assert_eq!(err_key(load(MINI, "m.toml", &[ov("tcp.sack", "yes")])), "tcp.sack");
        assert_eq!(err_key(load(MINI, "m.toml", &[ov("tcp.pacing_ss_ratio", "0")])), "tcp.pacing_ss_ratio");
        assert_eq!(err_key(load(MINI, "m.toml", &[ov("tcp.pacing_ca_ratio", "-1.5")])), "tcp.pacing_ca_ratio");
    }

    #[test]
    fn literal_parsing() {
        assert_eq!(parse_literal("20"), toml::Value::Integer(20));
        assert_eq!(parse_literal("0.5"), toml::Value::Float(0.5));
        assert_eq!(parse_literal("true"), toml::Value::Boolean(true));
        assert_eq!(parse_literal("hcf"), toml::Value::String("hcf".into()));
        assert_eq!(parse_literal("\"a b\""), toml::Value::String("a b".into()));
    }
}
