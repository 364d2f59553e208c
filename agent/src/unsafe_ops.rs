//! The `Unsafe` methods that access memory with an ordering (volatile, acquire/release,
//! opaque, compare-and-set, compare-and-exchange, get-and-add/set/bitwise): the way every
//! atomic, `VarHandle`, field updater and lock-free `java.util.concurrent` class really
//! synchronizes. The instrumenter replaces each call of one by a call of its wrapper in
//! `jrace.rt.U` (same arguments, the `Unsafe` receiver first and the site last); the
//! wrapper performs the very same call under the recorder's stripe lock for the object and
//! records what it read and wrote, so that the trace orders these operations exactly as
//! they happened and carries their values.
//!
//! This file is the one table of them: the instrumenter asks [`lookup`], and build.rs
//! generates `jrace/rt/U.java` with [`java_source`]. The plain writes of
//! `jdk.internal.misc.Unsafe` (`putInt`, `putReference`, ...) are wrapped too and recorded
//! as ordered ones (only the JDK uses that class, and it mixes plain writes and ordered
//! reads on one field), and so are the plain reads and writes of both classes: a plain
//! `VarHandle.get`, `AtomicInteger.getPlain()` or a library's plain `Unsafe` slot access
//! is then synchronization like the ordered ones (it may hide a race through it, never
//! invents one), and the predictive detectors see what it read. An ordered access with a
//! null base is on off-heap memory at address `off` (Agrona's and Aeron's buffers over
//! direct memory): it is recorded on a variable of that address; plain ones there are
//! not recorded (every byte of a direct buffer would be). The forms with an address and
//! no base argument are left alone.

/// What a wrapped method does to the variable at `(o, offset)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Reads it (`get*Volatile/Acquire/Opaque`).
    Get,
    /// Writes it (`put*Volatile/Release/Opaque`, `putOrdered*`).
    Put,
    /// Compare-and-set: reads and writes it when it returns true; reads the value it
    /// found otherwise (a strong CAS reads with volatile semantics either way, and the
    /// thread goes on knowing the value was not the expected one).
    Cas,
    /// Compare-and-exchange: reads and writes it when the witness equals the expected
    /// value, reads the witness otherwise.
    Cax,
    /// `getAndAdd`, `getAndSet`, `getAndBitwiseOr/And/Xor`: reads and writes it.
    Add,
    Swap,
    Or,
    And,
    Xor,
}

/// The value type of a wrapped method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    Int,
    Long,
    Ref,
    Boolean,
    Byte,
    Short,
    Char,
    Float,
    Double,
}

impl Ty {
    const ALL: [Ty; 9] = [
        Ty::Int,
        Ty::Long,
        Ty::Ref,
        Ty::Boolean,
        Ty::Byte,
        Ty::Short,
        Ty::Char,
        Ty::Float,
        Ty::Double,
    ];

    /// The descriptor of a value of this type.
    fn desc(self) -> &'static str {
        match self {
            Ty::Int => "I",
            Ty::Long => "J",
            Ty::Ref => "Ljava/lang/Object;",
            Ty::Boolean => "Z",
            Ty::Byte => "B",
            Ty::Short => "S",
            Ty::Char => "C",
            Ty::Float => "F",
            Ty::Double => "D",
        }
    }

    fn java(self) -> &'static str {
        match self {
            Ty::Int => "int",
            Ty::Long => "long",
            Ty::Ref => "Object",
            Ty::Boolean => "boolean",
            Ty::Byte => "byte",
            Ty::Short => "short",
            Ty::Char => "char",
            Ty::Float => "float",
            Ty::Double => "double",
        }
    }

    /// The type's name in `jdk.internal.misc.Unsafe` method names.
    fn misc_name(self) -> &'static str {
        match self {
            Ty::Int => "Int",
            Ty::Long => "Long",
            Ty::Ref => "Reference",
            Ty::Boolean => "Boolean",
            Ty::Byte => "Byte",
            Ty::Short => "Short",
            Ty::Char => "Char",
            Ty::Float => "Float",
            Ty::Double => "Double",
        }
    }

    /// The type's name in `sun.misc.Unsafe` method names.
    fn sun_name(self) -> &'static str {
        match self {
            Ty::Ref => "Object",
            t => t.misc_name(),
        }
    }

    /// Java expression: the value `v` as the recorder's `long` (the same bits the field
    /// hooks record for this type: ints sign-extended, chars zero-extended, a float's raw
    /// bits unsigned, a double's raw bits).
    fn as_long(self, v: &str) -> String {
        match self {
            Ty::Boolean => format!("({v} ? 1L : 0L)"),
            Ty::Float => format!("(Float.floatToRawIntBits({v}) & 0xFFFFFFFFL)"),
            Ty::Double => format!("Double.doubleToRawLongBits({v})"),
            _ => format!("(long) {v}"),
        }
    }
}

pub const MISC: &str = "jdk/internal/misc/Unsafe";
pub const SUN: &str = "sun/misc/Unsafe";

/// One wrapped method: owner (internal name), name, descriptor, what it does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Method {
    pub owner: &'static str,
    pub name: String,
    pub desc: String,
    pub op: Op,
    pub ty: Ty,
    /// A plain read or write (`getInt`, `putObject`): not recorded on off-heap memory.
    pub plain: bool,
}

impl Method {
    fn new(owner: &'static str, name: String, op: Op, ty: Ty) -> Method {
        let x = ty.desc();
        let desc = match op {
            Op::Get => format!("(Ljava/lang/Object;J){x}"),
            Op::Put => format!("(Ljava/lang/Object;J{x})V"),
            Op::Cas => format!("(Ljava/lang/Object;J{x}{x})Z"),
            Op::Cax => format!("(Ljava/lang/Object;J{x}{x}){x}"),
            _ => format!("(Ljava/lang/Object;J{x}){x}"),
        };
        let plain = matches!(op, Op::Get | Op::Put)
            && [ty.misc_name(), ty.sun_name()]
                .iter()
                .any(|t| name == format!("get{t}") || name == format!("put{t}"));
        Method {
            owner,
            name,
            desc,
            op,
            ty,
            plain,
        }
    }

    /// The name of the same class's volatile read of this method's type.
    fn volatile_get(&self) -> String {
        let t = if self.owner == SUN {
            self.ty.sun_name()
        } else {
            self.ty.misc_name()
        };
        format!("get{t}Volatile")
    }

    /// The wrapper's descriptor: the receiver first, the site last.
    pub fn wrapper_desc(&self) -> String {
        format!("(L{};{}", self.owner, &self.desc[1..]).replacen(")", "I)", 1)
    }
}

/// Every wrapped method of both `Unsafe` classes.
pub fn all() -> Vec<Method> {
    let mut v = Vec::new();
    for ty in Ty::ALL {
        let t = ty.misc_name();
        let m = |name: String, op| Method::new(MISC, name, op, ty);
        // Plain writes too: the JDK mixes them with ordered accesses on one field (AQS
        // sets a node's `prev` plainly before publishing the node), and a read whose
        // value no recorded write explains would cost mcm its races. Plain reads too:
        // `VarHandle.get` on a field and `AtomicInteger.getPlain()` end in one, and a
        // read the trace does not show is a dependence the predictive detectors cannot
        // see (they would run a section that read a flag before the write it read).
        for s in ["", "Volatile", "Acquire", "Opaque"] {
            v.push(m(format!("get{t}{s}"), Op::Get));
        }
        for s in ["", "Volatile", "Release", "Opaque"] {
            v.push(m(format!("put{t}{s}"), Op::Put));
        }
        v.push(m(format!("compareAndSet{t}"), Op::Cas));
        for s in ["", "Plain", "Acquire", "Release"] {
            v.push(m(format!("weakCompareAndSet{t}{s}"), Op::Cas));
        }
        for s in ["", "Acquire", "Release"] {
            v.push(m(format!("compareAndExchange{t}{s}"), Op::Cax));
            v.push(m(format!("getAndSet{t}{s}"), Op::Swap));
            if !matches!(ty, Ty::Ref | Ty::Boolean) {
                v.push(m(format!("getAndAdd{t}{s}"), Op::Add));
            }
            if !matches!(ty, Ty::Ref | Ty::Float | Ty::Double) {
                v.push(m(format!("getAndBitwiseOr{t}{s}"), Op::Or));
                v.push(m(format!("getAndBitwiseAnd{t}{s}"), Op::And));
                v.push(m(format!("getAndBitwiseXor{t}{s}"), Op::Xor));
            }
        }
        let t = ty.sun_name();
        let m = |name: String, op| Method::new(SUN, name, op, ty);
        // Plain ones too, for the same reasons (a library's own ring buffer writes a slot
        // plainly and publishes it with an ordered write of an index).
        for s in ["", "Volatile"] {
            v.push(m(format!("get{t}{s}"), Op::Get));
            v.push(m(format!("put{t}{s}"), Op::Put));
        }
        if matches!(ty, Ty::Int | Ty::Long | Ty::Ref) {
            v.push(m(format!("putOrdered{t}"), Op::Put));
            v.push(m(format!("compareAndSwap{t}"), Op::Cas));
            v.push(m(format!("getAndSet{t}"), Op::Swap));
        }
        if matches!(ty, Ty::Int | Ty::Long) {
            v.push(m(format!("getAndAdd{t}"), Op::Add));
        }
    }
    v
}

/// The wrapped method called by `invokevirtual owner.name desc`, if it is one.
pub fn lookup(owner: &str, name: &str, desc: &str) -> Option<Method> {
    use std::sync::OnceLock;
    static ALL: OnceLock<Vec<Method>> = OnceLock::new();
    if owner != MISC && owner != SUN {
        return None;
    }
    ALL.get_or_init(all)
        .iter()
        .find(|m| m.owner == owner && m.name == name && m.desc == desc)
        .cloned()
}

/// The Java source of `jrace.rt.U`: one static wrapper per method of [`all`].
pub fn java_source() -> String {
    let mut s = String::from(
        "package jrace.rt;\n\n\
         /**\n \
         * Generated by agent/build.rs from agent/src/unsafe_ops.rs: one wrapper per ordered\n \
         * Unsafe access. Each performs the same call under the stripe lock of its object\n \
         * (R.lock) and records what it read and wrote, so that the trace orders the\n \
         * accesses to one variable as they happened. Nothing else runs here.\n \
         */\n\
         public final class U {\n    private U() {}\n\n",
    );
    for m in all() {
        let owner = m.owner.replace('/', ".");
        let t = m.ty.java();
        let l = |v: &str| m.ty.as_long(v);
        let (params, args) = match m.op {
            Op::Get => (String::new(), String::new()),
            Op::Put => (format!(", {t} x"), ", x".to_string()),
            Op::Cas | Op::Cax => (format!(", {t} e, {t} x"), ", e, x".to_string()),
            _ => (format!(", {t} x"), ", x".to_string()),
        };
        let ret = match m.op {
            Op::Put => "void",
            Op::Cas => "boolean",
            _ => t,
        };
        let call = format!("u.{}(o, off{args})", m.name);
        let reference = m.ty == Ty::Ref;
        // What the operation wrote, given the old value r and the argument x.
        let written = |expr: String| -> String {
            match m.ty {
                Ty::Byte | Ty::Short | Ty::Char | Ty::Float => format!("(({t}) ({expr}))"),
                _ => format!("({expr})"),
            }
        };
        let body = match m.op {
            Op::Get if reference => format!("{t} r = {call}; R.uRA(o, off, r, site); return r;"),
            Op::Get => format!("{t} r = {call}; R.uR(o, off, {}, site); return r;", l("r")),
            Op::Put if reference => format!("{call}; R.uWA(o, off, x, site);"),
            Op::Put => format!("{call}; R.uW(o, off, {}, site);", l("x")),
            // A failed one: the value it found, read again under the stripe lock (every
            // recorded write of the variable takes it, so the value is the one the
            // operation saw).
            Op::Cas if reference => format!(
                "boolean ok = {call}; if (ok) R.uRWA(o, off, e, x, site); \
                 else R.uRA(o, off, u.{get}(o, off), site); return ok;",
                get = m.volatile_get()
            ),
            Op::Cas => format!(
                "boolean ok = {call}; if (ok) R.uRW(o, off, {}, {}, site); \
                 else R.uR(o, off, {}, site); return ok;",
                l("e"),
                l("x"),
                l(&format!("u.{}(o, off)", m.volatile_get()))
            ),
            Op::Cax => {
                let same = match m.ty {
                    Ty::Float => "Float.floatToRawIntBits(r) == Float.floatToRawIntBits(e)".into(),
                    Ty::Double => {
                        "Double.doubleToRawLongBits(r) == Double.doubleToRawLongBits(e)".into()
                    }
                    _ => "r == e".to_string(),
                };
                if reference {
                    format!(
                        "{t} r = {call}; if ({same}) R.uRWA(o, off, r, x, site); \
                         else R.uRA(o, off, r, site); return r;"
                    )
                } else {
                    format!(
                        "{t} r = {call}; if ({same}) R.uRW(o, off, {}, {}, site); \
                         else R.uR(o, off, {}, site); return r;",
                        l("r"),
                        l("x"),
                        l("r")
                    )
                }
            }
            Op::Swap if reference => {
                format!("{t} r = {call}; R.uRWA(o, off, r, x, site); return r;")
            }
            Op::Swap => format!(
                "{t} r = {call}; R.uRW(o, off, {}, {}, site); return r;",
                l("r"),
                l("x")
            ),
            Op::Add | Op::Or | Op::And | Op::Xor => {
                let sym = match m.op {
                    Op::Add => "+",
                    Op::Or => "|",
                    Op::And => "&",
                    _ => "^",
                };
                let w = written(format!("r {sym} x"));
                format!(
                    "{t} r = {call}; {t} w = {w}; R.uRW(o, off, {}, {}, site); return r;",
                    l("r"),
                    l("w")
                )
            }
        };
        // A null base: `off` is an address (off-heap memory, a direct buffer's): an ordered
        // access there is recorded on the address, under the address's stripe; a plain one
        // is not recorded (a direct buffer's every byte).
        let null_base = if m.plain {
            if ret == "void" {
                format!("{call}; return;")
            } else {
                format!("return {call};")
            }
        } else {
            format!("int k = R.lockAt(off); try {{ {body} }} finally {{ R.ul(k); }}")
        };
        s.push_str(&format!(
            "    public static {ret} {name}({owner} u, Object o, long off{params}, int site) {{\n        \
             if (o == null) {{ {null_base} }}\n        \
             int k = R.lock(o);\n        \
             try {{ {body} }} finally {{ R.ul(k); }}\n    }}\n",
            name = m.name,
        ));
    }
    s.push_str("}\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_finds_the_ordered_accesses_and_nothing_else() {
        let cas = lookup(MISC, "compareAndSetInt", "(Ljava/lang/Object;JII)Z").unwrap();
        assert_eq!((cas.op, cas.ty), (Op::Cas, Ty::Int));
        assert_eq!(
            cas.wrapper_desc(),
            "(Ljdk/internal/misc/Unsafe;Ljava/lang/Object;JIII)Z"
        );
        let get = lookup(
            MISC,
            "getReferenceAcquire",
            "(Ljava/lang/Object;J)Ljava/lang/Object;",
        )
        .unwrap();
        assert_eq!((get.op, get.ty), (Op::Get, Ty::Ref));
        assert!(lookup(
            SUN,
            "putOrderedObject",
            "(Ljava/lang/Object;JLjava/lang/Object;)V"
        )
        .is_some());
        assert!(lookup(SUN, "getAndAddLong", "(Ljava/lang/Object;JJ)J").is_some());
        // Plain accesses on objects are wrapped; raw addresses, other classes are not.
        assert!(lookup(MISC, "putInt", "(Ljava/lang/Object;JI)V").is_some());
        let plain = lookup(MISC, "getInt", "(Ljava/lang/Object;J)I").unwrap();
        assert_eq!((plain.op, plain.ty), (Op::Get, Ty::Int));
        assert!(
            lookup(SUN, "getInt", "(Ljava/lang/Object;J)I")
                .unwrap()
                .plain
        );
        assert!(
            !lookup(SUN, "getLongVolatile", "(Ljava/lang/Object;J)J")
                .unwrap()
                .plain
        );
        assert!(
            lookup(
                MISC,
                "putReference",
                "(Ljava/lang/Object;JLjava/lang/Object;)V"
            )
            .unwrap()
            .plain
        );
        assert!(!get.plain);
        assert!(lookup(SUN, "putObject", "(Ljava/lang/Object;JLjava/lang/Object;)V").is_some());
        assert!(lookup(MISC, "getIntVolatile", "(J)I").is_none());
        assert!(lookup(SUN, "getInt", "(J)I").is_none());
        assert!(lookup("java/lang/Foo", "getIntVolatile", "(Ljava/lang/Object;J)I").is_none());
        // No Boolean getAndAdd, no Float bitwise.
        assert!(lookup(MISC, "getAndAddBoolean", "(Ljava/lang/Object;JZ)Z").is_none());
        assert!(lookup(MISC, "getAndBitwiseOrFloat", "(Ljava/lang/Object;JF)F").is_none());
    }

    #[test]
    fn every_wrapper_is_generated_once() {
        let all = all();
        let mut keys: Vec<_> = all.iter().map(|m| (m.owner, &m.name, &m.desc)).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), all.len());
        let src = java_source();
        assert_eq!(src.matches("public static").count(), all.len());
        // Off-heap (null base): ordered accesses recorded under the address's stripe.
        let plain = all.iter().filter(|m| m.plain).count();
        assert_eq!(src.matches("R.lockAt(off)").count(), all.len() - plain);
    }
}
