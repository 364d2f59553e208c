//! The hook ABI, stated once: every static method of `jrace.rt.R`
//! (agent/runtime/jrace/rt/R.java) that instrumented code calls or that the agent binds,
//! with its JVM descriptor. The instrumenter takes descriptors from here
//! ([`called`]), `RegisterNatives` binds each native by the name and descriptor here
//! ([`native`]), and a test checks the table against the compiled `R.class`, so a hook
//! changed in one place and not the other fails the build's tests, not a user's JVM.

/// One static method of `R`.
#[derive(Clone, Copy, Debug)]
pub struct Hook {
    pub name: &'static str,
    pub desc: &'static str,
    /// Instrumented code calls it (`invokestatic R.name`).
    pub called: bool,
    /// A native the agent binds.
    pub native: bool,
}

const fn hook(name: &'static str, desc: &'static str, called: bool, native: bool) -> Hook {
    Hook {
        name,
        desc,
        called,
        native,
    }
}

/// Called by instrumented code and bound by the agent.
const fn both(name: &'static str, desc: &'static str) -> Hook {
    hook(name, desc, true, true)
}

/// Called by instrumented code, written in Java (it calls natives itself).
const fn java(name: &'static str, desc: &'static str) -> Hook {
    hook(name, desc, true, false)
}

/// A native only `R`'s own Java code calls.
const fn inner(name: &'static str, desc: &'static str) -> Hook {
    hook(name, desc, false, true)
}

/// Every hook of `R`.
pub const HOOKS: &[Hook] = &[
    // Field reads and writes (value, object, site).
    both("rdI", "(ILjava/lang/Object;I)V"),
    both("rdJ", "(JLjava/lang/Object;I)V"),
    both("rdF", "(FLjava/lang/Object;I)V"),
    both("rdD", "(DLjava/lang/Object;I)V"),
    both("rdA", "(Ljava/lang/Object;Ljava/lang/Object;I)V"),
    both("wrI", "(Ljava/lang/Object;II)V"),
    both("wrJ", "(Ljava/lang/Object;JI)V"),
    both("wrF", "(Ljava/lang/Object;FI)V"),
    both("wrD", "(Ljava/lang/Object;DI)V"),
    both("wrA", "(Ljava/lang/Object;Ljava/lang/Object;I)V"),
    // Static reads and writes.
    both("srI", "(II)V"),
    both("srJ", "(JI)V"),
    both("srF", "(FI)V"),
    both("srD", "(DI)V"),
    both("srA", "(Ljava/lang/Object;I)V"),
    both("swI", "(II)V"),
    both("swJ", "(JI)V"),
    both("swF", "(FI)V"),
    both("swD", "(DI)V"),
    both("swA", "(Ljava/lang/Object;I)V"),
    // Array element reads and writes.
    both("arI", "(ILjava/lang/Object;II)V"),
    both("arJ", "(JLjava/lang/Object;II)V"),
    both("arF", "(FLjava/lang/Object;II)V"),
    both("arD", "(DLjava/lang/Object;II)V"),
    both("arA", "(Ljava/lang/Object;Ljava/lang/Object;II)V"),
    both("awI", "(Ljava/lang/Object;III)V"),
    both("awJ", "(Ljava/lang/Object;IJI)V"),
    both("awF", "(Ljava/lang/Object;IFI)V"),
    both("awD", "(Ljava/lang/Object;IDI)V"),
    both("awA", "(Ljava/lang/Object;ILjava/lang/Object;I)V"),
    // The JDK's ordered volatile accesses: a stripe lock around the access.
    java("lk", "(Ljava/lang/Object;I)I"),
    java("lks", "(I)I"),
    java("ul", "(I)V"),
    java("rdIL", "(ILjava/lang/Object;II)V"),
    java("rdJL", "(JLjava/lang/Object;II)V"),
    java("rdFL", "(FLjava/lang/Object;II)V"),
    java("rdDL", "(DLjava/lang/Object;II)V"),
    java("rdAL", "(Ljava/lang/Object;Ljava/lang/Object;II)V"),
    java("srIL", "(III)V"),
    java("srJL", "(JII)V"),
    java("srFL", "(FII)V"),
    java("srDL", "(DII)V"),
    java("srAL", "(Ljava/lang/Object;II)V"),
    inner("resolve", "(I)I"),
    // Unsafe operations, through the wrappers of jrace.rt.U.
    inner("uR", "(Ljava/lang/Object;JJI)V"),
    inner("uW", "(Ljava/lang/Object;JJI)V"),
    inner("uRW", "(Ljava/lang/Object;JJJI)V"),
    inner("uRA", "(Ljava/lang/Object;JLjava/lang/Object;I)V"),
    inner("uWA", "(Ljava/lang/Object;JLjava/lang/Object;I)V"),
    inner(
        "uRWA",
        "(Ljava/lang/Object;JLjava/lang/Object;Ljava/lang/Object;I)V",
    ),
    // Monitors and synchronized methods.
    both("menter", "(Ljava/lang/Object;I)V"),
    both("mexit", "(Ljava/lang/Object;I)V"),
    both("senter", "(Ljava/lang/Object;I)V"),
    both("sexit", "(Ljava/lang/Object;I)V"),
    both("sthrow", "(I)V"),
    // Calls the runtime models (before/after, Java wrappers that skip unmodelled sites).
    java("before", "(Ljava/lang/Object;I)V"),
    java("after", "(Ljava/lang/Object;I)V"),
    java("afterZ", "(ZLjava/lang/Object;I)V"),
    java("afterA", "(Ljava/lang/Object;Ljava/lang/Object;I)V"),
    java("beforeI", "(Ljava/lang/Object;II)V"),
    java("beforeWait", "(Ljava/lang/Object;JI)V"),
    java("afterAI", "(Ljava/lang/Object;Ljava/lang/Object;II)V"),
    inner("before0", "(Ljava/lang/Object;I)V"),
    inner("after0", "(Ljava/lang/Object;I)V"),
    inner("afterZ0", "(ZLjava/lang/Object;I)V"),
    inner("afterA0", "(Ljava/lang/Object;Ljava/lang/Object;I)V"),
    inner("beforeI0", "(Ljava/lang/Object;II)V"),
    inner("beforeWait0", "(Ljava/lang/Object;JI)V"),
    inner("afterAI0", "(Ljava/lang/Object;Ljava/lang/Object;II)V"),
    // Task hand-offs, System.arraycopy, quiet JDK methods.
    both("tenter", "(Ljava/lang/Object;I)V"),
    both("texit", "(Ljava/lang/Object;I)V"),
    both("arraycopy", "(Ljava/lang/Object;ILjava/lang/Object;III)V"),
    both("qenter", "(I)V"),
    both("qexit", "(I)V"),
    // BarrierPairs.
    both("bpenter0", "(II)I"),
    both("bpenter1", "(ILjava/lang/Object;I)I"),
    both("bpenter2", "(ILjava/lang/Object;Ljava/lang/Object;I)I"),
    both(
        "bpenter3",
        "(ILjava/lang/Object;Ljava/lang/Object;Ljava/lang/Object;I)I",
    ),
    both("bpenterN", "(I[Ljava/lang/Object;I)I"),
    both("bpexit", "(I)V"),
    both("bpunwind", "(II)V"),
    // Branches and class initialization.
    both("br", "(I)V"),
    both("clinit", "(I)V"),
    java("cu", "(I)V"),
    inner("cu0", "(I)V"),
    both("cuc", "(Ljava/lang/Object;I)V"),
];

fn find(name: &str) -> Option<&'static Hook> {
    HOOKS.iter().find(|h| h.name == name)
}

/// The descriptor of hook `name`, if instrumented code may call it.
pub fn called(name: &str) -> Option<&'static str> {
    find(name).filter(|h| h.called).map(|h| h.desc)
}

/// The descriptor of native `name`, if the agent binds it.
pub fn native(name: &str) -> Option<&'static str> {
    find(name).filter(|h| h.native).map(|h| h.desc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classfile::ClassFile;

    const ACC_STATIC: u16 = 0x0008;
    const ACC_NATIVE: u16 = 0x0100;

    /// The table is the compiled R.class: each hook exists there, static, with its
    /// descriptor, native exactly when the table says so; every native of R is bound.
    #[test]
    fn the_table_is_the_compiled_runtime_class() {
        let cf = ClassFile::parse(crate::RUNTIME_CLASS).expect("R.class parses");
        let methods: Vec<(String, String, u16)> = cf
            .methods
            .iter()
            .map(|m| (cf.method_name(m), cf.method_descriptor(m), m.access_flags))
            .collect();
        let mut names = std::collections::HashSet::new();
        for h in HOOKS {
            assert!(names.insert(h.name), "{} twice", h.name);
            let m = methods
                .iter()
                .find(|(n, d, _)| n == h.name && d == h.desc)
                .unwrap_or_else(|| panic!("R has no {}{}", h.name, h.desc));
            assert!(m.2 & ACC_STATIC != 0, "{} is not static", h.name);
            assert_eq!(m.2 & ACC_NATIVE != 0, h.native, "{}: native?", h.name);
        }
        for (n, d, flags) in &methods {
            if flags & ACC_NATIVE != 0 {
                assert_eq!(native(n), Some(d.as_str()), "native {n}{d} is not bound");
            }
        }
    }
}
