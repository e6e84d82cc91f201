# Defaults of Queue/HCF (validation/ns2/modules/hcf/hcf.cc, whose header comment gives the
# rules, units and decisions). validation/ns2/build.py appends this file to ns-2's
# tcl/lib/ns-default.tcl, which is compiled into the ns binary.
#
# The paper's long-flow baseline (section V-B): K = 20 bins, c0 = 1 credit, B/2 per queue,
# dynamic priority period, queue swap (III-D) and the LP rule of Algorithm 1.
# limit_ (the buffer B, packets waiting) is Queue's own default (50); set it per link with
# `$ns queue-limit`.

Queue/HCF set bins_          20
Queue/HCF set credits_       1
Queue/HCF set hp_fraction_   0.5
Queue/HCF set swap_          true
Queue/HCF set zero_on_lp_    true
Queue/HCF set period_        0
Queue/HCF set hashes_        1
Queue/HCF set rehash_        true
Queue/HCF set hash_mode_     0
Queue/HCF set seed_          1

# counters (read-only by intent)
Queue/HCF set arrivals_      0
Queue/HCF set hp_arrivals_   0
Queue/HCF set lp_arrivals_   0
Queue/HCF set drops_         0
Queue/HCF set departures_    0
Queue/HCF set hp_departures_ 0
Queue/HCF set lp_departures_ 0
Queue/HCF set periods_       0
Queue/HCF set merges_        0
