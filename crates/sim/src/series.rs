//! Time series: periodic samples of queues and flows (`[measure] sample_interval_s`).
//!
//! Off by default. When `measure.sample_interval_s` is set, one `SeriesTick` event fires at
//! `0, T, 2T, ...` up to the end of the run (never past it: an incast that ends early ends its
//! series there too), and each tick records, in long (tidy) form:
//!
//! - `queue_pkts`, `queue_bytes` of every measured port (what its discipline holds, and with
//!   PFC its lossless FIFO, not counting the packet being serialized);
//! - `delivered_bytes` of every flow: TCP in-order payload bytes delivered to the receiving
//!   application, UDP wire bytes received (as in `flows.csv`'s `bytes_delivered`)
//!   (unless `measure.sample_flows = false`, for long runs of many flows);
//! - `cwnd_bytes` of every TCP sender, when `measure.cwnd = true`;
//! - the delivered bytes of every flow group, rendered as `groups.csv` (and
//!   `group_windows.csv`) by `groups.rs`, whatever `sample_flows` says.
//!
//! Rules:
//! - Nothing here is on the packet path: the whole cost is one event per interval, and per tick
//!   a pass over the measured ports and the flows.
//! - Tick `k` is at exactly `k * T` picoseconds (`T` rounded to the picosecond), so the sample
//!   times never drift, and the series is a pure function of (scenario, seed).
//! - The table's columns are `time_s, metric, port, flow_id, value`: `port` is empty for flow
//!   metrics and `flow_id` empty for port metrics. `docs/metrics.md` documents them.
//! - The number of rows is bounded up front (`MAX_SERIES_ROWS`, checked by the config layer's
//!   `scenario/validate.rs` at load time and again here with the real number of measured ports)
//!   so that a too-fine interval is invalid input, not an out-of-memory crash an hour into the
//!   run.
//! - The engine owns the sampler (`Sim::series`) and its `SeriesTick` events, and hands it the
//!   network and the flows at each tick; this file imports no engine.

use crate::columns::{Column, Table};
use crate::groups::GroupSeries;
use crate::net::Network;
use crate::pfc::PfcNet;
use crate::scenario::validate::{check_series_rows, series_size};
use crate::scenario::Scenario;
use crate::workload::Flows;
use crate::error::Error;
use dcfair_core::time::SimTime;

/// The metrics, in the order of their categorical codes.
pub const METRICS: [&str; 4] = ["queue_pkts", "queue_bytes", "delivered_bytes", "cwnd_bytes"];
const QUEUE_PKTS: u32 = 0;
const QUEUE_BYTES: u32 = 1;
const DELIVERED: u32 = 2;
const CWND: u32 = 3;

/// Samples gathered during a run, as columns.
#[derive(Clone, Debug, Default)]
pub struct Series {
    interval_ps: u64,
    next_k: u64,
    flows: bool,
    cwnd: bool,
    /// Per-group sums of delivered bytes (`groups.rs`).
    groups: GroupSeries,
    /// A part of a run on several threads: which flows have a congestion window, by flow id
    /// (each part writes a row for each, of its own flows or not: [`Series::for_part`]).
    windowed: Option<Vec<bool>>,
    /// Port ids of the measured ports, and their names (the `port` levels).
    ports: Vec<u32>,
    port_names: Vec<String>,
    time_s: Vec<f64>,
    metric: Vec<u32>,
    port: Vec<u32>,
    flow: Vec<u64>,
    value: Vec<f64>,
}

impl Series {
    /// The sampler for `sc` on network `net` (its measured ports) and the flow groups named
    /// `group_names` (`flow_group`: each flow's group, by flow id), or `None` when its time
    /// series are off; invalid input if the series would exceed `MAX_SERIES_ROWS`
    /// (`scenario/measure.rs`) with the topology's real number of measured ports.
    pub fn new(sc: &Scenario, net: &Network, group_names: &[String], flow_group: &[u16]) -> Result<Option<Series>, Error> {
        let Some(t) = sc.measure.sample_interval_s else { return Ok(None) };
        let interval_ps = ((t * 1e12).round() as u64).max(1);
        let ports: Vec<u32> = (0..net.ports.len() as u32).filter(|&p| net.ports[p as usize].measured).collect();
        check_series_rows(sc, t, ports.len() as f64).map_err(|e| {
            let e = e.within("measure");
            Error::invalid(e.key, e.reason)
        })?;
        let port_names = ports.iter().map(|&p| net.ports[p as usize].name.clone()).collect();
        let (per_sample, samples) = series_size(sc, t, ports.len() as f64);
        let rows = (per_sample * samples.min(1e6)) as usize;
        Ok(Some(Series {
            groups: GroupSeries::new(sc, group_names, flow_group),
            windowed: None,
            interval_ps,
            flows: sc.measure.sample_flows,
            cwnd: sc.measure.cwnd,
            ports,
            port_names,
            time_s: Vec::with_capacity(rows),
            metric: Vec::with_capacity(rows),
            port: Vec::with_capacity(rows),
            flow: Vec::with_capacity(rows),
            value: Vec::with_capacity(rows),
            ..Default::default()
        }))
    }

    /// The time of the next tick.
    pub fn next_time(&self) -> SimTime {
        SimTime(self.next_k.saturating_mul(self.interval_ps))
    }

    /// Moves on to the next tick and returns its time.
    pub fn advance(&mut self) -> SimTime {
        self.next_k += 1;
        self.next_time()
    }

    #[inline]
    fn row(&mut self, t: f64, metric: u32, port: u32, flow: u64, value: f64) {
        self.time_s.push(t);
        self.metric.push(metric);
        self.port.push(port);
        self.flow.push(flow);
        self.value.push(value);
    }

    /// Records one sample at `now` of the measured ports of `net` and of the flows `flows`,
    /// whose groups are `flow_group` (by flow id). With PFC (`pfc`), a port's queue counts its
    /// lossless FIFO too.
    pub fn sample(&mut self, now: SimTime, net: &Network, pfc: Option<&PfcNet>, flows: &Flows, flow_group: &[u16]) {
        let t = now.as_secs_f64();
        for i in 0..self.ports.len() {
            let p = self.ports[i] as usize;
            // a part of a run on several threads reads its own ports and flows (`arena.rs`);
            // the join takes the other rows from their parts ([`Series::adopt`])
            let (mut pkts, mut bytes) = match net.ports.owns(p) {
                true => (net.ports[p].queue.stats.len_pkts, net.ports[p].queue.stats.len_bytes),
                false => (0, 0),
            };
            if let Some(pfc) = pfc {
                pkts += pfc.ports[p].q.len() as u64;
                bytes += pfc.ports[p].q.bytes;
            }
            let (pkts, bytes) = (pkts as f64, bytes as f64);
            self.row(t, QUEUE_PKTS, i as u32, u64::MAX, pkts);
            self.row(t, QUEUE_BYTES, i as u32, u64::MAX, bytes);
        }
        if self.flows {
            for f in 0..flows.len() {
                let bytes = if flows.owns(f) { flows[f].delivered_bytes() } else { 0 };
                self.row(t, DELIVERED, u32::MAX, f as u64, bytes as f64);
            }
        }
        if self.cwnd {
            // the flows whose transport has a congestion window
            for f in 0..flows.len() {
                let c = if flows.owns(f) { flows[f].ends.cwnd_bytes() } else { None };
                if self.windowed.as_ref().map_or(c.is_some(), |w| w[f]) {
                    self.row(t, CWND, u32::MAX, f as u64, c.unwrap_or(0) as f64);
                }
            }
        }
        self.groups.sample(now, flows, flow_group);
    }

    /// The sampler of a part of a run on several threads: it sums the groups' delivered bytes
    /// over the flows of `counted` only (by flow id: the flows whose receivers it runs), and
    /// writes a window row for the flows of `windowed` (those with a congestion window).
    pub fn for_part(&mut self, counted: Vec<bool>, windowed: Vec<bool>) {
        self.groups.count_only(counted);
        self.windowed = Some(windowed);
    }

    /// Takes from `other`, the sampler of a copy of this run that ran some part of it on
    /// another thread (the same ticks, rows and order), the values that part measured: a
    /// port's queue where `port(p)` (global port id), a flow's delivered bytes where
    /// `receiver(f)` and its window where `sender(f)` (flow id); and adds its group sums.
    pub fn adopt(&mut self, other: &Series, port: impl Fn(u32) -> bool, receiver: impl Fn(u64) -> bool, sender: impl Fn(u64) -> bool) {
        assert_eq!(self.value.len(), other.value.len(), "two parts sampled different rows");
        for r in 0..self.value.len() {
            let theirs = match self.metric[r] {
                QUEUE_PKTS | QUEUE_BYTES => port(self.ports[self.port[r] as usize]),
                DELIVERED => receiver(self.flow[r]),
                _ => sender(self.flow[r]),
            };
            if theirs {
                self.value[r] = other.value[r];
            }
        }
        self.groups.add(&other.groups);
    }

    /// The samples as tables: the time series (`time_s, metric, port, flow_id, value`), the
    /// groups' goodput per sample interval, and per window if asked for (`groups.rs`).
    pub fn into_tables(self) -> (Table, Table, Option<Table>) {
        let (groups, windows) = self.groups.into_tables();
        let mut t = Table::new();
        t.push("time_s", Column::F64(self.time_s));
        t.push("metric", Column::Cat { codes: self.metric, levels: METRICS.iter().map(|s| s.to_string()).collect() });
        t.push("port", Column::Cat { codes: self.port, levels: self.port_names });
        t.push("flow_id", Column::OptU64(self.flow));
        t.push("value", Column::F64(self.value));
        (t, groups, windows)
    }
}

#[cfg(test)]
mod tests {
    use crate::columns::Column;
    use crate::error::Error;
    use crate::results::Results;
    use crate::run::run;
    use crate::scenario::load as load_scenario;

    const MINI: &str = r#"
        name = "mini"
        [sim]
        duration_s = 0.5
        [topology]
        kind = "dumbbell"
        senders = 3
        access_rate_mbps = 1000.0
        access_delay_us = 10.0
        bottleneck_rate_mbps = 100.0
        bottleneck_delay_us = 10.0
        [queue]
        kind = "droptail"
        limit_pkts = 20
        [flows]
        count = 3
        [udp]
        rate_fraction = 0.05
    "#;

    fn go(extra: &[(&str, &str)]) -> Results {
        let ov: Vec<(String, String)> = extra.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        run(&load_scenario(MINI, "mini.toml", &ov).unwrap(), None, None).unwrap()
    }

    fn without_events(summary: &str) -> String {
        summary.lines().filter(|l| !l.contains("\"events\"") && !l.contains("wall_time_s")).collect()
    }

    // --- what is sampled ------------------------------------------------------------------
    #[test]
    fn off_by_default() {
        assert!(go(&[]).timeseries.is_none());
    }

    #[test]
    fn one_row_per_series_per_tick_including_both_ends() {
        let r = go(&[("measure.sample_interval_s", "0.1"), ("measure.cwnd", "true")]);
        let t = r.timeseries.unwrap();
        // 6 ticks (0, 0.1, ..., 0.5) x (2 queue series + 4 delivered (3 TCP + UDP) + 3 cwnd).
        assert_eq!(t.rows(), 6 * 9);
        let Some(Column::F64(times)) = t.column("time_s") else { panic!() };
        assert_eq!(times[0], 0.0);
        assert_eq!(*times.last().unwrap(), 0.5);
        let Some(Column::Cat { codes, levels }) = t.column("metric") else { panic!() };
        assert_eq!(levels, &["queue_pkts", "queue_bytes", "delivered_bytes", "cwnd_bytes"]);
        assert_eq!(&codes[..9], &[0, 1, 2, 2, 2, 2, 3, 3, 3]);
        let csv = t.to_csv();
        assert!(csv.starts_with("time_s,metric,port,flow_id,value\n0,queue_pkts,sw->r0,,0\n0,queue_bytes,sw->r0,,0\n0,delivered_bytes,,0,0\n"), "{csv}");
    }

    #[test]
    fn queues_only() {
        let r = go(&[("measure.sample_interval_s", "0.1"), ("measure.sample_flows", "false"), ("measure.cwnd", "true")]);
        assert_eq!(r.timeseries.unwrap().rows(), 6 * (2 + 3));
    }

    #[test]
    fn delivered_bytes_end_where_flows_csv_ends() {
        let r = go(&[("measure.sample_interval_s", "0.25")]);
        let csv = r.timeseries.unwrap().to_csv();
        let last: Vec<&str> = csv.lines().filter(|l| l.starts_with("0.5,delivered_bytes")).map(|l| l.rsplit(',').next().unwrap()).collect::<Vec<_>>();
        let flows: Vec<String> = r.flows_csv.lines().skip(1).map(|l| l.split(',').nth(7).unwrap().to_string()).collect();
        assert_eq!(last, flows);
    }

    // --- sampling changes nothing else -----------------------------------------------------
    #[test]
    fn sampling_leaves_the_results_unchanged() {
        let a = go(&[]);
        let b = go(&[("measure.sample_interval_s", "0.01"), ("measure.cwnd", "true")]);
        assert_eq!(a.flows_csv, b.flows_csv);
        assert_eq!(a.ports_csv, b.ports_csv);
        assert_eq!(without_events(&a.summary_json), without_events(&b.summary_json));
    }

    // --- invalid input ---------------------------------------------------------------------
    #[test]
    fn bad_intervals_name_their_key() {
        for (k, v) in [("measure.sample_interval_s", "0"), ("measure.sample_interval_s", "-1"), ("measure.sample_interval_s", "1e-12")] {
            match load_scenario(MINI, "m.toml", &[(k.to_string(), v.to_string())]) {
                Err(Error::Invalid { key, .. }) => assert_eq!(key, "measure.sample_interval_s"),
                other => panic!("{v}: {other:?}"),
            }
        }
        match load_scenario(MINI, "m.toml", &[("measure.cwnd".to_string(), "true".to_string())]) {
            Err(Error::Invalid { key, .. }) => assert_eq!(key, "measure.cwnd"),
            other => panic!("{other:?}"),
        }
    }
}
