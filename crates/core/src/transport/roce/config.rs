//! The `[roce]` table: the RoCEv2 endpoints' keys, with the congestion controls' own tables
//! inside it (`[roce.dcqcn]`, `[roce.timely]`), and their validation. Units are in the key
//! names; [`RoceConfig::validate`] names the key (relative to `roce`) on bad input. The
//! parameter tables, with every default's source, are on the mechanism pages:
//! `docs/mechanisms/roce.md`, `docs/mechanisms/dcqcn.md`, `docs/mechanisms/timely.md`.
//!
//! Imports no other file of the folder.

use crate::config::ConfigError;
use serde::{Deserialize, Serialize};

/// How the ends recover a lost packet (`roce.recovery`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Recovery {
    /// The receiver drops every out-of-order packet and NACKs the PSN it expects, once per
    /// gap; the sender goes back to that PSN (RoCEv2 as NICs implement it).
    #[default]
    GoBackN,
    /// The receiver keeps out-of-order packets and NACKs each one with its cumulative PSN;
    /// the sender resends only the PSNs it learns are missing (IRN, Mittal et al. 2018).
    Selective,
}

/// The rate control of the sender (`roce.cc`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum CcKind {
    /// Line rate always.
    None,
    /// DCQCN (Zhu et al. 2015): ECN marks, CNPs from the receiver, rate cut and recovery.
    #[default]
    Dcqcn,
    /// TIMELY (Mittal et al. 2015): RTT gradient.
    Timely,
    /// HPCC (Li et al. 2019): a window from the in-band telemetry of every hop.
    Hpcc,
}

/// The `[roce.hpcc]` table. Sources of the defaults: `docs/mechanisms/hpcc.md`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct HpccConfig {
    /// eta, the target utilisation (HPCC paper: 95 %; the authors' fork: U_TARGET 0.95).
    pub eta: f64,
    /// maxStage: additive steps in a row before a multiplicative one. The paper prints 5; its
    /// authors' project page says its simulations used 0 and 5 is a typo (the fork: MI_THRESH 0).
    pub max_stage: u32,
    /// T, the base RTT the window and rate are computed with, microseconds (the fork uses the
    /// largest base RTT of the topology; its run.py's comment: 13 us for its fat-tree).
    pub base_rtt_us: f64,
    /// The additive increase W_AI as a rate, Mbit/s: W_AI = rai x T (the fork's run.py:
    /// 10 x bw / 25 Mbit/s, 40 at 100 Gbit/s).
    pub rai_mbps: f64,
    /// Bytes the INT header adds to a data packet (the fork's int-header.h: five hops of 8 bytes
    /// and a 2-byte hop count).
    pub int_header_bytes: u32,
}

impl Default for HpccConfig {
    fn default() -> Self {
        HpccConfig { eta: 0.95, max_stage: 0, base_rtt_us: 13.0, rai_mbps: 40.0, int_header_bytes: 42 }
    }
}

impl HpccConfig {
    /// Keys relative to `hpcc`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        gain("eta", self.eta)?;
        positive("base_rtt_us", self.base_rtt_us, "microseconds")?;
        positive("rai_mbps", self.rai_mbps, "Mbit/s")?;
        Ok(())
    }
}

/// The `[roce.dcqcn]` table: DCQCN's notification point (the receiver) and reaction point
/// (the sender). Sources of the defaults: `docs/mechanisms/dcqcn.md`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DcqcnConfig {
    /// N: at most one CNP per flow per this interval, microseconds (50 us). The sources of
    /// every default: `docs/mechanisms/dcqcn.md` (the paper's text is not in the repository).
    pub cnp_interval_us: f64,
    /// g: the gain of alpha's moving average (1/256).
    pub g: f64,
    /// Alpha before the first CNP (HPCC fork rdma-hw.cc: alpha = 1 at the first CNP).
    pub alpha_init: f64,
    /// K: alpha decays by (1 - g) after each such interval without a CNP, microseconds
    /// (55 us).
    pub alpha_timer_us: f64,
    /// At most one rate cut per this interval, microseconds; 0: one per CNP, the CNP spacing N
    /// bounding the cuts (HPCC fork: RATE_DECREASE_INTERVAL 4 us).
    pub rate_decrease_interval_us: f64,
    /// T: the rate-increase timer, microseconds (55 us).
    pub increase_timer_us: f64,
    /// B: the rate-increase byte counter, bytes sent (10 MB).
    pub byte_counter_bytes: u64,
    /// Rt = Rc on every cut (DCQCN paper). `false`: only on a cut after an increase event,
    /// so that cuts in a row keep the rate the flow had before them as its target (Mellanox's
    /// DCQCN, the HPCC fork's CLAMP_TARGET_RATE 0).
    pub clamp_target_rate: bool,
    /// The increase stages count timer events and byte-counter events (DCQCN paper, after
    /// QCN). `true`: timer events alone, R_HAI once per step past F + 1 (Mellanox's DCQCN, the
    /// HPCC fork, which has no byte counter).
    pub timer_only: bool,
    /// F: fast-recovery steps before additive increase (F = 5).
    pub fast_recovery_steps: u32,
    /// R_AI: additive-increase step of the target rate, Mbit/s (40 Mbps).
    pub rai_mbps: f64,
    /// R_HAI: hyper-increase step of the target rate, Mbit/s (HPCC fork mix/config.txt:
    /// RATE_HAI 100Mb/s).
    pub rhai_mbps: f64,
    /// The lowest rate a cut leaves, Mbit/s (HPCC fork: MinRate 100Mb/s).
    pub min_rate_mbps: f64,
}

impl Default for DcqcnConfig {
    fn default() -> Self {
        DcqcnConfig {
            cnp_interval_us: 50.0,
            g: 1.0 / 256.0,
            alpha_init: 1.0,
            alpha_timer_us: 55.0,
            rate_decrease_interval_us: 0.0,
            increase_timer_us: 55.0,
            byte_counter_bytes: 10_000_000,
            clamp_target_rate: true,
            timer_only: false,
            fast_recovery_steps: 5,
            rai_mbps: 40.0,
            rhai_mbps: 100.0,
            min_rate_mbps: 100.0,
        }
    }
}

/// The `[roce.timely]` table. Sources of the defaults: `docs/mechanisms/timely.md`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct TimelyConfig {
    /// EWMA weight of the newest RTT difference (HPCC fork: TimelyAlpha 0.875).
    pub alpha: f64,
    /// Multiplicative decrease factor (0.8; sources: `docs/mechanisms/timely.md`).
    pub beta: f64,
    /// Below this RTT the rate rises whatever the gradient, microseconds (T_low 50 us; HPCC
    /// fork TimelyTLow 50000 ns).
    pub t_low_us: f64,
    /// Above this RTT the rate falls whatever the gradient, microseconds (T_high 500 us; HPCC
    /// fork TimelyTHigh 500000 ns).
    pub t_high_us: f64,
    /// Additive increase step delta, Mbit/s (10 Mbps).
    pub delta_mbps: f64,
    /// N: after this many consecutive increases, the step is N x delta (hyperactive
    /// increase: N = 5).
    pub hai_after: u32,
    /// The RTT the gradient is normalised by, microseconds (HPCC fork: TimelyMinRtt 20000 ns).
    pub min_rtt_us: f64,
    /// The lowest rate a decrease leaves, Mbit/s (HPCC fork: MinRate 100Mb/s).
    pub min_rate_mbps: f64,
}

impl Default for TimelyConfig {
    fn default() -> Self {
        TimelyConfig {
            alpha: 0.875,
            beta: 0.8,
            t_low_us: 50.0,
            t_high_us: 500.0,
            delta_mbps: 10.0,
            hai_after: 5,
            min_rtt_us: 20.0,
            min_rate_mbps: 100.0,
        }
    }
}

/// The `[roce]` table.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RoceConfig {
    /// The 802.1p class (`Packet::class`, 0 to 7) of every packet of a RoCE flow: data, ACK,
    /// NACK and CNP (3: the lossless class of common RoCE deployments).
    pub priority: u8,
    /// Payload bytes per packet (the path MTU of RDMA; the HPCC paper's simulations: 1000).
    pub mtu_bytes: u32,
    /// Header bytes of every packet: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 = 58
    /// (no preamble, inter-frame gap or FCS, as the simulator's other transports).
    pub header_bytes: u32,
    /// The receiver acknowledges every this many in-order data packets (and always the last
    /// packet of a message).
    pub ack_every_pkts: u32,
    pub recovery: Recovery,
    /// Retransmission timeout, microseconds: this long without progress, the sender goes back
    /// to its cumulatively acknowledged PSN (IRN paper: RTO_high 320 us).
    pub rto_us: f64,
    /// Packets in flight are bounded to this many bytes of payload (IRN's BDP-FC); 0: none.
    pub bdp_cap_bytes: u64,
    pub cc: CcKind,
    /// The flows need a lossless class: a scenario with RoCE flows and no `[pfc]` (or whose
    /// `pfc.priority` is not `priority`) is refused. `false`: RoCE over a lossy fabric (as IRN
    /// studies it).
    pub lossless: bool,
    pub dcqcn: DcqcnConfig,
    pub timely: TimelyConfig,
    pub hpcc: HpccConfig,
}

impl Default for RoceConfig {
    fn default() -> Self {
        RoceConfig {
            priority: 3,
            mtu_bytes: 1000,
            header_bytes: 58,
            ack_every_pkts: 1,
            recovery: Recovery::GoBackN,
            rto_us: 320.0,
            bdp_cap_bytes: 0,
            cc: CcKind::Dcqcn,
            lossless: true,
            dcqcn: DcqcnConfig::default(),
            timely: TimelyConfig::default(),
            hpcc: HpccConfig::default(),
        }
    }
}

fn positive(key: &str, v: f64, unit: &str) -> Result<(), ConfigError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(ConfigError::new(key, format!("must be a positive number of {unit}, got {v}")))
    }
}

fn non_negative(key: &str, v: f64, unit: &str) -> Result<(), ConfigError> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(ConfigError::new(key, format!("must be a number of {unit} >= 0, got {v}")))
    }
}

/// `v` in `(0, 1]`.
fn gain(key: &str, v: f64) -> Result<(), ConfigError> {
    if v.is_finite() && v > 0.0 && v <= 1.0 {
        Ok(())
    } else {
        Err(ConfigError::new(key, format!("must be in (0, 1], got {v}")))
    }
}

impl DcqcnConfig {
    /// Keys relative to `dcqcn`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        non_negative("cnp_interval_us", self.cnp_interval_us, "microseconds")?;
        gain("g", self.g)?;
        if !(self.alpha_init.is_finite() && (0.0..=1.0).contains(&self.alpha_init)) {
            return Err(ConfigError::new("alpha_init", format!("must be in [0, 1], got {}", self.alpha_init)));
        }
        positive("alpha_timer_us", self.alpha_timer_us, "microseconds")?;
        non_negative("rate_decrease_interval_us", self.rate_decrease_interval_us, "microseconds")?;
        positive("increase_timer_us", self.increase_timer_us, "microseconds")?;
        if self.byte_counter_bytes == 0 {
            return Err(ConfigError::new("byte_counter_bytes", "must be at least 1 byte"));
        }
        positive("rai_mbps", self.rai_mbps, "Mbit/s")?;
        positive("rhai_mbps", self.rhai_mbps, "Mbit/s")?;
        positive("min_rate_mbps", self.min_rate_mbps, "Mbit/s")?;
        Ok(())
    }
}

impl TimelyConfig {
    /// Keys relative to `timely`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        gain("alpha", self.alpha)?;
        gain("beta", self.beta)?;
        positive("t_low_us", self.t_low_us, "microseconds")?;
        positive("t_high_us", self.t_high_us, "microseconds")?;
        if self.t_high_us <= self.t_low_us {
            return Err(ConfigError::new("t_high_us", format!("must be above t_low_us ({} us), got {}", self.t_low_us, self.t_high_us)));
        }
        positive("delta_mbps", self.delta_mbps, "Mbit/s")?;
        if self.hai_after == 0 {
            return Err(ConfigError::new("hai_after", "must be at least 1 increase"));
        }
        positive("min_rtt_us", self.min_rtt_us, "microseconds")?;
        positive("min_rate_mbps", self.min_rate_mbps, "Mbit/s")?;
        Ok(())
    }
}

impl RoceConfig {
    /// Checks every key; error keys are relative to `roce`. The run's MTU (the largest TCP
    /// segment) does not bound RoCE packets, whose size the table sets.
    pub fn validate(&self, _mtu: u32) -> Result<(), ConfigError> {
        if self.priority > 7 {
            return Err(ConfigError::new("priority", format!("an 802.1p class is 0 to 7, got {}", self.priority)));
        }
        if self.mtu_bytes == 0 {
            return Err(ConfigError::new("mtu_bytes", "must be at least 1 byte"));
        }
        if self.ack_every_pkts == 0 {
            return Err(ConfigError::new("ack_every_pkts", "must be at least 1 packet"));
        }
        positive("rto_us", self.rto_us, "microseconds")?;
        self.dcqcn.validate().map_err(|e| e.within("dcqcn"))?;
        self.timely.validate().map_err(|e| e.within("timely"))?;
        self.hpcc.validate().map_err(|e| e.within("hpcc"))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_bad_values_name_their_key() {
        assert_eq!(RoceConfig::default().validate(1500), Ok(()));
        let bad = |f: fn(&mut RoceConfig), key: &str| {
            let mut c = RoceConfig::default();
            f(&mut c);
            assert_eq!(c.validate(1500).unwrap_err().key, key);
        };
        bad(|c| c.priority = 8, "priority");
        bad(|c| c.mtu_bytes = 0, "mtu_bytes");
        bad(|c| c.ack_every_pkts = 0, "ack_every_pkts");
        bad(|c| c.rto_us = 0.0, "rto_us");
        bad(|c| c.rto_us = f64::NAN, "rto_us");
        bad(|c| c.dcqcn.g = 0.0, "dcqcn.g");
        bad(|c| c.dcqcn.g = 1.5, "dcqcn.g");
        bad(|c| c.dcqcn.alpha_init = -0.1, "dcqcn.alpha_init");
        bad(|c| c.dcqcn.cnp_interval_us = -1.0, "dcqcn.cnp_interval_us");
        bad(|c| c.dcqcn.alpha_timer_us = 0.0, "dcqcn.alpha_timer_us");
        bad(|c| c.dcqcn.increase_timer_us = -55.0, "dcqcn.increase_timer_us");
        bad(|c| c.dcqcn.byte_counter_bytes = 0, "dcqcn.byte_counter_bytes");
        bad(|c| c.dcqcn.rai_mbps = 0.0, "dcqcn.rai_mbps");
        bad(|c| c.dcqcn.rhai_mbps = -1.0, "dcqcn.rhai_mbps");
        bad(|c| c.dcqcn.min_rate_mbps = 0.0, "dcqcn.min_rate_mbps");
        bad(|c| c.timely.alpha = 0.0, "timely.alpha");
        bad(|c| c.timely.beta = 1.1, "timely.beta");
        bad(|c| c.timely.t_high_us = 40.0, "timely.t_high_us");
        bad(|c| c.timely.delta_mbps = 0.0, "timely.delta_mbps");
        bad(|c| c.timely.hai_after = 0, "timely.hai_after");
        bad(|c| c.timely.min_rtt_us = 0.0, "timely.min_rtt_us");
    }

    #[test]
    fn unknown_keys_are_refused_and_names_are_snake_case() {
        let c: RoceConfig = toml::from_str("cc = \"timely\"\nrecovery = \"selective\"\n[dcqcn]\ng = 0.5\n").unwrap();
        assert_eq!((c.cc, c.recovery, c.dcqcn.g), (CcKind::Timely, Recovery::Selective, 0.5));
        assert!(toml::from_str::<RoceConfig>("mtu = 1000").is_err());
        assert!(toml::from_str::<RoceConfig>("[dcqcn]\nk_us = 55").is_err());
        assert!(toml::from_str::<RoceConfig>("cc = \"none\"").is_ok());
        assert!(toml::from_str::<RoceConfig>("recovery = \"go_back_n\"").is_ok());
    }
}
