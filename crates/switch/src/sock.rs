//! Linux packet sockets, signals and the wait: every `unsafe` of the switch is in this file.
//!
//! Rules:
//! - One `AF_PACKET`/`SOCK_RAW` socket per interface, bound to it for `ETH_P_ALL`, non-blocking,
//!   with the interface in promiscuous mode (a packet-socket membership: the kernel drops it when
//!   the socket closes, so an exit never leaves an interface promiscuous).
//! - Plain `recvmsg`/`send`, one frame per call (the "fallback" of the design: no
//!   `TPACKET_V3` ring). `recvmsg` is called with `MSG_TRUNC`, so a frame larger than the buffer
//!   reports its real length and the switch counts it `oversize`; with `SO_TIMESTAMPNS` it also
//!   returns the kernel's receive time of the frame (`CLOCK_REALTIME`), see [`realtime_ns`].
//! - The socket's own outgoing frames are ignored twice over: `PACKET_IGNORE_OUTGOING` (Linux
//!   4.20+; its absence is tolerated) and the `sll_pkttype == PACKET_OUTGOING` test on every
//!   frame received.
//! - SIGINT and SIGTERM are blocked and read from a `signalfd` polled with the sockets, so a
//!   signal can never be lost between a check and the wait, and no handler runs.
//! - [`wait`] is `ppoll` with a nanosecond timeout (0 in the spinning wait modes: a
//!   non-blocking look); the timer slack of the thread is set to 1 us so the kernel does not
//!   defer the wake-up by its default 50 us.
//! - [`yield_cpu`] is `sched_yield`, called by a spinning loop that found nothing to do.
//! - [`pin_to_cpu`] (the `cpu` key) is `sched_setaffinity` of the calling thread.
//! - Each `unsafe` block states why it is sound: the pointers passed are to live, correctly
//!   sized locals or buffers, and the lengths passed are theirs.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

// Kernel ABI values (include/uapi/linux/if_packet.h, asm-generic/socket.h).
const PACKET_ADD_MEMBERSHIP: libc::c_int = 1;
const PACKET_MR_PROMISC: libc::c_ushort = 1;
const PACKET_OUTGOING: u8 = 4;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
const SO_SNDBUFFORCE: libc::c_int = 32;
const SO_RCVBUFFORCE: libc::c_int = 33;

/// `struct packet_mreq`.
#[repr(C)]
struct PacketMreq {
    mr_ifindex: libc::c_int,
    mr_type: libc::c_ushort,
    mr_alen: libc::c_ushort,
    mr_address: [u8; 8],
}

fn check(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn setsockopt<T>(fd: RawFd, level: libc::c_int, name: libc::c_int, v: &T) -> io::Result<()> {
    // SAFETY: `v` is a live value of type T and its exact size is passed with it.
    let r = unsafe { libc::setsockopt(fd, level, name, v as *const T as *const libc::c_void, std::mem::size_of::<T>() as libc::socklen_t) };
    check(r).map(|_| ())
}

/// A packet socket bound to one interface.
#[derive(Debug)]
pub struct PacketSocket {
    fd: OwnedFd,
    pub ifindex: i32,
    /// Whether the kernel honoured `PACKET_IGNORE_OUTGOING`.
    pub ignore_outgoing: bool,
}

impl PacketSocket {
    /// Opens, binds and sets up a socket on `iface`.
    pub fn open(iface: &str) -> io::Result<PacketSocket> {
        let name = CString::new(iface).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in interface name"))?;
        // SAFETY: `name` is a valid NUL-terminated string.
        let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) } as i32;
        if ifindex == 0 {
            return Err(io::Error::new(io::ErrorKind::NotFound, format!("no interface {iface:?} in this network namespace")));
        }
        let proto = (libc::ETH_P_ALL as u16).to_be();
        // SAFETY: plain system call with constant arguments.
        let raw = check(unsafe {
            libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, proto as libc::c_int)
        })?;
        // SAFETY: `raw` is a fresh descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let ignore_outgoing = setsockopt(raw, libc::SOL_PACKET, PACKET_IGNORE_OUTGOING, &1 as &libc::c_int).is_ok();
        let buf: libc::c_int = 8 << 20;
        if setsockopt(raw, libc::SOL_SOCKET, SO_RCVBUFFORCE, &buf).is_err() {
            let _ = setsockopt(raw, libc::SOL_SOCKET, libc::SO_RCVBUF, &buf);
        }
        if setsockopt(raw, libc::SOL_SOCKET, SO_SNDBUFFORCE, &buf).is_err() {
            let _ = setsockopt(raw, libc::SOL_SOCKET, libc::SO_SNDBUF, &buf);
        }
        // SAFETY: sockaddr_ll is plain data; all-zero is a valid value.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = proto;
        sll.sll_ifindex = ifindex;
        // SAFETY: `sll` is a live sockaddr_ll and its size is passed.
        check(unsafe {
            libc::bind(raw, &sll as *const libc::sockaddr_ll as *const libc::sockaddr, std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t)
        })?;
        // receive timestamps, for the input delay figures (best effort)
        let _ = setsockopt(raw, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, &1 as &libc::c_int);
        let mreq = PacketMreq { mr_ifindex: ifindex, mr_type: PACKET_MR_PROMISC, mr_alen: 0, mr_address: [0; 8] };
        setsockopt(raw, libc::SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mreq)?;
        let s = PacketSocket { fd, ifindex, ignore_outgoing };
        // frames of other interfaces may have queued between socket() and bind(): drop them
        let mut scratch = [0u8; 64];
        while let Ok(Some(_)) = s.recv(&mut scratch) {}
        Ok(s)
    }

    /// Receives one frame into `buf`: `Ok(Some((real length, timestamp)))` (the length may
    /// exceed `buf.len()`: the frame was cut; the timestamp is the kernel's receive time,
    /// `CLOCK_REALTIME` ns, when it gave one), `Ok(None)` when nothing is pending. Outgoing
    /// frames are skipped.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<(usize, Option<i64>)>> {
        loop {
            // SAFETY: sockaddr_ll and msghdr are plain data; all-zero is a valid value.
            let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
            let mut iov = libc::iovec { iov_base: buf.as_mut_ptr() as *mut libc::c_void, iov_len: buf.len() };
            // u64 elements keep the control buffer aligned for cmsghdr
            let mut ctl = [0u64; 8];
            let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
            msg.msg_name = &mut sll as *mut libc::sockaddr_ll as *mut libc::c_void;
            msg.msg_namelen = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = ctl.as_mut_ptr() as *mut libc::c_void;
            msg.msg_controllen = std::mem::size_of_val(&ctl) as _;
            // SAFETY: `msg` points to live locals: `sll` (its size given), `iov` (describing `buf`,
            // writable for its length) and `ctl` (its size given); all outlive the call.
            let n = unsafe { libc::recvmsg(self.fd.as_raw_fd(), &mut msg, libc::MSG_TRUNC | libc::MSG_DONTWAIT) };
            if n < 0 {
                let e = io::Error::last_os_error();
                return match e.kind() {
                    io::ErrorKind::WouldBlock => Ok(None),
                    io::ErrorKind::Interrupted => continue,
                    _ => Err(e),
                };
            }
            if sll.sll_pkttype == PACKET_OUTGOING {
                continue;
            }
            let mut ts = None;
            // SAFETY: the kernel filled `msg_control` up to `msg_controllen` with well-formed
            // cmsghdrs; CMSG_FIRSTHDR/NXTHDR stay within it, and an SCM_TIMESTAMPNS payload is a
            // timespec (read unaligned to be safe).
            unsafe {
                let mut c = libc::CMSG_FIRSTHDR(&msg);
                while !c.is_null() {
                    if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                        let t: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                        ts = Some(t.tv_sec as i64 * 1_000_000_000 + t.tv_nsec as i64);
                    }
                    c = libc::CMSG_NXTHDR(&msg, c);
                }
            }
            return Ok(Some((n as usize, ts)));
        }
    }

    /// Sends one frame out of the interface; `false` if the kernel refused it (counted by the caller).
    pub fn send(&self, frame: &[u8]) -> bool {
        loop {
            // SAFETY: `frame` is readable for `frame.len()` bytes.
            let n = unsafe { libc::send(self.fd.as_raw_fd(), frame.as_ptr() as *const libc::c_void, frame.len(), libc::MSG_DONTWAIT) };
            if n >= 0 {
                return n as usize == frame.len();
            }
            if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                return false;
            }
        }
    }

    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// A `signalfd` for SIGINT and SIGTERM (both blocked in the calling thread, before any other
/// thread exists, so no thread receives them otherwise).
#[derive(Debug)]
pub struct Signals {
    fd: OwnedFd,
}

impl Signals {
    pub fn new() -> io::Result<Signals> {
        // SAFETY: sigset_t is plain data, initialised by sigemptyset before use; the calls get
        // pointers to that live local.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGINT);
            libc::sigaddset(&mut set, libc::SIGTERM);
            check(libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()))?;
            let raw = check(libc::signalfd(-1, &set, libc::SFD_NONBLOCK | libc::SFD_CLOEXEC))?;
            Ok(Signals { fd: OwnedFd::from_raw_fd(raw) })
        }
    }
    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// Asks the kernel for 1 us timer slack on this thread (best effort).
pub fn tight_timers() {
    // SAFETY: prctl with integer arguments only.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong, 0, 0, 0);
    }
}

/// `CLOCK_REALTIME` now, in ns (the clock of the receive timestamps).
pub fn realtime_ns() -> i64 {
    // SAFETY: timespec is plain data; clock_gettime writes into the live local.
    let t = unsafe {
        let mut t: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_REALTIME, &mut t);
        t
    };
    t.tv_sec as i64 * 1_000_000_000 + t.tv_nsec as i64
}

/// Pins the calling thread (the whole single-threaded switch) to CPU `cpu`.
pub fn pin_to_cpu(cpu: usize) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain data; all-zero is the empty set, CPU_SET stays within it
    // (`cpu` < CPU_SETSIZE is checked first) and its size is passed with it.
    unsafe {
        if cpu >= libc::CPU_SETSIZE as usize {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "CPU number above CPU_SETSIZE"));
        }
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        check(libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)).map(|_| ())
    }
}

/// Gives the CPU to any other runnable thread on it (`sched_yield`), so a spinning loop stays
/// polite: a process woken on the switch's CPU (e.g. by the frame the switch just sent) runs at
/// once instead of after the spinner's time slice.
pub fn yield_cpu() {
    // SAFETY: no arguments, no memory.
    unsafe {
        libc::sched_yield();
    }
}

/// The process's user and system CPU time so far, in seconds.
pub fn cpu_times() -> (f64, f64) {
    // SAFETY: rusage is plain data; getrusage writes into the live local.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (s(ru.ru_utime), s(ru.ru_stime))
}

/// Waits until one of `fds` is readable or `timeout_ns` passes (`None`: forever); the kernel
/// sets each descriptor's `revents`. An interrupted wait returns `Ok` (nothing ready).
pub fn wait(fds: &mut [libc::pollfd], timeout_ns: Option<u64>) -> io::Result<()> {
    let ts = timeout_ns.map(|ns| libc::timespec { tv_sec: (ns / 1_000_000_000) as libc::time_t, tv_nsec: (ns % 1_000_000_000) as libc::c_long });
    let tp = ts.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `fds` is a live slice of pollfd with its length; `tp` is null or points to `ts`,
    // which lives until the call returns; a null signal mask keeps the current one.
    let r = unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, tp, std::ptr::null()) };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(());
        }
        return Err(e);
    }
    Ok(())
}

/// One wait of a switch's loop over `fds`, whose descriptor `stop` is the stop signal's: clears
/// the events, waits up to `timeout_ns`, and yields the CPU when a spin (`timeout_ns` 0) found
/// nothing, so that a process woken on this CPU (the receiver of the frame just sent) runs now
/// rather than after the switch's time slice (without it the echo behind a hybrid switch waited
/// out the 200 us spin: bench/switch.py). Returns whether `stop` fired.
pub fn wait_round(fds: &mut [libc::pollfd], stop: usize, timeout_ns: u64) -> io::Result<bool> {
    for f in fds.iter_mut() {
        f.revents = 0;
    }
    wait(fds, Some(timeout_ns))?;
    if fds[stop].revents != 0 {
        return Ok(true);
    }
    if timeout_ns == 0 && !fds.iter().any(|f| f.revents != 0) {
        yield_cpu();
    }
    Ok(false)
}

/// Enters the network namespace at `path` (e.g. `/var/run/netns/NAME`) in the calling thread
/// only. Used by the integration test to run TCP endpoints in host namespaces.
pub fn enter_netns(path: &str) -> io::Result<()> {
    let f = std::fs::File::open(path)?;
    // SAFETY: `f` is an open namespace file for the duration of the call.
    check(unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) }).map(|_| ())
}
