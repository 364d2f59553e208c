//! JVMTI, as bindgen generates it from the JDK's headers (agent/build.rs), with the JNI
//! types of the `jni` crate (`jni::sys`, re-exported here), plus the two macros that call
//! through the function tables.
#![allow(
    non_upper_case_globals,
    non_camel_case_types,
    non_snake_case,
    dead_code,
    clippy::all
)]

include!(concat!(env!("OUT_DIR"), "/jvmti_bindings.rs"));

/// `jni!(env, Function, args...)`: calls a JNI function through `env`'s table.
#[macro_export]
macro_rules! jni {
    ($env:expr, $f:ident $(, $a:expr)*) => {{
        let env = $env;
        ((**env).$f.unwrap())(env $(, $a)*)
    }};
}

/// `jvmti!(env, Function, args...)`: calls a JVMTI function through `env`'s table.
#[macro_export]
macro_rules! jvmti {
    ($env:expr, $f:ident $(, $a:expr)*) => {{
        let env = $env;
        ((**env).$f.unwrap())(env $(, $a)*)
    }};
}
