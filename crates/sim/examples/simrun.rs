//! Minimal driver for profiling and benchmarks: `simrun SCENARIO.toml [KEY=VALUE ...] [--out DIR]`.
//! Prints the summary and `events/s` on stderr; `--out DIR` also writes the result files.
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
    let mut rest = Vec::new();
    while let Some(a) = args.next() {
        if a == "--out" {
            out_dir = args.next();
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
    let r = dcfair_sim::run(&sc, None, None).unwrap_or_else(|e| {
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
