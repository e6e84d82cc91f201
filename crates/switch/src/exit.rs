//! How the switch's commands end on an error: one line on stderr, then the exit status
//! (`docs/testbed.md`, "Switch": 2 for bad input, naming the key; 1 for a system failure).

use std::process::exit;

/// Ends the process with `code` after one line on stderr.
pub fn fail(code: i32, msg: &str) -> ! {
    eprintln!("dcfair-switch: {msg}");
    exit(code)
}
