//! Parse → write of every class of the running JDK must give the identical bytes.
use crate::common;

use jrace_agent::classfile::ClassFile;
use std::time::Instant;

#[test]
fn jdk_classes_round_trip_byte_identically() {
    let dir = match common::jdk_classes() {
        Ok(d) => d,
        Err(why) => {
            println!("SKIPPED: {why}");
            return;
        }
    };
    let t = Instant::now();
    let files = common::class_files(&dir);
    assert!(files.len() > 1000, "only {} classes extracted", files.len());
    // Debug builds are ~20x slower; check a sample there.
    let step = 1;
    let mut checked = 0usize;
    let mut failures = Vec::new();
    for f in files.iter().step_by(step) {
        let bytes = std::fs::read(f).unwrap();
        match ClassFile::parse(&bytes) {
            Ok(c) => {
                let out = c.to_bytes();
                if out != bytes {
                    let at = out
                        .iter()
                        .zip(&bytes)
                        .position(|(a, b)| a != b)
                        .unwrap_or(out.len().min(bytes.len()));
                    failures.push(format!("{}: output differs at byte {at}", f.display()));
                }
            }
            Err(e) => failures.push(format!("{}: {e}", f.display())),
        }
        checked += 1;
    }
    println!(
        "{checked} of {} JDK classes round-tripped in {:.1}s, {} failures",
        files.len(),
        t.elapsed().as_secs_f64(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}

/// Random byte flips, truncations and insertions in real classes: parsing gives a result or
/// an error with an offset inside the input, never a panic, and what parses writes back.
#[test]
fn corrupted_classes_give_errors_not_panics() {
    let dir = match common::jdk_classes() {
        Ok(d) => d,
        Err(why) => {
            println!("SKIPPED: {why}");
            return;
        }
    };
    let files = common::class_files(&dir);
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (mut ok, mut err) = (0, 0);
    for f in files.iter().step_by(files.len() / 200 + 1) {
        let orig = std::fs::read(f).unwrap();
        for round in 0..50 {
            let mut b = orig.clone();
            match round % 5 {
                0 => b.truncate(rnd() as usize % b.len()),
                1 => {
                    let i = rnd() as usize % b.len();
                    b.insert(i, rnd() as u8)
                }
                _ => {
                    for _ in 0..1 + rnd() % 4 {
                        let i = rnd() as usize % b.len();
                        b[i] ^= 1 << (rnd() % 8);
                    }
                }
            }
            match ClassFile::parse(&b) {
                Ok(c) => {
                    let _ = c.to_bytes();
                    ok += 1;
                }
                Err(e) => {
                    assert!(
                        e.offset <= b.len(),
                        "{e} beyond the input ({} bytes)",
                        b.len()
                    );
                    assert!(!e.message.is_empty());
                    err += 1;
                }
            }
        }
    }
    println!("fuzz: {ok} corrupted classes still parsed, {err} rejected with an error");
    assert!(err > 0);
}

/// Decoding every method's bytecode and encoding it again at the same offsets gives the same
/// bytes (switch padding is written as zeros, as javac does).
#[test]
fn jdk_bytecode_decodes_and_reencodes() {
    let dir = match common::jdk_classes() {
        Ok(d) => d,
        Err(why) => {
            println!("SKIPPED: {why}");
            return;
        }
    };
    let (mut methods, mut failures) = (0usize, Vec::new());
    for f in common::class_files(&dir) {
        let bytes = std::fs::read(&f).unwrap();
        let c = ClassFile::parse(&bytes).unwrap();
        for m in &c.methods {
            let Some(code) = m.code() else { continue };
            methods += 1;
            let r = jrace_agent::classfile::insn::decode(&code.code)
                .and_then(|v| jrace_agent::classfile::insn::encode_all(&v));
            match r {
                Ok(b) if b == code.code => {}
                Ok(_) => failures.push(format!(
                    "{} {}: re-encoding differs",
                    f.display(),
                    c.method_name(m)
                )),
                Err(e) => failures.push(format!("{} {}: {e}", f.display(), c.method_name(m))),
            }
        }
    }
    println!(
        "{methods} methods decoded and re-encoded, {} failures",
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{}",
        failures[..failures.len().min(20)].join("\n")
    );
}
