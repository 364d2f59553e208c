//! Instruments class files as the agent would (default options, no BarrierPairs), for
//! reading the result with `javap -c -p`:
//!
//! `cargo run --release -p jrace-agent --example instrument_class -- IN.class OUT.class [--jdk]`
//!
//! `--jdk` instruments in the mode the agent uses for the JDK's synchronizing classes.

use jrace_agent::instrument::{instrument, Options};
use jrace_agent::sites::SiteList;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, output, rest @ ..] = args.as_slice() else {
        eprintln!("usage: instrument_class IN.class OUT.class [--jdk]");
        std::process::exit(2);
    };
    let opts = Options {
        jdk: rest.iter().any(|a| a == "--jdk"),
        ..Options::default()
    };
    let bytes = std::fs::read(input).unwrap_or_else(|e| {
        eprintln!("{input}: {e}");
        std::process::exit(2)
    });
    let mut sites = SiteList::default();
    let o = instrument(&bytes, &opts, &mut sites);
    if let Some(e) = &o.error {
        eprintln!("{input}: {e}");
    }
    for f in &o.failures {
        eprintln!("{input}: {f}");
    }
    let out = o.bytes.as_deref().unwrap_or(&bytes);
    std::fs::write(output, out).unwrap_or_else(|e| {
        eprintln!("{output}: {e}");
        std::process::exit(2)
    });
    eprintln!(
        "{} sites, {} bytes -> {} bytes",
        sites.sites.len(),
        bytes.len(),
        out.len()
    );
}
