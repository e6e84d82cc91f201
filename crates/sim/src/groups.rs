//! Goodput of named flow groups over time (`groups.csv`, `group_windows.csv`).
//!
//! The TCP Outcast paper plots, per class of flows (2-hop, 6-hop), the instantaneous throughput
//! and the throughput averaged over longer stretches (its figures 3, 5, 7). With
//! `measure.sample_interval_s = T`, every tick of the time series (`series.rs`) also sums the
//! delivered bytes of the flows of each group, and the run reports:
//!
//! - `groups.csv`: one row per group per sample interval `[(k-1) T, k T]`;
//! - `group_windows.csv` (with `measure.group_window_s = W`, a whole multiple of `T`): one row
//!   per group per window `[j W, (j+1) W]`; if the run ends inside a window (a duration that is
//!   not a multiple of `W`, or an incast that finishes early), that last window is reported
//!   over the time it covers, with its real `end_s`.
//!
//! Both have the columns `start_s, end_s, group, flows, delivered_bytes, goodput_bps,
//! goodput_bps_per_flow`: `delivered_bytes` is what the group's flows delivered in the span (TCP:
//! in-order payload bytes delivered to the application; UDP: wire bytes received, as in
//! `flows.csv`), `goodput_bps` its aggregate rate (`delivered_bytes x 8 / (end_s - start_s)`),
//! and `goodput_bps_per_flow` that divided by the group's number of flows (every flow of the
//! group counts, started or not; empty for a group of no flows).
//!
//! Groups are those of `flows.csv`: `flows`, every `[groups.NAME]`, `incast`, `udp`, in that
//! order. Rules: nothing on the packet path (one sum over the flows per tick); spans end on
//! the exact picosecond ticks of the series, so goodputs are exact ratios of integers. The
//! sums are taken from the flows the sampler (`series.rs`) hands over; this file imports no
//! engine.

use crate::columns::{CatBuilder, Column, Table};
use crate::scenario::validate::window_ticks;
use crate::scenario::Scenario;
use crate::workload::Flows;
use dcfair_core::time::{SimTime, PS_PER_SEC};

/// Per-tick delivered bytes of every group.
#[derive(Clone, Debug, Default)]
pub struct GroupSeries {
    flows: Vec<u64>,
    names: Vec<String>,
    /// Tick times, picoseconds.
    times: Vec<u64>,
    /// Cumulative delivered bytes, tick-major (`times.len() x groups`).
    cum: Vec<u64>,
    window_ticks: Option<u64>,
    /// The flows the sums count, by flow id (`None`: every flow): in a part of a run on
    /// several threads, those whose receivers it runs ([`GroupSeries::count_only`]).
    counted: Option<Vec<bool>>,
}

impl GroupSeries {
    /// For the groups named `group_names` of the flows in groups `flow_group` (by flow id):
    /// the engine's `Sim::group_names` and `Sim::flow_group`.
    pub fn new(sc: &Scenario, group_names: &[String], flow_group: &[u16]) -> GroupSeries {
        let mut flows = vec![0u64; group_names.len()];
        for &g in flow_group {
            flows[g as usize] += 1;
        }
        let window_ticks = match (sc.measure.group_window_s, sc.measure.sample_interval_s) {
            (Some(w), Some(t)) => window_ticks(w, t).ok(),
            _ => None,
        };
        GroupSeries { flows, names: group_names.to_vec(), window_ticks, ..Default::default() }
    }

    /// Records the groups' cumulative delivered bytes at `now`: of the flows `flows`, in groups
    /// `flow_group` (by flow id).
    pub fn sample(&mut self, now: SimTime, flows: &Flows, flow_group: &[u16]) {
        let base = self.cum.len();
        self.cum.resize(base + self.names.len(), 0);
        let row = &mut self.cum[base..];
        for i in 0..flows.len() {
            if self.counted.as_ref().is_none_or(|c| c[i]) {
                row[flow_group[i] as usize] += flows[i].delivered_bytes();
            }
        }
        self.times.push(now.0);
    }

    /// Sums the flows of `counted` only (by flow id), from now on.
    pub fn count_only(&mut self, counted: Vec<bool>) {
        self.counted = Some(counted);
    }

    /// Adds the sums of `other`, which sampled the same ticks over other flows: a run on
    /// several threads joins its parts' sums.
    pub fn add(&mut self, other: &GroupSeries) {
        assert_eq!((self.times.len(), self.cum.len()), (other.times.len(), other.cum.len()), "two parts sampled different ticks");
        for (a, b) in self.cum.iter_mut().zip(&other.cum) {
            *a += b;
        }
    }

    /// `groups.csv`, and `group_windows.csv` when windows were asked for.
    pub fn into_tables(self) -> (Table, Option<Table>) {
        let per_sample = self.spans(1);
        let windows = self.window_ticks.map(|w| self.spans(w as usize));
        (per_sample, windows)
    }

    /// One row per group per span of `step` ticks (the last span may be shorter).
    fn spans(&self, step: usize) -> Table {
        let g = self.names.len();
        let (mut start_s, mut end_s, mut group, mut flows) = (Vec::new(), Vec::new(), CatBuilder::new(), Vec::new());
        let (mut bytes, mut bps, mut per_flow) = (Vec::new(), Vec::new(), Vec::new());
        let codes: Vec<u32> = self.names.iter().map(|n| group.code(n)).collect();
        let last = self.times.len().saturating_sub(1);
        let mut k0 = 0;
        while k0 < last {
            let k1 = (k0 + step).min(last);
            let dt_s = (self.times[k1] - self.times[k0]) as f64 / PS_PER_SEC as f64;
            let (from, to) = (&self.cum[k0 * g..(k0 + 1) * g], &self.cum[k1 * g..(k1 + 1) * g]);
            for (i, (&code, &n)) in codes.iter().zip(&self.flows).enumerate() {
                let b = to[i] - from[i];
                let rate = b as f64 * 8.0 / dt_s;
                start_s.push(self.times[k0] as f64 / PS_PER_SEC as f64);
                end_s.push(self.times[k1] as f64 / PS_PER_SEC as f64);
                group.push_code(code);
                flows.push(n);
                bytes.push(b);
                bps.push(rate);
                per_flow.push(if n > 0 { rate / n as f64 } else { f64::NAN });
            }
            k0 = k1;
        }
        let mut t = Table::new();
        t.push("start_s", Column::F64(start_s));
        t.push("end_s", Column::F64(end_s));
        t.push("group", group.finish());
        t.push("flows", Column::U64(flows));
        t.push("delivered_bytes", Column::U64(bytes));
        t.push("goodput_bps", Column::F64(bps));
        t.push("goodput_bps_per_flow", Column::OptF64(per_flow));
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(times_us: &[u64], cum: &[u64], flows: &[u64], window: Option<u64>) -> GroupSeries {
        GroupSeries {
            flows: flows.to_vec(),
            names: (0..flows.len()).map(|i| format!("g{i}")).collect(),
            times: times_us.iter().map(|t| t * 1_000_000).collect(),
            cum: cum.to_vec(),
            window_ticks: window,
            counted: None,
        }
    }

    // --- spans ----------------------------------------------------------------------------
    #[test]
    fn per_sample_goodput_is_the_difference_over_the_interval() {
        // Two groups sampled every 100 us: g0 (2 flows) delivers 1250 bytes per interval
        // (100 Mbit/s), g1 (1 flow) nothing, then 2500 bytes.
        let s = series(&[0, 100, 200], &[0, 0, 1250, 0, 2500, 2500], &[2, 1], None);
        let (t, w) = s.into_tables();
        assert!(w.is_none());
        assert_eq!(
            t.to_csv(),
            "start_s,end_s,group,flows,delivered_bytes,goodput_bps,goodput_bps_per_flow\n\
             0,0.0001,g0,2,1250,100000000,50000000\n\
             0,0.0001,g1,1,0,0,0\n\
             0.0001,0.0002,g0,2,1250,100000000,50000000\n\
             0.0001,0.0002,g1,1,2500,200000000,200000000\n"
        );
    }

    #[test]
    fn windows_average_whole_intervals_and_the_last_may_be_short() {
        // Ticks 0..=5 (100 us apart), windows of 2 ticks: [0,200], [200,400], [400,500].
        let cum = [0, 1250, 2500, 3750, 5000, 8750];
        let (_, w) = series(&[0, 100, 200, 300, 400, 500], &cum, &[1], Some(2)).into_tables();
        let csv = w.unwrap().to_csv();
        let rows: Vec<&str> = csv.lines().skip(1).collect();
        assert_eq!(rows, ["0,0.0002,g0,1,2500,100000000,100000000", "0.0002,0.0004,g0,1,2500,100000000,100000000", "0.0004,0.0005,g0,1,3750,300000000,300000000"]);
    }

    #[test]
    fn a_group_without_flows_has_no_per_flow_figure() {
        let (t, _) = series(&[0, 100], &[0, 0], &[0], None).into_tables();
        assert!(t.to_csv().ends_with(",g0,0,0,0,\n"), "{}", t.to_csv());
    }
}
