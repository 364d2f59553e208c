//! The JNI glue, through the `jni` crate: its types (`jni::sys`, which the JVMTI bindings
//! use too, see [`crate::jvmti`]), and its checked calls where the agent registers the
//! natives of `jrace.rt.R` and clears exceptions. The hooks' own JNI calls (object ids,
//! field ids, a thread's name) go through the raw function table with [`crate::jni!`]: the
//! crate's wrappers would add a check and a `Result` per call on the recording path and
//! bring nothing there (measured in benchmarks/RESULTS.md, "session 13").

use jni::objects::JClass;
use jni::sys::{jclass, JNIEnv};
use jni::NativeMethod;
use std::ffi::c_void;

/// Clears the exception pending on this thread, if any; whether there was one.
///
/// # Safety
/// `env` is the calling thread's JNI environment (or null: then nothing happens).
pub unsafe fn take_exception(env: *mut JNIEnv) -> bool {
    let Ok(e) = jni::JNIEnv::from_raw(env) else {
        return false;
    };
    if e.exception_check().unwrap_or(false) {
        let _ = e.exception_clear();
        return true;
    }
    false
}

/// Clears the exception pending on this thread, if any.
///
/// # Safety
/// As [`take_exception`].
pub unsafe fn clear_exception(env: *mut JNIEnv) {
    take_exception(env);
}

/// Binds natives (name, JVM descriptor, entry point) of `class`; a failure names the
/// pending exception's description on the JVM's standard error and clears it.
///
/// # Safety
/// `env` is the calling thread's JNI environment, `class` a live class reference, and each
/// entry point an `extern "C"` function whose parameters match its descriptor.
pub unsafe fn register_natives(
    env: *mut JNIEnv,
    class: jclass,
    natives: &[(&str, &str, *mut c_void)],
) -> Result<(), String> {
    let mut e = jni::JNIEnv::from_raw(env).map_err(|e| e.to_string())?;
    let methods: Vec<NativeMethod> = natives
        .iter()
        .map(|&(name, sig, fn_ptr)| NativeMethod {
            name: name.into(),
            sig: sig.into(),
            fn_ptr,
        })
        .collect();
    let class = JClass::from_raw(class);
    match e.register_native_methods(&class, &methods) {
        Ok(()) => Ok(()),
        Err(err) => {
            if e.exception_check().unwrap_or(false) {
                let _ = e.exception_describe();
                let _ = e.exception_clear();
            }
            Err(format!("RegisterNatives failed: {err}"))
        }
    }
}
