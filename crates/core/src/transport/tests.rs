use super::*;
use crate::qdisc::testkit::ctx;
use crate::qdisc::{Qdisc, QueueConfig};
use crate::rng::Streams;
use crate::time::BitsPerSec;
use serde::de::{value::Error as DeError, IntoDeserializer};

fn spec(tcp: &TcpConfig, data: Data) -> FlowSpec<'_> {
    FlowSpec {
        ids: FlowIds { flow: 7, src: 1, dst: 2, sport: 1031, dport: 80 },
        data,
        tcp,
        sender_rate: BitsPerSec(10_000_000_000),
        receiver_rate: BitsPerSec(10_000_000_000),
        mtu: 1500,
        streams: Streams::new(1),
    }
}

// --- the registry ---------------------------------------------------------------------------
#[test]
fn each_chosen_kind_is_named_by_its_line_and_builds_its_own_endpoints() {
    let chosen: Vec<&TransportInfo> = TRANSPORTS.iter().filter(|t| t.chosen).collect();
    assert_eq!(chosen.len(), TransportKind::ALL.len());
    assert_eq!(TransportKind::default(), TransportKind::ALL[0]);
    let tcp = TcpConfig::default();
    for (&kind, info) in TransportKind::ALL.iter().zip(chosen) {
        assert_eq!(kind.as_str(), info.name);
        let parsed = TransportKind::deserialize(info.name.into_deserializer());
        assert_eq!(parsed, Ok::<_, DeError>(kind));
        let e = Endpoint::build(kind, &Tables::default(), &spec(&tcp, Data::Bulk(Some(3000))));
        assert_eq!(e.name(), info.name);
        assert!(!info.summary.is_empty() && !kind.title().is_empty());
    }
    let names: std::collections::BTreeSet<&str> = TRANSPORTS.iter().map(|t| t.name).collect();
    assert_eq!(names.len(), TRANSPORTS.len(), "one line per name");
}

#[test]
fn a_sized_flow_of_each_chosen_kind_opens_and_has_a_deadline() {
    let tcp = TcpConfig { handshake: true, ..TcpConfig::default() };
    for &kind in TransportKind::ALL {
        let mut e = Endpoint::build(kind, &Tables::default(), &spec(&tcp, Data::Bulk(Some(3000))));
        let mut out = Vec::new();
        e.start(SimTime::ZERO, &mut out);
        assert!(!out.is_empty(), "{kind:?} sends something when it opens");
        assert!(out.iter().all(|p| p.flow == 7 && (p.src, p.dst) == (1, 2)));
        assert!(e.deadline(Side::Sender).is_some(), "{kind:?}: a request or a SYN is timed");
        assert_eq!((e.delivered_bytes(), e.clocked()), (0, false));
    }
}

#[test]
fn the_capabilities_of_the_chosen_kinds_are_their_types() {
    assert!(TransportKind::Tcp.tcp_window() && TransportKind::Tcp.multipath() && TransportKind::Tcp.reconnects());
    let x = TransportKind::Xpass;
    assert!(!x.tcp_window() && !x.multipath() && !x.reconnects());
    assert_eq!(x.title(), "ExpressPass");
}

// --- what a transport adds at the ports and to the summary --------------------------------
#[test]
fn only_a_run_with_expresspass_flows_wraps_its_ports() {
    let tables = Tables::default();
    let q = |used: &[TransportKind]| -> AnyQdisc { wrap_port(used, &tables, QueueConfig::default().build(&ctx(1)), &ctx(1)) };
    assert_eq!(q(&[]).name(), "droptail");
    assert!(matches!(q(&[TransportKind::Tcp]), AnyQdisc::DropTail(_)));
    let shaped = q(&[TransportKind::Tcp, TransportKind::Xpass]);
    assert!(matches!(shaped, AnyQdisc::Wrapped(_)));
    assert_eq!(shaped.name(), "xpass");
}

#[test]
fn a_transport_adds_its_figures_only_when_the_run_has_its_flows() {
    let tcp = TcpConfig::default();
    let t = Endpoint::build(TransportKind::Tcp, &Tables::default(), &spec(&tcp, Data::Bulk(None)));
    assert!(summary([&t].into_iter()).is_empty());
    let x = Endpoint::build(TransportKind::Xpass, &Tables::default(), &spec(&tcp, Data::Bulk(None)));
    let keys: Vec<&str> = summary([&t, &x].into_iter()).into_iter().map(|(k, _)| k).collect();
    assert_eq!(keys, ["xpass_credits_sent", "xpass_credits_lost", "xpass_credits_received", "xpass_credits_wasted"]);
}

// --- tables ---------------------------------------------------------------------------------
#[test]
fn a_table_present_is_validated_under_its_name() {
    let bad = xpass::XpassConfig { jitter: 1.5, ..Default::default() };
    let r = TablesRef { xpass: Some(&bad), ..TablesRef::default() };
    assert_eq!(r.validate(1500).unwrap_err().key, "xpass.jitter");
    assert!(TablesRef::default().validate(1500).is_ok(), "no table, nothing to check");
    assert_eq!(TablesRef::default().resolved().xpass.jitter, xpass::XpassConfig::default().jitter);
}
