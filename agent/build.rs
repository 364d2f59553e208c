//! Generates the JVMTI bindings from the JDK's own headers (bindgen; needs libclang,
//! installed by scripts/setup-deps.sh; the JNI types are the `jni` crate's) and compiles
//! the runtime class `jrace.rt.R`, which the agent embeds and defines at VM start. Bindings are generated, never committed.

use std::path::{Path, PathBuf};
use std::process::Command;

#[allow(dead_code)]
#[path = "src/unsafe_ops.rs"]
mod unsafe_ops;

/// `$JAVA_HOME`, else the JDK that `javac` on the PATH belongs to.
fn java_home() -> Option<PathBuf> {
    if let Ok(h) = std::env::var("JAVA_HOME") {
        let h = PathBuf::from(h);
        if h.join("include/jvmti.h").exists() {
            return Some(h);
        }
    }
    let javac = which("javac")?;
    let real = std::fs::canonicalize(javac).ok()?;
    let home = real.parent()?.parent()?.to_path_buf();
    home.join("include/jvmti.h").exists().then_some(home)
}

fn which(cmd: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(cmd))
            .find(|c| c.is_file())
    })
}

fn main() {
    println!("cargo:rerun-if-changed=runtime");
    println!("cargo:rerun-if-changed=src/unsafe_ops.rs");
    println!("cargo:rerun-if-env-changed=JAVA_HOME");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let home = java_home().unwrap_or_else(|| {
        panic!(
            "jrace-agent needs a JDK (jvmti.h and javac): set JAVA_HOME or put javac on the \
             PATH (scripts/setup-deps.sh installs openjdk-17-jdk-headless)"
        )
    });
    let include = home.join("include");
    bindgen::Builder::default()
        .header(include.join("jvmti.h").to_string_lossy())
        .clang_arg(format!("-I{}", include.display()))
        .clang_arg(format!("-I{}", include.join("linux").display()))
        // JVMTI only: the JNI types it refers to are the `jni` crate's (`jni::sys`), as is
        // the JNI glue of the agent.
        .allowlist_type("jvmti.*|_jvmti.*|jthread|jthreadGroup|jlocation|jrawMonitorID|jniNativeInterface")
        .allowlist_var("JVMTI_.*")
        .blocklist_type(
            "JNIEnv|JNIEnv_|JNINativeInterface_|JavaVM|JavaVM_|JNIInvokeInterface_|_jobject|jobject|jclass|jthrowable|jstring|jarray|j[a-z]+Array|jweak|jvalue|_jfieldID|jfieldID|_jmethodID|jmethodID|jint|jlong|jbyte|jboolean|jchar|jshort|jfloat|jdouble|jsize|JNINativeMethod|jobjectRefType|_jobjectType",
        )
        .raw_line("pub use jni::sys::*;")
        .derive_default(true)
        .layout_tests(false)
        .generate()
        .expect("bindgen over jvmti.h failed (is libclang-dev installed?)")
        .write_to_file(out.join("jvmti_bindings.rs"))
        .expect("writing the JVMTI bindings");

    let classes = out.join("runtime-classes");
    let _ = std::fs::create_dir_all(&classes);
    // jrace.rt.U, the Unsafe wrappers, is generated from the table the instrumenter uses.
    let gen = out.join("runtime-src/jrace/rt");
    std::fs::create_dir_all(&gen).expect("creating the generated runtime source directory");
    let u_src = gen.join("U.java");
    std::fs::write(&u_src, unsafe_ops::java_source()).expect("writing U.java");
    let src = Path::new("runtime/jrace/rt/R.java");
    let javac = home.join("bin/javac");
    // Java 11 class files; R and U use jdk.internal.misc.Unsafe (the agent exports it to
    // them at run time), which --release would hide.
    let status = Command::new(&javac)
        .args([
            "-source",
            "11",
            "-target",
            "11",
            "-nowarn",
            "-XDignore.symbol.file",
            "-Xlint:none",
            "--add-exports",
            "java.base/jdk.internal.misc=ALL-UNNAMED",
            "-d",
        ])
        .arg(&classes)
        .arg(src)
        .arg(&u_src)
        .status()
        .unwrap_or_else(|e| panic!("running {}: {e}", javac.display()));
    assert!(
        status.success(),
        "javac failed on {} and {}",
        src.display(),
        u_src.display()
    );
    println!(
        "cargo:rustc-env=JRACE_RUNTIME_CLASS={}",
        classes.join("jrace/rt/R.class").display()
    );
    println!(
        "cargo:rustc-env=JRACE_UNSAFE_CLASS={}",
        classes.join("jrace/rt/U.class").display()
    );
}
