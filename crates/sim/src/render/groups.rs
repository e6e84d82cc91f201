//! The groups family: per-group figures, each key suffixed with the group's name
//! (`throughput_bps_<group>`, `jain_index_<group>`, ...), when a scenario has more than one
//! flow group. UDP sources are not a group here; an MPTCP connection is one flow (`flows.rs`).

use super::flows::{fct_of, zero_fraction, Figures};
use super::{insert_fct, num};
use crate::assemble::group_names;
use crate::metrics::{jain, mean};
use crate::scenario::Scenario;
use serde_json::{Map, Value};

pub(super) fn summary(sc: &Scenario, fig: &Figures<'_>, m: &mut Map<String, Value>) {
    let groups = group_names(sc);
    if groups.len() < 2 {
        return;
    }
    for (g, name) in groups.iter().enumerate() {
        let idx: Vec<usize> = (0..fig.rows.len()).filter(|&i| fig.rows[i].flow.group as usize == g).collect();
        let gp: Vec<f64> = idx.iter().map(|&i| fig.pkts[i]).collect();
        let gf: Vec<f64> = idx.iter().filter_map(|&i| fct_of(&fig.rows[i])).collect();
        let gg: Vec<f64> = idx.iter().map(|&i| fig.goodput[i]).collect();
        m.insert(format!("throughput_bps_{name}"), num(mean(&gg)));
        m.insert(format!("aggregate_throughput_bps_{name}"), num(Some(gg.iter().sum())));
        m.insert(format!("starved_fraction_{name}"), num(zero_fraction(&gp)));
        m.insert(format!("jain_index_{name}"), num(jain(&gp)));
        m.insert(format!("max_starvation_s_{name}"), num(idx.iter().map(|&i| fig.gaps[i]).reduce(f64::max)));
        insert_fct(m, &format!("_{name}"), &gf);
    }
}
