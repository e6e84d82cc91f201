//! `dcfair-switch --config switch.toml --stats stats.json [--seed N]`: the real-packet switch.
//! The command line and its rules are in [`dcfair_switch::cli`].

fn main() {
    dcfair_switch::cli::run(std::env::args().collect())
}
