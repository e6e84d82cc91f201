//! The fuzz target's seed corpus (`fuzz/corpus/parse_rewrite/`), run through the harness body
//! by plain `cargo test`, so the harness and its properties are exercised where cargo-fuzz is
//! not available. Crash inputs found by fuzzing belong in that folder too.

#[test]
fn fuzz_corpus_holds() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/parse_rewrite");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).expect("corpus folder") {
        let data = std::fs::read(e.unwrap().path()).unwrap();
        dcfair_switch::fuzz::fuzz_one(&data);
        // and every prefix of it (truncations are the commonest real damage)
        for k in 0..data.len() {
            dcfair_switch::fuzz::fuzz_one(&data[..k]);
        }
        n += 1;
    }
    assert!(n >= 10, "corpus has only {n} inputs");
}
