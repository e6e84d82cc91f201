//! `cargo run --release -p dcfair-switch --example wakeup [N]`: how late this machine wakes a
//! sleeping thread, the two costs behind the switch's `poll` wait mode (docs/performance.md,
//! "Real-packet switch"). Not a test; no root needed.
//!
//! Rules:
//! - Timer: `ppoll` with no descriptors and a 10 us / 100 us timeout, 1 us timer slack (as the
//!   switch); prints how much later than asked it returned (median, p90, p99 of N).
//! - Wake-up: two processes ping-pong one byte over two pipes, N round trips, one every 2 ms
//!   (the echo bench's pace); the parent is pinned to CPU 0, the child to CPU 1 ("other CPU") or
//!   CPU 0 ("same CPU"), and the child either sleeps in `ppoll` or spins on a non-blocking read.
//!   A round trip with both sleeping is two wake-ups; with the child spinning, one.
//! - Needs 2 CPUs for the "other CPU" rows (they are skipped on one).

use std::time::{Duration, Instant};

fn pin(cpu: usize) {
    // SAFETY: cpu_set_t is plain data, zeroed is the empty set, CPU_SET stays within it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

fn report(name: &str, mut v: Vec<f64>) {
    v.sort_by(f64::total_cmp);
    let q = |p: f64| v[((p * v.len() as f64) as usize).min(v.len() - 1)];
    println!("{name:44} median {:7.1}  p90 {:7.1}  p99 {:7.1} us", q(0.5), q(0.9), q(0.99));
}

fn ppoll_fds(fds: &mut [libc::pollfd], timeout: Option<Duration>) {
    let ts = timeout.map(|d| libc::timespec { tv_sec: d.as_secs() as libc::time_t, tv_nsec: d.subsec_nanos() as libc::c_long });
    let tp = ts.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `fds` is a live slice with its length; `tp` is null or points to `ts`.
    unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, tp, std::ptr::null()) };
}

fn pipe() -> [libc::c_int; 2] {
    let mut p = [0; 2];
    // SAFETY: `p` is a live array of two ints.
    assert_eq!(unsafe { libc::pipe(p.as_mut_ptr()) }, 0);
    p
}

fn ping_pong(n: usize, child_cpu: usize, spin: bool) -> Vec<f64> {
    let (a, b) = (pipe(), pipe());
    // SAFETY: the child only runs the loop below (pipes, ppoll, read, write) and exits with _exit.
    let pid = unsafe { libc::fork() };
    let mut x = [0u8; 1];
    if pid == 0 {
        pin(child_cpu);
        if spin {
            // SAFETY: fcntl on our own descriptor.
            unsafe { libc::fcntl(a[0], libc::F_SETFL, libc::O_NONBLOCK) };
        }
        for _ in 0..n + 100 {
            loop {
                if !spin {
                    ppoll_fds(&mut [libc::pollfd { fd: a[0], events: libc::POLLIN, revents: 0 }], None);
                }
                // SAFETY: `x` is a live one-byte buffer.
                if unsafe { libc::read(a[0], x.as_mut_ptr() as *mut libc::c_void, 1) } == 1 {
                    break;
                }
            }
            // SAFETY: as above.
            unsafe { libc::write(b[1], x.as_ptr() as *const libc::c_void, 1) };
        }
        // SAFETY: ends the child without running the parent's destructors.
        unsafe { libc::_exit(0) };
    }
    pin(0);
    let mut out = Vec::with_capacity(n);
    for i in 0..n + 100 {
        std::thread::sleep(Duration::from_millis(2));
        let t = Instant::now();
        // SAFETY: `x` is a live one-byte buffer.
        unsafe { libc::write(a[1], x.as_ptr() as *const libc::c_void, 1) };
        ppoll_fds(&mut [libc::pollfd { fd: b[0], events: libc::POLLIN, revents: 0 }], None);
        // SAFETY: as above.
        unsafe { libc::read(b[0], x.as_mut_ptr() as *mut libc::c_void, 1) };
        if i >= 100 {
            out.push(t.elapsed().as_secs_f64() * 1e6);
        }
    }
    // SAFETY: waits for our own child.
    unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
    out
}

fn main() {
    let n: usize = std::env::args().nth(1).map_or(2000, |s| s.parse().expect("N: a number of samples"));
    // SAFETY: prctl with integer arguments only.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong, 0, 0, 0) };
    for us in [10u64, 100] {
        let d = Duration::from_micros(us);
        let v = (0..n)
            .map(|_| {
                let t = Instant::now();
                ppoll_fds(&mut [], Some(d));
                (t.elapsed().as_secs_f64() - d.as_secs_f64()) * 1e6
            })
            .collect();
        report(&format!("ppoll timer {us} us: late by"), v);
    }
    let cpus = std::thread::available_parallelism().map_or(1, |c| c.get());
    if cpus >= 2 {
        report("pipe round trip, other CPU, both sleep", ping_pong(n, 1, false));
        report("pipe round trip, other CPU, child spins", ping_pong(n, 1, true));
    }
    report("pipe round trip, same CPU, both sleep", ping_pong(n, 0, false));
}
