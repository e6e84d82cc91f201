//! The packet scheduler of an MPTCP connection: which subflow gets the next chunk of data.
//!
//! Rules:
//! - **Lowest RTT first** (the default scheduler of the out-of-tree Linux MPTCP
//!   implementation, `mptcp_sched.c`, and of the upstream one; Raiciu et al., "How hard can it
//!   be? Designing and implementing a deployable multipath TCP", NSDI 2012): among the
//!   subflows with congestion-window space, the one with the smallest smoothed RTT.
//! - A subflow without an RTT sample ranks after every subflow with one; ties (equal RTTs,
//!   or several without a sample) go to the lowest index. So the order is total and the
//!   choice deterministic.
//! - "Space" is what the caller says it is ([`PathView::space_bytes`] > 0): typically
//!   `cwnd - flight` of the subflow's sender, or 0 when that is below one segment. The
//!   scheduler only orders; it does not look at the shared receive window (the
//!   [`super::data::DataSender`] does).

use crate::time::SimDuration;

/// What the scheduler needs to know of one subflow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathView {
    /// Smoothed RTT (RFC 6298 SRTT); `None` before the first sample.
    pub srtt: Option<SimDuration>,
    /// Bytes the subflow may send now (0: none).
    pub space_bytes: u64,
}

/// The subflow that gets the next chunk, or `None` if none has space.
pub fn pick(views: &[PathView]) -> Option<usize> {
    views
        .iter()
        .enumerate()
        .filter(|(_, v)| v.space_bytes > 0)
        .min_by_key(|&(i, v)| (v.srtt.is_none(), v.srtt.unwrap_or(SimDuration::ZERO), i))
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(rtt_us: Option<u64>, space_bytes: u64) -> PathView {
        PathView { srtt: rtt_us.map(SimDuration::from_us), space_bytes }
    }

    #[test]
    fn lowest_rtt_with_space_first() {
        let v = [path(Some(300), 1460), path(Some(100), 1460), path(Some(200), 1460)];
        assert_eq!(pick(&v), Some(1));
        // the fastest has no space: the next fastest
        let v = [path(Some(300), 1460), path(Some(100), 0), path(Some(200), 1)];
        assert_eq!(pick(&v), Some(2));
        // nobody has space
        assert_eq!(pick(&[path(Some(100), 0), path(None, 0)]), None);
        assert_eq!(pick(&[]), None);
    }

    #[test]
    fn unsampled_subflows_come_last_and_ties_go_to_the_lowest_index() {
        let v = [path(None, 1460), path(Some(5000), 1460), path(None, 1460)];
        assert_eq!(pick(&v), Some(1));
        let v = [path(None, 1460), path(Some(5000), 0), path(None, 1460)];
        assert_eq!(pick(&v), Some(0));
        let v = [path(Some(100), 0), path(Some(200), 1460), path(Some(200), 1460)];
        assert_eq!(pick(&v), Some(1));
        // an RTT of zero is a sample like any other
        let v = [path(None, 1460), path(Some(0), 1460)];
        assert_eq!(pick(&v), Some(1));
    }
}
