//! SACK loss recovery (RFC 6675) of [`TcpSender`]: the scoreboard's upkeep on every ACK, the
//! start of a recovery, and `NextSeg()`, which picks what leaves while `cwnd - pipe >= SMSS`.
//! The rules are in the [`sender`](super) module documentation; the scoreboard is
//! [`Scoreboard`](crate::tcp::sack::Scoreboard).

use super::{TcpSender, TimerKind};
use crate::packet::Packet;
use crate::tcp::congestion::{CongestionControl, Loss};
use crate::time::SimTime;

/// What RFC 6675's `NextSeg()` picked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NextSeg {
    /// Rules 1 and 3: retransmit `[start, end)`.
    Rxt(u64, u64),
    /// Rule 2: the next segment of new data (or the FIN).
    New,
    /// Rule 4: the rescue retransmission `[start, end)`.
    Rescue(u64, u64),
}

impl TcpSender {
    /// RFC 6675 `Update()`: the cumulative ACK trims the scoreboard (a stop inside a SACKed
    /// range is reneging: start over), then the ACK's blocks, clipped to the outstanding data,
    /// are recorded. Returns the octets SACKed for the first time.
    pub(super) fn update_scoreboard(&mut self, pkt: &Packet) -> u64 {
        let ack = pkt.ack;
        if self.sb.advance(ack) {
            self.sb.clear(); // RFC 2018 8: the receiver reneged
        }
        let high = self.snd_max.min(self.data_end);
        let mut new = 0;
        for b in &pkt.sack {
            let (s, e) = (b.start.max(ack), b.end.min(high));
            if s < e {
                new += self.sb.insert(s, e);
            }
        }
        new
    }

    /// An ACK with new SACK information (RFC 6675's duplicate ACK), section 5 step 2.
    pub(super) fn on_sack_dupack(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if self.in_recovery {
            return; // (B): nothing but the scoreboard; try_send runs (C)
        }
        self.dupacks = self.dupacks.saturating_add(1);
        // 5.1: no new recovery before the cumulative ACK reaches RecoveryPoint
        let allowed = self.recover.is_none_or(|r| self.snd_una >= r);
        if allowed && self.cc.fast_retransmit() && (self.dupacks >= self.dupthresh || self.sb.is_lost(self.snd_una, self.dupthresh, self.mss)) && !self.wait_for_reordering(now) {
            self.enter_sack_recovery(now, out);
        }
    }

    /// RFC 6675 section 5 step 4: RecoveryPoint, the congestion reaction (cwnd = the window
    /// the congestion control chose, without inflation), retransmit `HighACK + 1`.
    pub(super) fn enter_sack_recovery(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let loss = Loss { flight: self.flight_bytes().saturating_sub(self.lt_bytes), rwnd: self.peer_rwnd };
        self.cc.on_enter_fast_recovery(&mut self.win, &loss, self.dupacks);
        self.win.cwnd = self.win.base_cwnd(); // (4.2) no inflation with SACK
        self.win.inflation = 0;
        self.in_recovery = true;
        self.recover = Some(self.snd_max); // (4.1) RecoveryPoint = HighData
        self.after_rto = false;
        self.lt_bytes = 0;
        self.stats.fast_retransmits += 1;
        self.timed = None; // Karn
        self.rescue_sent = false;
        let (s, e) = self.unsacked_segment(self.snd_una);
        self.emit_range(s, e, now, out); // (4.3)
        self.high_rxt = e;
        self.timer = Some((self.timer_due(now), TimerKind::Retransmit));
    }

    /// Up to one SMSS of unSACKed, already sent payload starting at the first unSACKed octet at
    /// or after `from`, ending before the next SACKed range.
    fn unsacked_segment(&self, from: u64) -> (u64, u64) {
        let sent_end = self.snd_max.min(self.data_end);
        let (s, next) = self.sb.unsacked_run(from);
        let e = s.saturating_add(self.mss).min(next.unwrap_or(u64::MAX)).min(sent_end);
        (s, e.max(s))
    }

    /// New data (or the FIN) may leave: NextSeg rule 2's "unsent data, and the receiver's
    /// advertised window allows".
    fn new_data_allowed(&self) -> bool {
        if self.snd_nxt < self.data_end {
            let len = self.mss.min(self.data_end - self.snd_nxt);
            self.snd_nxt + len <= self.snd_una.saturating_add(self.peer_rwnd)
        } else {
            self.has_fin && self.snd_nxt == self.data_end
        }
    }

    /// RFC 6675 `NextSeg()`, rules 1-4 in order.
    fn next_seg(&self) -> Option<NextSeg> {
        let sent_end = self.snd_max.min(self.data_end);
        let (s, e) = self.unsacked_segment(self.high_rxt.max(self.snd_una));
        // (1) the first unSACKed octet above HighRxt that IsLost (the lost edge is a SACKed
        // range's start, so (1.b) holds too)
        if s < sent_end && self.sb.lost_edge(self.dupthresh, self.mss).is_some_and(|l| s < l) {
            return Some(NextSeg::Rxt(s, e));
        }
        // (2) new data
        if self.new_data_allowed() {
            return Some(NextSeg::New);
        }
        // (3) an unSACKed octet above HighRxt below the highest SACKed one, lost or not
        if s < sent_end && self.sb.high_sacked().is_some_and(|h| s < h) {
            return Some(NextSeg::Rxt(s, e));
        }
        // (4) once per recovery: a segment ending at the highest unSACKed octet outstanding
        if !self.rescue_sent {
            let una = self.snd_una.max(self.data_start);
            let ranges = self.sb.ranges();
            let (lo, hi) = match ranges.last() {
                Some(&(_, top)) if top < sent_end => (top, sent_end),
                Some(&(bottom, _)) => (ranges.len().checked_sub(2).map_or(una, |k| ranges[k].1), bottom),
                None => (una, sent_end),
            };
            let lo = lo.max(una);
            if lo < hi {
                return Some(NextSeg::Rescue(lo.max(hi.saturating_sub(self.mss)), hi));
            }
        }
        None
    }

    /// RFC 6675 5 (C): while `cwnd - pipe >= SMSS`, send what `NextSeg()` picks.
    pub(super) fn send_in_recovery(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let mut new_left = if self.recovery_max_burst > 0 { self.recovery_max_burst } else { u32::MAX };
        // (C.4) the rescue segment is in the pipe for this ACK, although SetPipe() leaves it
        // out later (HighRxt does not move)
        let mut rescue_bytes = 0;
        loop {
            if self.win.cwnd < (self.pipe() + rescue_bytes).saturating_add(self.mss) {
                break;
            }
            let Some(next) = self.next_seg() else { break };
            if matches!(next, NextSeg::New) && new_left == 0 {
                break;
            }
            let data = !matches!(next, NextSeg::New) || self.snd_nxt < self.data_end;
            if data {
                if let Some(t) = self.pacer.hold_until(now, self.rtt.srtt()) {
                    self.pace_wake = Some(t); // the pacer releases it (next_deadline)
                    break;
                }
            }
            match next {
                NextSeg::Rxt(s, e) => {
                    self.emit_range(s, e, now, out);
                    self.high_rxt = self.high_rxt.max(e); // (C.2)
                }
                NextSeg::Rescue(s, e) => {
                    self.emit_range(s, e, now, out); // HighRxt stays
                    self.rescue_sent = true;
                    rescue_bytes = e - s;
                }
                NextSeg::New => {
                    new_left -= 1;
                    let len = if self.snd_nxt < self.data_end { self.mss.min(self.data_end - self.snd_nxt) } else { 0 };
                    self.send_from_nxt(len, now, out); // (C.3)
                }
            }
        }
    }

    /// Retransmits the sent payload `[s, e)`, with the FIN if it ends the data and the FIN was
    /// sent.
    fn emit_range(&mut self, s: u64, e: u64, now: SimTime, out: &mut Vec<Packet>) {
        let len = e.saturating_sub(s);
        let fin = self.has_fin && self.snd_max > self.data_end && s + len == self.data_end;
        if len > 0 || fin {
            self.emit(s, len, fin, now, out);
        }
    }
}
