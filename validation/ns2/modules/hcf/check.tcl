# check.tcl -- unit check of Queue/HCF (hcf.cc) in the module build of ns-2.35.
#
#   out/peers/ns2/bin/ns validation/ns2/modules/hcf/check.tcl --dir DIR [--zero_on_lp 0|1] [--swap 0|1]
#
# One simulation, several independent links n0 -> n1, each with its own Queue/HCF and traffic,
# every queue event traced (trace-queue: + enqueue side, - dequeue, d drop) into DIR/<case>.tr.
# After the run each case's trace is read back and checked:
#
#   order      no reordering within a flow (flow = src addr.port -> dst addr.port): the packets
#              leave the queue in the order they arrived, dropped ones left out;
#   accounting arrived = departed + dropped + queued at the end, from the trace, and the queue's
#              own counters (arrivals_, departures_, drops_) equal the trace's counts;
#   exact      (cases rule-*) the outcome Algorithm 1 prescribes, packet by packet, computed by
#              hand below (hash_mode_ 2 gives each flow a known bin: bin = fid mod K).
#
# --zero_on_lp 0 / --swap 0 override those rules on every queue: a negative control. With
# --zero_on_lp 0 the case rule-zero-lp must fail (a4 overtakes a3, reordering its flow), which
# shows the checks can fail; check.py runs both. Prints one PASS/FAIL line per check; exits 1
# if any check failed.

array set opt { dir "" zero_on_lp "" swap "" }
foreach {k v} $argv {
    set key [string range $k 2 end]
    if {![string match --* $k] || ![info exists opt($key)]} {
        puts stderr "check.tcl: unknown option '$k' (options: --dir, --zero_on_lp, --swap)"
        exit 2
    }
    set opt($key) $v
}
if {$opt(dir) eq ""} { puts stderr "check.tcl: --dir DIR is required"; exit 2 }

set ns [new Simulator]
global defaultRNG
$defaultRNG seed 7
set failures 0
set checks 0

proc report {ok name what} {
    global failures checks
    incr checks
    if {$ok} { puts "PASS $name: $what" } else { puts "FAIL $name: $what"; incr failures }
}

# One case: nodes a -> b over a link of `rate` with an HCF queue of `limit` packets,
# configured by `params` (name value ...); the reverse link carries TCP's ACKs.
proc make_case {name rate limit params} {
    global ns opt case
    set a [$ns node]
    set b [$ns node]
    $ns simplex-link $a $b $rate 1ms HCF
    $ns simplex-link $b $a $rate 1ms DropTail
    $ns queue-limit $a $b $limit
    $ns queue-limit $b $a 1000
    set q [[$ns link $a $b] queue]
    foreach {k v} $params { $q set $k $v }
    if {$opt(zero_on_lp) ne ""} { $q set zero_on_lp_ $opt(zero_on_lp) }
    if {$opt(swap) ne ""} { $q set swap_ $opt(swap) }
    set fh [open [file join $opt(dir) $name.tr] w]
    $ns trace-queue $a $b $fh
    set case($name) [list $a $b $q $fh]
    return $case($name)
}

proc udp_agent {a b fid size} {
    global ns
    set u [new Agent/UDP]
    $u set fid_ $fid
    $u set packetSize_ $size
    $ns attach-agent $a $u
    set n [new Agent/Null]
    $ns attach-agent $b $n
    $ns connect $u $n
    return $u
}

# ------------------------------------------------------------------------------------------
# rule-zero-lp: K = 2 bins, c0 = 2, B = 4 (HP 2 + LP 2), 1 Mb/s, 1000-byte packets (8 ms each).
# Flow A (fid 0) -> bin 0, flow B (fid 1) -> bin 1 (hash_mode_ 2).
#   t=0      a1: bin 0 has 2 credits -> HP (1 left); the port is idle: a1 leaves at once, HP is
#            empty -> new period: swap, credits back to 2.
#            a2 -> HP (bin 0: 1 left); b1 -> HP (bin 1: 1 left), HP now full (2);
#            a3: bin 0 has a credit but HP is full -> LP, and the LP rule sets c(0) = 0.
#   t=8 ms   a2 leaves (HP = [b1]).
#   t=10 ms  a4: c(0) = 0 -> LP (without the LP rule: c(0) = 1 and HP has room -> HP, and a4
#            would leave before a3).
#   t=16 ms  b1 leaves; HP empty -> new period: swap (HP = [a3 a4]).
#   t=24, 32 ms  a3, a4.
# Expected departures: a1 a2 b1 a3 a4; HP arrivals 3, LP arrivals 2, no drop; 3 periods begun.
set c [make_case rule-zero-lp 1Mb 4 {bins_ 2 credits_ 2 hp_fraction_ 0.5 hash_mode_ 2}]
set qz [lindex $c 2]
set uA [udp_agent [lindex $c 0] [lindex $c 1] 0 1000]
set uB [udp_agent [lindex $c 0] [lindex $c 1] 1 1000]
$ns at 0.0 "$uA send 1000 a1; $uA send 1000 a2; $uB send 1000 b1; $uA send 1000 a3"
$ns at 0.010 "$uA send 1000 a4"
# credits and roles while a2 is in service, after a4 arrived
set probe(rule-zero-lp) ""
$ns at 0.011 {set probe(rule-zero-lp) [list [$qz credit 0] [$qz credit 1] [$qz hp-length] [$qz lp-length]]}
set expect(rule-zero-lp) {
    order {A1 A2 B1 A3 A4} drops {} hp_arrivals_ 3 lp_arrivals_ 2 periods_ 3
    probe {0 1 1 2}
}

# rule-drop: K = 1, c0 = 1, B = 4 (HP 2 + LP 2); six packets of one flow at t = 0.
#   a1 -> HP, leaves at once, new period (c = 1); a2 -> HP (c = 0); a3, a4 -> LP (no credit);
#   a5, a6: no credit, LP full -> dropped (the arriving packet: Algorithm 1's drop(p)).
#   t=8 ms a2 leaves, HP empty -> new period, swap: HP = [a3 a4]; t=16 ms a3;
#   t=24 ms a4 leaves, HP empty -> new period.
# Expected departures: a1 a2 a3 a4; drops a5 a6; HP arrivals 2, LP arrivals 2; 3 periods begun.
set c [make_case rule-drop 1Mb 4 {bins_ 1 credits_ 1 hp_fraction_ 0.5 hash_mode_ 2}]
set uA2 [udp_agent [lindex $c 0] [lindex $c 1] 0 1000]
$ns at 0.0 "for {set i 1} {\$i <= 6} {incr i} { $uA2 send 1000 a\$i }"
set expect(rule-drop) {
    order {A1 A2 A3 A4} drops {A5 A6} hp_arrivals_ 2 lp_arrivals_ 2 periods_ 3
}

# ------------------------------------------------------------------------------------------
# Stress cases: 8 TCP NewReno flows and 3 Poisson UDP sources on one node (each agent its own
# port, so its own flow), 10 Mb/s, a small buffer; every variant of the rules.
set stress {
    s-default       12 {}
    s-bloom         12 {bins_ 8 hashes_ 3}
    s-fixed-period  12 {period_ 0.002}
    s-hp-quarter    12 {hp_fraction_ 0.25}
    s-credits-4     12 {bins_ 4 credits_ 4}
    s-one-bin       12 {bins_ 1}
    s-no-rehash     12 {rehash_ false}
    s-fid-hash      12 {hash_mode_ 1 bins_ 5}
}
set fid 0
foreach {name limit params} $stress {
    set c [make_case $name 10Mb $limit [concat $params [list seed_ [incr fid]]]]
    set a [lindex $c 0]
    set b [lindex $c 1]
    for {set i 0} {$i < 8} {incr i} {
        set t [new Agent/TCP/Newreno]
        $t set fid_ $i
        $t set window_ 40
        $t set packetSize_ 960
        $ns attach-agent $a $t
        set s [new Agent/TCPSink]
        $ns attach-agent $b $s
        $ns connect $t $s
        set f [$t attach-app FTP]
        $ns at [expr {0.01 * $i}] "$f start"
    }
    for {set i 0} {$i < 3} {incr i} {
        set u [udp_agent $a $b [expr {100 + $i}] 500]
        set e [new Application/Traffic/Exponential]
        $e set packetSize_ 500
        $e set burst_time_ 0.002
        $e set idle_time_ 0.01
        $e set rate_ 4Mb
        $e attach-agent $u
        $ns at 0.0 "$e start"
    }
}

# ------------------------------------------------------------------------------------------
proc analyze {name} {
    global case expect probe
    lassign $case($name) a b q fh
    set lines {}
    set in [open [file join $::opt(dir) $name.tr] r]
    set plus 0; set minus 0; set drops 0
    array set arr {}; array set dep {}; array set dropped {}
    set order {}; set droplist {}
    # flow label for the exact cases: A/B by fid, numbered by arrival
    array set nth {}; array set label {}
    while {[gets $in line] >= 0} {
        set f [split $line " "]
        set ev [lindex $f 0]
        set fid [lindex $f 7]
        set flow "[lindex $f 8]>[lindex $f 9]"
        set uid [lindex $f 11]
        switch -- $ev {
            + {
                incr plus
                lappend arr($flow) $uid
                set who [expr {$fid == 0 ? "A" : ($fid == 1 ? "B" : "F$fid")}]
                if {![info exists nth($who)]} { set nth($who) 0 }
                set label($uid) "$who[incr nth($who)]"
            }
            - { incr minus; lappend dep($flow) $uid; lappend order $label($uid) }
            d { incr drops; set dropped($uid) 1; lappend droplist $label($uid) }
        }
    }
    close $in
    set queued [expr {[$q hp-length] + [$q lp-length]}]

    # order within each flow
    set bad {}
    foreach flow [array names arr] {
        set kept {}
        foreach u $arr($flow) { if {![info exists dropped($u)]} { lappend kept $u } }
        set d [expr {[info exists dep($flow)] ? $dep($flow) : {}}]
        if {$d ne [lrange $kept 0 [expr {[llength $d] - 1}]]} { lappend bad $flow }
    }
    report [expr {[llength $bad] == 0}] $name "no reordering within a flow ([llength [array names arr]] flows[expr {[llength $bad] ? ", reordered: $bad" : ""}])"
    report [expr {$plus == $minus + $drops + $queued}] $name \
        "accounting: arrived $plus = departed $minus + dropped $drops + queued $queued"
    set cnt [list [$q set arrivals_] [$q set departures_] [$q set drops_]]
    report [expr {$cnt eq [list $plus $minus $drops]}] $name \
        "queue counters (arrivals_ departures_ drops_) $cnt = trace $plus $minus $drops"
    set hl [expr {[$q set hp_arrivals_] + [$q set lp_arrivals_] + [$q set drops_]}]
    report [expr {$hl == $plus}] $name "hp_arrivals_ + lp_arrivals_ + drops_ = $hl = arrivals $plus"

    if {[info exists expect($name)]} {
        array set e $expect($name)
        report [expr {$order eq $e(order)}] $name "departure order: $order (expected $e(order))"
        report [expr {$droplist eq $e(drops)}] $name "dropped: {$droplist} (expected {$e(drops)})"
        foreach k {hp_arrivals_ lp_arrivals_ periods_} {
            report [expr {[$q set $k] == $e($k)}] $name "$k [$q set $k] (expected $e($k))"
        }
        if {[info exists e(probe)]} {
            report [expr {$probe($name) eq $e(probe)}] $name \
                "at 11 ms: c(0) c(1) HP-length LP-length = $probe($name) (expected $e(probe))"
        }
        array unset e
    } else {
        # stress: the variant's rule was exercised
        report [expr {$drops > 0 && [$q set lp_arrivals_] > 0 && [$q set periods_] > 0}] $name \
            "exercised: [$q set hp_arrivals_] HP / [$q set lp_arrivals_] LP arrivals, $drops drops, [$q set periods_] periods, [$q set merges_] merges"
        if {$name eq "s-fixed-period"} {
            report [expr {[$q set merges_] > 0}] $name "fixed period appended LP to a non-empty HP ([$q set merges_] times)"
        }
    }
}

proc finish {} {
    global ns case failures checks
    $ns flush-trace
    foreach name [array names case] { close [lindex $case($name) 3] }
    foreach name [lsort [array names case]] { analyze $name }
    puts "check.tcl: $checks checks, $failures failed"
    exit [expr {$failures ? 1 : 0}]
}
$ns at 3.0 finish
$ns run
