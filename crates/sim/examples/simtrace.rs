//! Differential-test driver: `simtrace OUT SCENARIO.toml [KEY=VALUE ...]` runs the scenario
//! with the engine's event log (feature `trace`) and writes `OUT` (the log, formats in
//! `dcfair_sim::engine::trace`), `OUT.flows.csv` and the summary on stdout.
//! Build: `cargo build --release -p dcfair-sim --features trace --example simtrace`.

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(out), Some(path)) = (args.next(), args.next()) else {
        eprintln!("usage: simtrace OUT SCENARIO.toml [KEY=VALUE ...]");
        std::process::exit(2);
    };
    let overrides: Vec<(String, String)> = args
        .map(|a| match a.split_once('=') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => {
                eprintln!("simtrace: override {a:?} is not KEY=VALUE");
                std::process::exit(2)
            }
        })
        .collect();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("simtrace: {path}: {e}");
        std::process::exit(2)
    });
    let sc = dcfair_sim::load_scenario(&text, &path, &overrides).unwrap_or_else(|e| {
        eprintln!("simtrace: {e}");
        std::process::exit(e.exit_code())
    });
    let (r, trace) = dcfair_sim::run_traced(&sc, None).unwrap_or_else(|e| {
        eprintln!("simtrace: {e}");
        std::process::exit(e.exit_code())
    });
    let write = |p: &str, body: &str| {
        if let Err(e) = std::fs::write(p, body) {
            eprintln!("simtrace: {p}: {e}");
            std::process::exit(1);
        }
    };
    write(&out, &trace);
    write(&format!("{out}.flows.csv"), &r.flows_csv);
    print!("{}", r.summary_json);
}
