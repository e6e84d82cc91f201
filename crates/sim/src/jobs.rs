//! Jobs: collectives as traffic. A job is a flow group whose `pattern` is a collective
//! (`allreduce_ring`, `allreduce_tree`, `allgather`, `alltoall_collective`): a set of hosts
//! (ranks 0 .. N-1, placed by [`place`]), the buffer of `size` bytes each of them holds, and
//! the collective run `iterations` times with `compute_gap` between them (`docs/workloads.md`,
//! "Collectives").
//!
//! Rules:
//! - One iteration is a [`Schedule`]: transfers in steps, each transfer one ordinary flow of the
//!   engine, of the group's transport, carrying [`Transfer::bytes`] (a share of `size`, rounded
//!   up). A transfer waits for the data it forwards: a transfer of step s >= 1 from rank i
//!   starts when every transfer of step s - 1 into rank i has arrived (its last byte in order
//!   at rank i); one of step 0 starts with its iteration. Ring all-reduce: 2 (N - 1) steps,
//!   rank i to rank i + 1 (mod N), `size / N` each. Recursive halving-doubling
//!   (`allreduce_tree`, N = 2^m): m steps of reduce-scatter, step k with partner `i XOR 2^k`
//!   and `size / 2^(k+1)` bytes, then m steps of all-gather with the partners in reverse order
//!   and the sizes doubling back (`size / N` up to `size / 2`). Ring all-gather: N - 1 steps as
//!   the ring's. All-to-all: one step, every rank to every other, `size / N` each.
//! - An iteration ends when every transfer of it has arrived; the next one starts
//!   `compute_gap` later. The first starts at the job's start (`start_min_s`, or drawn
//!   uniformly up to `start_max_s` from the stream `("job.start", group index)`).
//! - Every transfer of every iteration is a flow made when the run is built (flow ids
//!   `first ..`, iteration by iteration, each in [`Schedule`] order), so the flow set stays
//!   static; only the starts are dynamic. A flow whose dependencies are not met yet has start
//!   [`NOT_STARTED`] and no `Start` event; [`Jobs::on_arrived`] says which flows to start when
//!   a transfer arrives. The engine calls it once per completed flow of a run with jobs;
//!   nothing on the packet path.
//! - Placement ([`place`]): the jobs with a list first, then the contiguous ones (in group
//!   order, the next free hosts in the topology's order), then the random ones (drawn from the
//!   stream `("jobs.placement", group index)` among the free hosts, kept in the topology's
//!   order). It is computed from the whole scenario, so a job run alone (its baseline,
//!   `run.rs`) lands on the very same hosts.
//! - Imports nothing of this crate but the config layer.

use crate::scenario::{Pattern, Placement, Scenario};
use dcfair_core::rng::Streams;
use dcfair_core::time::{SimDuration, SimTime};
use rand::Rng as _;

/// The start of a flow that waits for its dependencies (module rules).
pub const NOT_STARTED: SimTime = SimTime::MAX;

// ---------------------------------------------------------------------------------------------
// One iteration's transfers and their dependencies
// ---------------------------------------------------------------------------------------------

/// One transfer of an iteration: from rank `src` to rank `dst` in step `step`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    pub step: u32,
    pub src: u32,
    pub dst: u32,
    pub bytes: u64,
}

/// The transfers of one iteration of a collective, in order (by step, then by sending rank,
/// then by receiving rank), and for each the transfers that wait for it.
#[derive(Clone, Debug)]
pub struct Schedule {
    pub transfers: Vec<Transfer>,
    pub steps: u32,
    /// Per transfer: how many transfers it waits for.
    pub needs: Vec<u32>,
    /// Per transfer t: the transfers waiting for it are `after[after_at[t] .. after_at[t + 1]]`.
    after_at: Vec<u32>,
    after: Vec<u32>,
}

impl Schedule {
    /// The schedule of collective `p` over `n` ranks, each holding `size` bytes (module rules).
    pub fn new(p: Pattern, n: u32, size: u64) -> Schedule {
        let share = |d: u64| size.div_ceil(d).max(1);
        let mut t = Vec::new();
        let ring = |steps: u32, t: &mut Vec<Transfer>| {
            for step in 0..steps {
                t.extend((0..n).map(|i| Transfer { step, src: i, dst: (i + 1) % n, bytes: share(n as u64) }));
            }
        };
        match p {
            Pattern::AllreduceRing => ring(2 * (n - 1), &mut t),
            Pattern::Allgather => ring(n - 1, &mut t),
            Pattern::AllreduceTree => {
                let m = n.ilog2();
                for k in 0..m {
                    t.extend((0..n).map(|i| Transfer { step: k, src: i, dst: i ^ (1 << k), bytes: share(1 << (k + 1)) }));
                }
                for j in 0..m {
                    let bytes = share(1 << (m - j));
                    t.extend((0..n).map(|i| Transfer { step: m + j, src: i, dst: i ^ (1 << (m - 1 - j)), bytes }));
                }
            }
            Pattern::AlltoallCollective => {
                for i in 0..n {
                    t.extend((0..n).filter(|&j| j != i).map(|j| Transfer { step: 0, src: i, dst: j, bytes: share(n as u64) }));
                }
            }
            _ => unreachable!("not a collective: {}", p.name()),
        }
        Schedule::with_dependencies(t)
    }

    /// `transfers` (in step order) with their dependencies: one of step s >= 1 from rank i waits
    /// for every transfer of step s - 1 into rank i.
    fn with_dependencies(transfers: Vec<Transfer>) -> Schedule {
        let steps = transfers.last().map_or(0, |t| t.step + 1);
        let mut needs = vec![0u32; transfers.len()];
        let mut lists: Vec<Vec<u32>> = vec![Vec::new(); transfers.len()];
        // the transfers of each step, by their first index
        let mut step_at = vec![0usize; steps as usize + 1];
        for (i, t) in transfers.iter().enumerate() {
            step_at[t.step as usize + 1] = i + 1;
        }
        for s in 1..steps as usize {
            let (prev, cur) = (step_at[s - 1]..step_at[s], step_at[s]..step_at[s + 1]);
            for a in prev {
                for b in cur.clone() {
                    if transfers[a].dst == transfers[b].src {
                        lists[a].push(b as u32);
                        needs[b] += 1;
                    }
                }
            }
        }
        let mut after_at = Vec::with_capacity(transfers.len() + 1);
        let mut after = Vec::new();
        after_at.push(0);
        for l in lists {
            after.extend(l);
            after_at.push(after.len() as u32);
        }
        Schedule { transfers, steps, needs, after_at, after }
    }

    /// The transfers that wait for transfer `t`.
    pub fn after(&self, t: usize) -> &[u32] {
        &self.after[self.after_at[t] as usize..self.after_at[t + 1] as usize]
    }

    pub fn len(&self) -> usize {
        self.transfers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.transfers.is_empty()
    }
}

// ---------------------------------------------------------------------------------------------
// Placement
// ---------------------------------------------------------------------------------------------

/// The hosts of every job of `sc` by name, in rank order, in [`Scenario::jobs`] order
/// (module rules; `validate.rs` has checked that they fit).
pub fn place(sc: &Scenario, streams: Streams) -> Vec<Vec<String>> {
    let jobs = sc.jobs();
    let all = sc.topology.host_names(false);
    let mut placed: Vec<Vec<String>> = vec![Vec::new(); jobs.len()];
    let mut used = std::collections::HashSet::new();
    for (j, (_, _, f)) in jobs.iter().enumerate() {
        if f.job_placement() == Placement::List {
            placed[j] = f.hosts.as_ref().map(|h| h.names()).unwrap_or_default();
            used.extend(placed[j].iter().cloned());
        }
    }
    for (j, (_, _, f)) in jobs.iter().enumerate() {
        if f.job_placement() == Placement::Contiguous {
            let take: Vec<String> = all.iter().filter(|h| !used.contains(*h)).take(f.job_host_count() as usize).cloned().collect();
            used.extend(take.iter().cloned());
            placed[j] = take;
        }
    }
    for (j, (g, _, f)) in jobs.iter().enumerate() {
        if f.job_placement() == Placement::Random {
            let mut free: Vec<usize> = (0..all.len()).filter(|&i| !used.contains(&all[i])).collect();
            let n = (f.job_host_count() as usize).min(free.len());
            let mut rng = streams.stream("jobs.placement", *g as u64);
            for i in 0..n {
                let k = rng.gen_range(i..free.len());
                free.swap(i, k);
            }
            let mut take = free[..n].to_vec();
            take.sort_unstable();
            placed[j] = take.into_iter().map(|i| all[i].clone()).collect();
            used.extend(placed[j].iter().cloned());
        }
    }
    placed
}

/// The start of job `f` (group index `g`): `start_min_s`, or uniform in
/// `[start_min_s, start_max_s)` from the stream `("job.start", g)`.
pub fn job_start(f: &crate::scenario::FlowsConfig, g: usize, streams: Streams) -> SimTime {
    let s = if f.start_max_s > f.start_min_s { streams.stream("job.start", g as u64).gen_range(f.start_min_s..f.start_max_s) } else { f.start_min_s };
    SimTime::from_secs_f64(s)
}

// ---------------------------------------------------------------------------------------------
// The jobs of a run
// ---------------------------------------------------------------------------------------------

/// One job of a run: where it is, its schedule, and where its iterations stand.
#[derive(Debug)]
pub struct Job {
    /// Its flow group (an index into the run's group names).
    pub group: u16,
    pub collective: Pattern,
    /// Host ids by rank.
    pub hosts: Vec<u32>,
    pub size: u64,
    pub iterations: u32,
    pub gap: SimDuration,
    pub start: SimTime,
    /// Flow id of the first transfer of the first iteration; iteration k's transfer t is flow
    /// `first + k x len + t`.
    pub first: u32,
    pub schedule: Schedule,
    /// Per transfer of the current iteration: the transfers it still waits for.
    waiting: Vec<u32>,
    /// Transfers of the current iteration that have arrived.
    arrived: u32,
    /// When each iteration started, and when each finished iteration ended.
    pub iteration_starts: Vec<SimTime>,
    pub iteration_ends: Vec<SimTime>,
}

impl Job {
    /// Job of collective `p` over `hosts` (ids by rank), with its flows from `first` on.
    pub fn new(group: u16, p: Pattern, hosts: Vec<u32>, size: u64, iterations: u32, gap: SimDuration, start: SimTime, first: u32) -> Job {
        let schedule = Schedule::new(p, hosts.len() as u32, size);
        Job {
            group,
            collective: p,
            waiting: schedule.needs.clone(),
            schedule,
            hosts,
            size,
            iterations,
            gap,
            start,
            first,
            arrived: 0,
            iteration_starts: vec![start],
            iteration_ends: Vec::new(),
        }
    }

    /// Flows of the job: every transfer of every iteration.
    pub fn flows(&self) -> u32 {
        self.schedule.len() as u32 * self.iterations
    }

    /// Whether flow `f` is one of the job's.
    pub fn holds(&self, f: u32) -> bool {
        f >= self.first && f - self.first < self.flows()
    }

    /// The transfer behind flow `f` of the job: (iteration, index in the schedule).
    pub fn transfer_of(&self, f: u32) -> (u32, usize) {
        let k = f - self.first;
        let len = self.schedule.len() as u32;
        (k / len, (k % len) as usize)
    }

    /// The flows that start with an iteration (step 0), as flow ids of iteration `k`.
    fn openers(&self, k: u32) -> impl Iterator<Item = u32> + '_ {
        let base = self.first + k * self.schedule.len() as u32;
        self.schedule.needs.iter().enumerate().filter(|(_, &n)| n == 0).map(move |(t, _)| base + t as u32)
    }

    /// Whether every iteration has ended.
    pub fn done(&self) -> bool {
        self.iteration_ends.len() as u32 == self.iterations
    }

    /// Completion time: from the job's start to the end of its last iteration.
    pub fn completion(&self) -> Option<SimDuration> {
        self.done().then(|| self.iteration_ends[self.iteration_ends.len() - 1] - self.start)
    }

    /// The time of every finished iteration.
    pub fn iteration_times(&self) -> Vec<SimDuration> {
        self.iteration_ends.iter().zip(&self.iteration_starts).map(|(&e, &s)| e - s).collect()
    }

    /// Transfer `t` of the current iteration arrived at `now`: pushes the flows to start, and
    /// when, into `ready`.
    fn arrived(&mut self, t: usize, now: SimTime, ready: &mut Vec<(SimTime, u32)>) {
        let k = self.iteration_ends.len() as u32;
        let base = self.first + k * self.schedule.len() as u32;
        self.arrived += 1;
        for &d in self.schedule.after(t) {
            let w = &mut self.waiting[d as usize];
            *w -= 1;
            if *w == 0 {
                ready.push((now, base + d));
            }
        }
        if self.arrived < self.schedule.len() as u32 {
            return;
        }
        self.iteration_ends.push(now);
        if self.done() {
            return;
        }
        let next = now + self.gap;
        self.iteration_starts.push(next);
        self.arrived = 0;
        self.waiting.copy_from_slice(&self.schedule.needs);
        ready.extend(self.openers(k + 1).map(|f| (next, f)));
    }
}

/// The jobs of a run (module rules), in [`Scenario::jobs`] order.
#[derive(Debug)]
pub struct Jobs {
    pub jobs: Vec<Job>,
    /// The end of the last job ends the run (no other workload is running).
    pub ends_run: bool,
    /// Jobs not finished yet.
    running: usize,
    /// The flows [`Jobs::on_arrived`] says to start, reused.
    ready: Vec<(SimTime, u32)>,
    /// Each job's completion time when run alone (its baseline, `run.rs`), once known.
    pub alone: Vec<Option<SimDuration>>,
}

impl Jobs {
    pub fn new(jobs: Vec<Job>, ends_run: bool) -> Jobs {
        let n = jobs.len();
        Jobs { jobs, ends_run, running: n, ready: Vec::new(), alone: vec![None; n] }
    }

    /// The flows that start when the run starts (the first step of every job's first
    /// iteration), each at its job's start.
    pub fn openers(&self) -> Vec<(SimTime, u32)> {
        self.jobs.iter().flat_map(|j| j.openers(0).map(move |f| (j.start, f))).collect()
    }

    /// Flow `f` completed at `now`: if it is a job's transfer, the flows that can start now
    /// (or at their next iteration's start), as (time, flow id).
    pub fn on_arrived(&mut self, f: u32, now: SimTime) -> &[(SimTime, u32)] {
        self.ready.clear();
        if let Some(j) = self.jobs.iter_mut().find(|j| j.holds(f)) {
            let (_, t) = j.transfer_of(f);
            j.arrived(t, now, &mut self.ready);
            if j.done() {
                self.running -= 1;
            }
        }
        &self.ready
    }

    /// Whether every job has finished all its iterations.
    pub fn all_done(&self) -> bool {
        self.running == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // --- the schedules -----------------------------------------------------------------------
    #[test]
    fn a_ring_allreduce_of_n_hosts_is_2_n_minus_1_steps_of_n_transfers_of_size_over_n() {
        for n in [2u32, 3, 4, 8] {
            let s = Schedule::new(Pattern::AllreduceRing, n, 8000);
            assert_eq!(s.steps, 2 * (n - 1));
            assert_eq!(s.len() as u32, 2 * (n - 1) * n);
            for step in 0..s.steps {
                let of: Vec<_> = s.transfers.iter().filter(|t| t.step == step).collect();
                assert_eq!(of.len() as u32, n, "n {n} step {step}");
                assert!(of.iter().all(|t| t.dst == (t.src + 1) % n && t.bytes == 8000u64.div_ceil(n as u64)));
            }
            // step s from rank i waits for step s - 1 from rank i - 1, and for nothing else
            for (b, t) in s.transfers.iter().enumerate() {
                let waits: Vec<usize> = (0..s.len()).filter(|&a| s.after(a).contains(&(b as u32))).collect();
                if t.step == 0 {
                    assert!(waits.is_empty());
                } else {
                    assert_eq!(waits.len(), 1);
                    let a = s.transfers[waits[0]];
                    assert_eq!((a.step, a.src), (t.step - 1, (t.src + n - 1) % n));
                }
            }
        }
        assert_eq!(Schedule::new(Pattern::Allgather, 4, 4000).steps, 3, "all-gather: N - 1 steps");
        assert_eq!(Schedule::new(Pattern::AllreduceRing, 3, 10).transfers[0].bytes, 4, "shares round up");
    }

    #[test]
    fn halving_doubling_pairs_rank_i_with_i_xor_2_to_the_k_and_halves_then_doubles() {
        let n = 8;
        let s = Schedule::new(Pattern::AllreduceTree, n, 1024);
        assert_eq!((s.steps, s.len()), (6, 48));
        let step = |k: u32| s.transfers.iter().filter(|t| t.step == k).copied().collect::<Vec<_>>();
        let (partners, sizes): (Vec<u32>, Vec<u64>) = (0..6).map(|k| (step(k)[0].dst ^ step(k)[0].src, step(k)[0].bytes)).unzip();
        assert_eq!(partners, [1, 2, 4, 4, 2, 1], "XOR 2^k out, and back in reverse");
        assert_eq!(sizes, [512, 256, 128, 128, 256, 512], "size/2 .. size/N, then back to size/2");
        for k in 0..6 {
            let t = step(k);
            assert!(t.iter().all(|x| x.dst == x.src ^ partners[k as usize] && x.bytes == sizes[k as usize]));
            let mut into: Vec<u32> = t.iter().map(|x| x.dst).collect();
            into.sort_unstable();
            assert_eq!(into, (0..n).collect::<Vec<_>>(), "every rank receives once per step");
        }
        // rank i's transfer of step k waits for what rank i received in step k - 1
        for (b, t) in s.transfers.iter().enumerate().filter(|(_, t)| t.step > 0) {
            assert_eq!(s.needs[b], 1);
            let a = (0..s.len()).find(|&a| s.after(a).contains(&(b as u32))).unwrap();
            assert_eq!((s.transfers[a].step, s.transfers[a].dst), (t.step - 1, t.src));
        }
    }

    #[test]
    fn an_alltoall_is_one_step_of_every_ordered_pair() {
        let s = Schedule::new(Pattern::AlltoallCollective, 4, 4000);
        assert_eq!((s.steps, s.len()), (1, 12));
        assert!(s.needs.iter().all(|&n| n == 0) && s.transfers.iter().all(|t| t.src != t.dst && t.bytes == 1000));
    }

    // --- the run of a job --------------------------------------------------------------------
    /// Runs job `j` as if every transfer took `dur` (by transfer index: its step + 1 us):
    /// returns (flow, start, arrival) of every flow, in the order they arrive.
    fn play(j: &mut Job) -> Vec<(u32, SimTime, SimTime)> {
        let mut jobs = Jobs::new(vec![], false);
        let mut pending: Vec<(SimTime, u32)> = j.openers(0).map(|f| (j.start, f)).collect();
        let mut log = Vec::new();
        while !pending.is_empty() {
            // the transfer that arrives first (ties by flow id)
            let dur = |f: u32| SimDuration::from_us(1 + j.schedule.transfers[j.transfer_of(f).1].step as u64);
            let (i, _) = pending.iter().enumerate().min_by_key(|(_, (s, f))| (*s + dur(*f), *f)).unwrap();
            let (s, f) = pending.remove(i);
            let end = s + dur(f);
            log.push((f, s, end));
            let (_, t) = j.transfer_of(f);
            j.arrived(t, end, &mut jobs.ready);
            pending.append(&mut jobs.ready);
        }
        log
    }

    #[test]
    fn no_transfer_starts_before_what_it_waits_for_has_arrived_and_iterations_are_apart_by_the_gap() {
        for p in [Pattern::AllreduceRing, Pattern::AllreduceTree, Pattern::Allgather, Pattern::AlltoallCollective] {
            let gap = SimDuration::from_us(50);
            let start = SimTime::ZERO + SimDuration::from_us(10);
            let mut j = Job::new(0, p, vec![10, 11, 12, 13], 4096, 3, gap, start, 100);
            let log = play(&mut j);
            assert_eq!(log.len() as u32, j.flows(), "{}: every flow ran once", p.name());
            let when = |f: u32| log.iter().find(|x| x.0 == f).unwrap();
            let len = j.schedule.len() as u32;
            for &(f, s, _) in &log {
                let (k, t) = j.transfer_of(f);
                for a in 0..len as usize {
                    if j.schedule.after(a).contains(&(t as u32)) {
                        assert!(when(j.first + k * len + a as u32).2 <= s, "{}: flow {f} started before its dependency arrived", p.name());
                    }
                }
                // and not before its iteration started
                assert!(s >= j.iteration_starts[k as usize]);
            }
            assert!(j.done() && j.iteration_ends.len() == 3);
            for k in 1..3 {
                let first_start = (0..len).map(|t| when(j.first + k * len + t).1).min().unwrap();
                assert_eq!(first_start - j.iteration_ends[k as usize - 1], gap, "{}: the gap between iterations", p.name());
                let last_end = (0..len).map(|t| when(j.first + (k - 1) * len + t).2).max().unwrap();
                assert_eq!(last_end, j.iteration_ends[k as usize - 1], "an iteration ends with its last arrival");
            }
            assert_eq!(j.completion(), Some(*j.iteration_ends.last().unwrap() - start));
            // step by step for the rings: 2 (N - 1) steps of 1 us + step each, in sequence
            if p == Pattern::AllreduceRing {
                let one: u64 = (1..=6).sum();
                assert_eq!(j.iteration_times(), vec![SimDuration::from_us(one); 3]);
            }
        }
    }

    #[test]
    fn the_jobs_of_a_run_count_down_and_ignore_other_flows() {
        let a = Job::new(0, Pattern::Allgather, vec![1, 2], 100, 1, SimDuration::ZERO, SimTime::ZERO, 5);
        let mut jobs = Jobs::new(vec![a], true);
        assert_eq!(jobs.openers(), vec![(SimTime::ZERO, 5), (SimTime::ZERO, 6)]);
        let t = SimTime::ZERO + SimDuration::from_us(3);
        assert!(jobs.on_arrived(4, t).is_empty() && jobs.on_arrived(7, t).is_empty(), "not the job's flows");
        assert!(jobs.on_arrived(5, t).is_empty());
        assert!(!jobs.all_done());
        assert!(jobs.on_arrived(6, t).is_empty());
        assert!(jobs.all_done());
    }
}
