//! Minimal driver for profiling and benchmarks: `simrun SCENARIO.toml [KEY=VALUE ...] [--out DIR]
//! [--parts N]`. Prints the summary and `events/s` on stderr; `--out DIR` also writes the result
//! files; `--parts N` runs the network split into `N` parts on this thread
//! (`dcfair_sim::run::run_in_parts`) and prints how its windows went as one JSON line on stderr
//! (`simrun: parts {...}`: `dcfair_sim::engine::PartsStats`).
//! Users want the `dcfair` command instead.

#[global_allocator]
static GLOBAL: dcfair_sim::Allocator = dcfair_sim::Allocator;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: simrun SCENARIO.toml [KEY=VALUE ...]");
        std::process::exit(2);
    };
    let mut out_dir = None;
    let mut parts = None;
    let mut rest = Vec::new();
    while let Some(a) = args.next() {
        if a == "--out" {
            out_dir = args.next();
        } else if a == "--parts" {
            parts = args.next().and_then(|n| n.parse::<usize>().ok()).filter(|&n| n >= 1).or_else(|| {
                eprintln!("simrun: --parts takes a count of at least 1");
                std::process::exit(2)
            });
        } else {
            rest.push(a);
        }
    }
    let overrides: Vec<(String, String)> = rest
        .into_iter()
        .map(|a| match a.split_once('=') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => {
                eprintln!("simrun: override {a:?} is not KEY=VALUE");
                std::process::exit(2)
            }
        })
        .collect();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("simrun: {path}: {e}");
        std::process::exit(2)
    });
    let sc = dcfair_sim::load_scenario(&text, &path, &overrides).unwrap_or_else(|e| {
        eprintln!("simrun: {e}");
        std::process::exit(e.exit_code())
    });
    let t = std::time::Instant::now();
    let r = match parts {
        Some(n) => dcfair_sim::run::run_in_parts(&sc, None, n).map(|(r, s)| {
            let stats = serde_json::json!({
                "parts": n, "windows": s.windows, "events": s.events, "crossings": s.crossings,
                "global_events": s.global_events, "critical_events": s.critical_events,
            });
            eprintln!("simrun: parts {stats}");
            r
        }),
        None => dcfair_sim::run(&sc, None, None),
    };
    let r = r.unwrap_or_else(|e| {
        eprintln!("simrun: {e}");
        std::process::exit(e.exit_code())
    });
    let wall = t.elapsed().as_secs_f64();
    if let Some(dir) = out_dir {
        if let Err(e) = r.write_to(std::path::Path::new(&dir)) {
            eprintln!("simrun: {e}");
            std::process::exit(1);
        }
    }
    print!("{}", r.summary_json);
    let v: serde_json::Value = serde_json::from_str(&r.summary_json).expect("own JSON");
    if let Some(t) = v["trace"]["truncated_at_s"].as_f64() {
        eprintln!("simrun: warning: the trace stopped at {t} s (measure.trace.max_rows)");
    }
    let ev = v["events"].as_f64().unwrap_or(0.0);
    eprintln!("simrun: {ev} events in {wall:.3} s = {:.2} M events/s", ev / wall / 1e6);
}
