//! The JDK's own synchronization, recorded where the JDK performs it.
//!
//! Models of single API calls cannot keep up with the JDK: every subclass, wrapper,
//! executor path and completion mechanism reaches the same few synchronizing operations
//! through another route. So the classes that implement `java.util.concurrent` and its
//! relatives are instrumented for their synchronization only ([`crate::instrument`]'s
//! JDK mode), whatever calls them: their volatile field accesses and ordered `Unsafe`
//! operations (every atomic, `VarHandle` and field updater ends in one, see
//! [`crate::unsafe_ops`]) in the order they happened, with their values; their monitors
//! (an acquire, and a volatile read of the monitor that its exits write, so that the
//! JDK's critical sections keep their order); their `wait`/`notify`. None of their plain
//! accesses, branches or calls is recorded. This orders whatever the program hands over
//! through them, and the program's own calls keep their models on top
//! ([`crate::runtime`]): locks as acquire/release (so that critical sections can be
//! reordered), a failed `tryLock` as a read of who took the lock last.
//!
//! The classes loaded before the recorder was ready (`ConcurrentHashMap`, `AtomicInteger`
//! and a few more, by the JVM's start-up) are retransformed when it is.

/// Whether a class (internal name) is instrumented in JDK mode.
pub fn is_jdk_sync_class(name: &str) -> bool {
    // java.util.concurrent: atomics, locks, queues, maps, executors, fork/join,
    // CompletableFuture. VarHandle's implementation classes: a VarHandle access anywhere
    // ends in their Unsafe calls. sun.nio.ch: asynchronous channels hand their results to
    // handlers through monitors and j.u.c.
    // The synchronized collections: their monitors, which the program's calls on them
    // pair with an access to the backing collection's state (runtime/models.rs).
    // Core reflection on a volatile field publishes like the field: JDK 17's "qualified"
    // Unsafe field accessors make volatile Unsafe calls; later JDKs go through a method
    // handle, whose lambda form (pregenerated in DirectMethodHandle$Holder) makes them.
    // (Lambda forms spun at run time are hidden classes, which the agent never sees.)
    name.starts_with("java/util/concurrent/")
        || name.starts_with("java/lang/invoke/VarHandle")
        || name.starts_with("jdk/internal/reflect/UnsafeQualified")
        || name == "java/lang/invoke/DirectMethodHandle$Holder"
        || name.starts_with("sun/nio/ch/")
        || name.starts_with("java/util/Collections$Synchronized")
        // Starts and joins the shutdown hooks (see crate::jdkhooks, `Shutdown`).
        || name == "java/lang/ApplicationShutdownHooks"
        // JDK 21+'s thread builders start the threads they build (`Thread.ofPlatform()
        // .start(r)`): their `start()` calls are forks.
        || name.starts_with("java/lang/ThreadBuilders")
        // java.lang.ref.Cleaner: registering a cleaning action and running it pass the
        // action through a list under a monitor (PhantomCleanable).
        || name.starts_with("jdk/internal/ref/")
        // Pipes: the bytes a thread writes reach the reader through a buffer under the
        // input side's monitor, with wait/notify.
        || name.starts_with("java/io/Piped")
        // Its methods are synchronized: a thread that sees another's append comes after
        // it (+0.1% events on the H2 and Derby JDBC workloads).
        || name == "java/lang/StringBuffer"
        || matches!(
            name,
            "java/util/Vector" | "java/util/Stack" | "java/util/Hashtable"
        )
        // Its `changed` flag, set and cleared under its monitor, hands over to the thread
        // whose notifyObservers() found it set (the program's observer runs after the
        // monitor is released: a lock alone would not order it).
        || name == "java/util/Observable"
}

/// JDK classes whose plain field and array accesses are the program's synchronization,
/// as a fenced class's are: the array `VarHandle`s' implementations, whose plain-mode
/// `get`/`set` (`VarHandle.get` on an array, `AtomicIntegerArray.getPlain`/`setPlain`)
/// are a bare array load or store (their other modes end in ordered `Unsafe` calls).
pub fn plain_accesses_sync(name: &str) -> bool {
    name.starts_with("java/lang/invoke/VarHandle") && name.ends_with("$Array")
}

/// JDK classes whose monitors the program's own code may run under: streams and writers
/// (`PrintStream.println` holds the stream while it writes to the program's
/// `OutputStream`; a `Writer` holds its `lock`), `java.util.logging` (a `StreamHandler`
/// holds itself while it calls the program's `Formatter`), `Properties` (its `load` and
/// `store` hold it while they read or write the program's stream). Instrumented in JDK mode
/// like [`is_jdk_sync_class`]'s, but their monitors are recorded as locks only (no
/// `$monitor` order, [`crate::runtime`]): their critical sections may be reordered as the
/// program's may, so a race around a `println` stays predictable, while the program's
/// accesses inside them are protected by them.
pub fn locks_only_class(name: &str) -> bool {
    (name.starts_with("java/io/") && !name.starts_with("java/io/Piped"))
        || name.starts_with("java/util/logging/")
        || name == "java/util/Properties"
}

/// JDK methods whose synchronization is the JVM's business, not the program's: class
/// loading and definition (the loaders' `ConcurrentHashMap`s), the linkage of
/// `invokedynamic` and method handle constants, `MethodType` interning and a
/// `VarHandle`'s first use of an access mode (`java.lang.invoke`'s global caches), and a
/// thread's first `ThreadLocalRandom` (a global seed), and the blocker a parking thread
/// notes for thread dumps. Two threads that load classes or
/// link lambdas would otherwise be ordered through them, hiding races between what they
/// do before and after. While one of these runs, the JDK's events are not recorded
/// (the program's own code, a class loader of the program say, still is).
pub fn quiet_method(class: &str, name: &str) -> bool {
    match class {
        "java/lang/ClassLoader" => name == "loadClass" || name.starts_with("defineClass"),
        "java/lang/invoke/MethodHandleNatives" => {
            name.starts_with("link") || name == "findMethodHandleType"
        }
        "java/lang/invoke/MethodType" => name == "makeImpl",
        "java/lang/invoke/VarHandle" => name == "getMethodHandleUncached",
        "java/util/concurrent/ThreadLocalRandom" => name == "localInit",
        // The blocker a parked thread shows in thread dumps.
        "java/util/concurrent/locks/LockSupport" => name == "setBlocker",
        _ => false,
    }
}

/// Classes with [`quiet_method`]s that are not instrumented otherwise.
pub fn quiet_only_class(class: &str) -> bool {
    matches!(
        class,
        "java/lang/ClassLoader"
            | "java/lang/invoke/MethodHandleNatives"
            | "java/lang/invoke/MethodType"
    )
}
