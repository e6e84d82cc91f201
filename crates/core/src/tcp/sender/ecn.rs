//! The reaction of [`TcpSender`] to ECN echoes (RFC 3168, RFC 8257): every ACK of an ECN
//! connection goes to the congestion control, and an ECE cuts the window at most once per
//! window of data, outside loss recovery. The rules are in the [`sender`](super) module
//! documentation; marking ECT and CWR on outgoing segments is part of `emit`.

use super::{SenderState, TcpSender};
use crate::tcp::congestion::{CongestionControl, Loss};
use crate::time::{SimDuration, SimTime};

impl TcpSender {
    /// RFC 3168 6.1.2 / RFC 8257 3.3: every ACK of an ECN connection to the congestion control,
    /// and the reaction to ECE at most once per window, outside loss recovery.
    pub(super) fn on_ecn(&mut self, ece: bool, ack: u64, acked: u64, flight_before: u64, sample: Option<SimDuration>, now: SimTime) {
        let ev = self.ack_event(now, ack, acked, flight_before, sample, ece);
        self.cc.on_ecn_ack(&mut self.win, &ev);
        // past the last reaction's window (CWR is held while ack <= ecn_high), and past the
        // last loss's recovery point
        let may_react = !self.in_recovery && ack > self.ecn_high && self.recover.is_none_or(|r| ack >= r);
        if ece && may_react && self.state != SenderState::Done {
            let loss = Loss { flight: self.flight_bytes(), rwnd: self.peer_rwnd };
            self.cc.on_ecn_echo(&mut self.win, &ev, &loss);
            self.ecn_high = self.snd_max;
            self.cwr_pending = true;
            self.stats.ecn_reductions += 1;
        }
    }
}
