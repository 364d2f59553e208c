//! Metadata records: names for ids, location details, reachable sets and key/value
//! facts. Each record names its id explicitly, so records may arrive in any order (the
//! agent interns from many threads); ids never named get placeholder names.

use super::varint::{push_str, push_uvarint, Cursor};
use crate::model::*;
use std::collections::BTreeMap;

pub const M_THREAD: u8 = 1;
pub const M_STATIC: u8 = 2;
pub const M_VAR: u8 = 3;
pub const M_LOCK: u8 = 4;
pub const M_LOC: u8 = 5;
pub const M_METHOD: u8 = 6;
pub const M_OBJECT: u8 = 7;
pub const M_OBJSET: u8 = 8;
pub const M_KV: u8 = 9;
pub const M_STACK: u8 = 10;
/// BarrierPairs recorded compactly (see [`super::heap`]): an object's reference slots.
pub const M_BP_SNAP: u8 = 11;
/// ... a traced reference write into a snapshotted object.
pub const M_BP_EDGE: u8 = 12;
/// ... a `Thread` object and its trace thread.
pub const M_BP_THREAD: u8 = 13;
/// A variable named by what it is rather than by a string: an object's field, a static
/// field or an array element. The recorder meets millions of variables in a database run;
/// this record costs it no formatting, and the reader builds the same names as [`M_VAR`]
/// would carry (`12.account.Account.balance`, `account.Account.total`, `12[3]`).
pub const M_OBJ_VAR: u8 = 14;

/// Reachable-set record kinds: the objects, every object, or the roots to expand.
const SET_OBJECTS: u8 = 0;
const SET_ALL: u8 = 1;
const SET_ROOTS: u8 = 2;

const D_DETAIL: u8 = 1;
const D_FILE: u8 = 2;
const D_LINE: u8 = 4;
const D_BCI: u8 = 8;

pub fn name_record(out: &mut Vec<u8>, tag: u8, id: u32, name: &str) {
    out.push(tag);
    push_uvarint(out, id as u64);
    push_str(out, name);
}

pub fn var_record(out: &mut Vec<u8>, id: u32, static_id: u32, name: &str) {
    out.push(M_VAR);
    push_uvarint(out, id as u64);
    push_uvarint(out, static_id as u64);
    push_str(out, name);
}

/// An [`M_OBJ_VAR`] record: variable `id` (static name `static_id`) is field `static_id` of
/// object `obj` (0: a static field) or, with `elem`, element `elem` of array `obj`.
pub fn obj_var_record(out: &mut Vec<u8>, id: u32, static_id: u32, obj: u64, elem: Option<u32>) {
    out.push(M_OBJ_VAR);
    push_uvarint(out, id as u64);
    push_uvarint(out, static_id as u64);
    push_uvarint(out, obj);
    push_uvarint(out, elem.map_or(0, |i| i as u64 + 1));
}

pub fn loc_record(out: &mut Vec<u8>, id: u32, token: &str, detail: Option<&LocDetail>) {
    out.push(M_LOC);
    push_uvarint(out, id as u64);
    push_str(out, token);
    let Some(d) = detail else {
        out.push(0);
        return;
    };
    let mut bits = D_DETAIL;
    bits |= if d.file.is_some() { D_FILE } else { 0 };
    bits |= if d.line.is_some() { D_LINE } else { 0 };
    bits |= if d.bci.is_some() { D_BCI } else { 0 };
    out.push(bits);
    push_str(out, &d.class);
    push_str(out, &d.method);
    if let Some(f) = &d.file {
        push_str(out, f);
    }
    if let Some(l) = d.line {
        push_uvarint(out, l as u64);
    }
    if let Some(b) = d.bci {
        push_uvarint(out, b as u64);
    }
}

pub fn objset_record(out: &mut Vec<u8>, id: u32, set: &ObjSet) {
    out.push(M_OBJSET);
    push_uvarint(out, id as u64);
    match set {
        ObjSet::All => out.push(1),
        ObjSet::Objects(v) => {
            out.push(0);
            push_uvarint(out, v.len() as u64);
            for &o in v {
                push_uvarint(out, o as u64);
            }
        }
    }
}

/// The roots of an `enter` recorded compactly: object ids (as in variable names) whose
/// reachable set the reader expands, plus object-table names always in it (`--bp-globals`).
pub fn roots_record(out: &mut Vec<u8>, id: u32, roots: &[u64], names: &[u32]) {
    out.push(M_OBJSET);
    push_uvarint(out, id as u64);
    out.push(SET_ROOTS);
    push_uvarint(out, roots.len() as u64);
    for &r in roots {
        push_uvarint(out, r);
    }
    push_uvarint(out, names.len() as u64);
    for &n in names {
        push_uvarint(out, n as u64);
    }
}

/// Object `obj`'s reference slots (targets, by object id) as read at `stamp`.
pub fn snap_record(out: &mut Vec<u8>, stamp: u64, obj: u64, targets: &[u64]) {
    out.push(M_BP_SNAP);
    push_uvarint(out, stamp);
    push_uvarint(out, obj);
    push_uvarint(out, targets.len() as u64);
    for &t in targets {
        push_uvarint(out, t);
    }
}

/// A traced reference write `from.f = to` (or `from[i] = to`) at `stamp`.
pub fn edge_record(out: &mut Vec<u8>, stamp: u64, from: u64, to: u64) {
    out.push(M_BP_EDGE);
    push_uvarint(out, stamp);
    push_uvarint(out, from);
    push_uvarint(out, to);
}

/// Object `obj` is the `Thread` of trace thread `thread`.
pub fn thread_object_record(out: &mut Vec<u8>, obj: u64, thread: u32) {
    out.push(M_BP_THREAD);
    push_uvarint(out, obj);
    push_uvarint(out, thread as u64);
}

pub fn kv_record(out: &mut Vec<u8>, key: &str, value: &str) {
    out.push(M_KV);
    push_str(out, key);
    push_str(out, value);
}

/// The call stack (innermost frame first, as locations) with which `thread` first ran
/// the access at location `loc`.
pub fn stack_record(out: &mut Vec<u8>, thread: u32, loc: u32, frames: &[u32]) {
    out.push(M_STACK);
    push_uvarint(out, thread as u64);
    push_uvarint(out, loc as u64);
    push_uvarint(out, frames.len() as u64);
    for &f in frames {
        push_uvarint(out, f as u64);
    }
}

/// Ids are dense: refuse absurd ones before growing a table to them.
const MAX_ID: u32 = 1 << 28;

/// Tables as read, indexed by id; `None` where no record named the id.
#[derive(Default)]
pub struct MetaTables {
    threads: Vec<Option<String>>,
    statics: Vec<Option<String>>,
    vars: Vec<Option<(u32, VarName)>>,
    locks: Vec<Option<String>>,
    locs: Vec<Option<(String, Option<LocDetail>)>>,
    methods: Vec<Option<String>>,
    objects: Vec<Option<String>>,
    objsets: Vec<Option<ObjSet>>,
    stacks: Vec<((u32, u32), Vec<u32>)>,
    pub kv: BTreeMap<String, String>,
    /// The compact BarrierPair records, for [`super::heap::HeapReplay`].
    pub heap: super::heap::HeapRecords,
}

/// How a variable record names its variable.
enum VarName {
    Text(String),
    /// Field of this object (0: the static field itself), named after its static name.
    Field(u64),
    /// Element of this array.
    Elem(u64, u32),
}

fn put<T>(table: &mut Vec<Option<T>>, id: u32, v: T) -> Result<(), String> {
    if id >= MAX_ID {
        return Err(format!("expected an id below {MAX_ID}, found {id}"));
    }
    let i = id as usize;
    if i >= table.len() {
        table.resize_with(i + 1, || None);
    }
    // A later record for the same id wins (the agent never writes two; be lenient).
    table[i] = Some(v);
    Ok(())
}

impl MetaTables {
    /// Decodes one record at the cursor.
    pub fn decode(&mut self, c: &mut Cursor) -> Result<(), String> {
        let tag = c.u8("a metadata record tag")?;
        match tag {
            M_THREAD | M_STATIC | M_LOCK | M_METHOD | M_OBJECT => {
                let id = c.u32("an id")?;
                let name = c.str("a name")?;
                let t = match tag {
                    M_THREAD => &mut self.threads,
                    M_STATIC => &mut self.statics,
                    M_LOCK => &mut self.locks,
                    M_METHOD => &mut self.methods,
                    _ => &mut self.objects,
                };
                put(t, id, name)
            }
            M_VAR => {
                let id = c.u32("a variable id")?;
                let s = c.u32("a static name id")?;
                let name = c.str("a variable name")?;
                put(&mut self.vars, id, (s, VarName::Text(name)))
            }
            M_OBJ_VAR => {
                let id = c.u32("a variable id")?;
                let s = c.u32("a static name id")?;
                let obj = c.uvarint("an object id")?;
                let name = match c.uvarint("an element index plus one (0: a field)")? {
                    0 => VarName::Field(obj),
                    i if i <= 1 << 32 => VarName::Elem(obj, (i - 1) as u32),
                    i => {
                        return Err(format!(
                            "expected an element index below 2^32, found {}",
                            i - 1
                        ))
                    }
                };
                put(&mut self.vars, id, (s, name))
            }
            M_LOC => {
                let id = c.u32("a location id")?;
                let token = c.str("a location token")?;
                let bits = c.u8("location detail bits")?;
                if bits & !(D_DETAIL | D_FILE | D_LINE | D_BCI) != 0
                    || (bits != 0 && bits & D_DETAIL == 0)
                {
                    return Err(format!("expected location detail bits, found {bits:#04x}"));
                }
                let detail = if bits & D_DETAIL != 0 {
                    let class = c.str("a class name")?;
                    let method = c.str("a method name")?;
                    let file = if bits & D_FILE != 0 {
                        Some(c.str("a file name")?)
                    } else {
                        None
                    };
                    let line = if bits & D_LINE != 0 {
                        Some(c.u32("a line")?)
                    } else {
                        None
                    };
                    let bci = if bits & D_BCI != 0 {
                        Some(c.u32("a bytecode index")?)
                    } else {
                        None
                    };
                    Some(LocDetail {
                        class,
                        method,
                        file,
                        line,
                        bci,
                    })
                } else {
                    None
                };
                put(&mut self.locs, id, (token, detail))
            }
            M_OBJSET => {
                let id = c.u32("a reachable-set id")?;
                let set = match c.u8("a reachable-set kind")? {
                    SET_ALL => ObjSet::All,
                    SET_ROOTS => {
                        let roots = u64s(c, "root object ids")?;
                        let n = c.uvarint("a name count")?;
                        if n > (c.data.len() - c.pos) as u64 {
                            return Err(format!("expected {n} names, found the end of the chunk"));
                        }
                        let mut names = Vec::with_capacity(n as usize);
                        for _ in 0..n {
                            names.push(c.u32("an object name id")?);
                        }
                        if id >= MAX_ID {
                            return Err(format!("expected an id below {MAX_ID}, found {id}"));
                        }
                        self.heap.roots.push((id, roots, names));
                        // A placeholder until the reader expands it at each enter.
                        ObjSet::Objects(Vec::new())
                    }
                    SET_OBJECTS => {
                        let n = c.uvarint("an object count")?;
                        // Each id takes at least one byte: bound the allocation by the data.
                        if n > (c.data.len() - c.pos) as u64 {
                            return Err(format!(
                                "expected {n} object ids, found the end of the chunk"
                            ));
                        }
                        let mut v = Vec::with_capacity(n as usize);
                        for _ in 0..n {
                            v.push(c.u32("an object id")?);
                        }
                        ObjSet::Objects(v)
                    }
                    k => return Err(format!("expected reachable-set kind 0, 1 or 2, found {k}")),
                };
                put(&mut self.objsets, id, set)
            }
            M_STACK => {
                let thread = c.u32("a thread id")?;
                let loc = c.u32("a location id")?;
                let n = c.uvarint("a frame count")?;
                if n > (c.data.len() - c.pos) as u64 {
                    return Err(format!("expected {n} frames, found the end of the chunk"));
                }
                let mut frames = Vec::with_capacity(n as usize);
                for _ in 0..n {
                    frames.push(c.u32("a frame location id")?);
                }
                self.stacks.push(((thread, loc), frames));
                Ok(())
            }
            M_BP_SNAP => {
                let stamp = c.uvarint("a stamp")?;
                let obj = c.uvarint("an object id")?;
                let targets = u64s(c, "target object ids")?;
                self.heap.snap(stamp, obj, targets);
                Ok(())
            }
            M_BP_EDGE => {
                let stamp = c.uvarint("a stamp")?;
                let from = c.uvarint("an object id")?;
                let to = c.uvarint("an object id")?;
                self.heap.edge(stamp, from, to);
                Ok(())
            }
            M_BP_THREAD => {
                let obj = c.uvarint("an object id")?;
                let t = c.u32("a thread id")?;
                self.heap.threads.push((obj, t));
                Ok(())
            }
            M_KV => {
                let k = c.str("a key")?;
                let v = c.str("a value")?;
                self.kv.insert(k, v);
                Ok(())
            }
            t => Err(format!(
                "expected a metadata record tag 1..=14, found byte {t:#04x}"
            )),
        }
    }

    /// Builds the symbol tables. `min_threads`: thread ids that have a log must exist.
    #[cfg(test)]
    pub fn into_symbols(self, min_threads: u32) -> Symbols {
        let (mut s, vars) = self.into_symbols_apart(min_threads);
        vars.build().install(&mut s);
        s
    }

    /// The trace's symbols with the variables' names (most of the work when a trace names
    /// millions of variables) left to build: the symbols come without variables and
    /// statics, [`VarNames::build`] makes those, and [`BuiltVars::install`] puts them in.
    pub fn into_symbols_apart(self, min_threads: u32) -> (Symbols, VarNames) {
        let mut s = Symbols::default();
        let mut threads = self.threads;
        if threads.len() < min_threads as usize {
            threads.resize_with(min_threads as usize, || None);
        }
        fill_owned(&mut s.threads, threads, "thread");
        // Statics: cover every static id a variable refers to.
        let max_static = self
            .vars
            .iter()
            .flatten()
            .map(|(st, _)| *st as usize + 1)
            .max()
            .unwrap_or(0);
        let mut statics = self.statics;
        if statics.len() < max_static {
            statics.resize_with(max_static, || None);
        }
        fill_owned(&mut s.statics, statics, "static");
        let vars = VarNames {
            vars: self.vars,
            statics: std::mem::take(&mut s.statics),
        };
        fill(&mut s.locks, &self.locks, "lock");
        let locs: Vec<Option<String>> = self
            .locs
            .iter()
            .map(|l| l.as_ref().map(|(t, _)| t.clone()))
            .collect();
        fill(&mut s.locs, &locs, "loc");
        s.loc_detail = self
            .locs
            .into_iter()
            .map(|l| l.and_then(|(_, d)| d))
            .collect();
        fill(&mut s.methods, &self.methods, "method");
        let max_obj = self
            .objsets
            .iter()
            .flatten()
            .filter_map(|o| match o {
                ObjSet::Objects(v) => v.iter().map(|&x| x as usize + 1).max(),
                ObjSet::All => None,
            })
            .max()
            .unwrap_or(0)
            .max(
                self.heap
                    .roots
                    .iter()
                    .filter_map(|(_, _, n)| n.iter().map(|&x| x as usize + 1).max())
                    .max()
                    .unwrap_or(0),
            );
        let mut objects = self.objects;
        if objects.len() < max_obj {
            objects.resize_with(max_obj, || None);
        }
        fill(&mut s.objects, &objects, "object");
        // Frames naming locations that were never recorded are dropped.
        let nlocs = s.locs.len() as u32;
        for (key, frames) in self.stacks {
            let frames: Vec<u32> = frames.into_iter().filter(|&f| f < nlocs).collect();
            s.stacks.insert(key, frames);
        }
        // An unnamed reachable set is taken as "every object", the sound choice.
        s.objsets = self
            .objsets
            .into_iter()
            .map(|o| o.unwrap_or(ObjSet::All))
            .collect();
        (s, vars)
    }
}

/// A trace's variable records and its static names, to build the variables' names from
/// ([`MetaTables::into_symbols_apart`]): a trace reader builds them on a thread of its
/// own while the events are merged, since nothing needs them before the end.
pub struct VarNames {
    vars: Vec<Option<(u32, VarName)>>,
    statics: Interner,
}

/// The variables' names, their static names, and the statics (with a placeholder for
/// the static of each unnamed variable).
pub struct BuiltVars {
    vars: Interner,
    var_static: Vec<u32>,
    statics: Interner,
}

impl VarNames {
    /// Variables named (or left unnamed below the highest named id).
    pub fn len(&self) -> usize {
        self.vars.len()
    }

    pub fn build(self) -> BuiltVars {
        let mut statics = self.statics;
        // Variable names are written straight into the interner's text: a trace names
        // millions of them, and a String each was most of opening one.
        let mut vars = Interner::default();
        let mut var_static = Vec::with_capacity(self.vars.len());
        // Whether every name is built from what the variable is (object and static, or
        // object and element): see `structured_names_are_distinct`.
        let mut structured = true;
        let mut num = itoa::Buffer::new();
        for (i, v) in self.vars.into_iter().enumerate() {
            match v {
                Some((st, n)) => {
                    var_static.push(st);
                    let stat = statics.name(st);
                    match n {
                        VarName::Text(n) => {
                            structured = false;
                            vars.push_unique(&n)
                        }
                        VarName::Field(0) => vars.push_unique(stat),
                        VarName::Field(obj) => vars.push_unique_with(|t| {
                            t.push_str(num.format(obj));
                            t.push('.');
                            t.push_str(stat);
                        }),
                        VarName::Elem(obj, e) => vars.push_unique_with(|t| {
                            t.push_str(num.format(obj));
                            t.push('[');
                            t.push_str(num.format(e));
                            t.push(']');
                        }),
                    };
                }
                None => {
                    // An unnamed variable gets a static name of its own.
                    structured = false;
                    var_static.push(statics.intern(&placeholder("static-of-var", i)));
                    vars.push_unique(&placeholder("var", i));
                }
            }
        }
        let vars = if structured && structured_names_are_distinct(&statics) {
            vars
        } else {
            let mut distinct = Interner::default();
            adopt_distinct(&mut distinct, vars);
            distinct
        };
        BuiltVars {
            vars,
            var_static,
            statics,
        }
    }
}

impl BuiltVars {
    /// Puts the variables and statics into symbols made without them.
    pub fn install(self, s: &mut Symbols) {
        s.vars = self.vars;
        s.var_static = self.var_static;
        s.statics = self.statics;
    }
}

/// Whether variable names built from what each variable is are distinct wherever the
/// variables are (which is all a name has to tell: two records of one object's field, or
/// of one static, are one variable even under two ids), so that the names need no check
/// of their own, a hash table over millions of them. A static is named by its static's
/// name (distinct: [`fill_owned`]), an object's field `OBJ.STATIC` and an element
/// `OBJ[INDEX]` with OBJ in decimal digits: the digits end at the first `.` or `[`, which
/// tells the object and the kind, and the rest the static or the index. So two such
/// names are equal only for one object and one static or index, and no static's name
/// equals one of them unless it starts with a digit.
fn structured_names_are_distinct(statics: &Interner) -> bool {
    statics
        .names()
        .iter()
        .all(|n| !n.starts_with(|c: char| c.is_ascii_digit()))
}

/// A counted list of object ids (each at least one byte: bounded by the data).
fn u64s(c: &mut Cursor, what: &str) -> Result<Vec<u64>, String> {
    let n = c.uvarint("a count")?;
    if n > (c.data.len() - c.pos) as u64 {
        return Err(format!("expected {n} {what}, found the end of the chunk"));
    }
    let mut v = Vec::with_capacity(n as usize);
    for _ in 0..n {
        v.push(c.uvarint(what)?);
    }
    Ok(v)
}

fn placeholder(table: &str, id: usize) -> String {
    format!("?{table}#{id}")
}

/// Interns names in id order so that interned ids equal recorded ids; missing names get
/// placeholders and a duplicate name gets a ` #id` suffix (ids must stay distinct).
fn fill(interner: &mut Interner, names: &[Option<String>], table: &str) {
    fill_owned(interner, names.to_vec(), table)
}

/// [`fill`], taking the names: into an empty interner, with distinct names (a recorder's
/// usual case), the names move in without a copy or a hash table.
fn fill_owned(interner: &mut Interner, names: Vec<Option<String>>, table: &str) {
    if interner.is_empty() {
        let mut all = Interner::default();
        for (i, n) in names.into_iter().enumerate() {
            all.push_unique(&n.unwrap_or_else(|| placeholder(table, i)));
        }
        adopt_distinct(interner, all);
        return;
    }
    for (i, n) in names.into_iter().enumerate() {
        intern_distinct(interner, n.unwrap_or_else(|| placeholder(table, i)), i);
    }
}

/// `names` (ids in recorded order) into the empty `interner`: as they are when distinct
/// (a recorder's usual case, no copy), else each duplicate with a ` #id` suffix.
fn adopt_distinct(interner: &mut Interner, names: Interner) {
    if names.first_duplicate().is_none() {
        *interner = names;
        return;
    }
    for (i, name) in names.names().iter().enumerate() {
        intern_distinct(interner, name.to_owned(), i);
    }
}

fn intern_distinct(interner: &mut Interner, mut name: String, i: usize) {
    while interner.get(&name).is_some() {
        name = format!("{name} #{i}");
    }
    interner.intern(&name);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names built from what a variable is (object and static, object and element) are
    /// distinct for distinct variables by construction: no check, and two records of one
    /// variable keep one name. A static whose name starts with a digit could equal an
    /// object's field: then the names are checked as any others.
    #[test]
    fn structured_names_are_built_without_a_check_unless_a_static_could_collide() {
        let m = MetaTables {
            statics: vec![Some("A.f".into()), Some("B.g".into())],
            vars: vec![
                Some((0, VarName::Field(12))),
                Some((1, VarName::Field(0))),
                Some((0, VarName::Elem(12, 3))),
                Some((1, VarName::Field(1))),
                // Two records of one object's field: one variable, one name.
                Some((0, VarName::Field(12))),
            ],
            ..MetaTables::default()
        };
        let s = m.into_symbols(0);
        let names: Vec<&str> = (0..5).map(|i| s.vars.name(i)).collect();
        assert_eq!(names, ["12.A.f", "B.g", "12[3]", "1.B.g", "12.A.f"]);

        // A static named like an object's field: the names are checked, and told apart.
        let m = MetaTables {
            statics: vec![Some("A.f".into()), Some("1.A.f".into())],
            vars: vec![Some((0, VarName::Field(1))), Some((1, VarName::Field(0)))],
            ..MetaTables::default()
        };
        let s = m.into_symbols(0);
        let names: Vec<&str> = (0..2).map(|i| s.vars.name(i)).collect();
        assert_eq!(names, ["1.A.f", "1.A.f #1"]);
    }

    /// Names move into the symbol tables with their recorded ids; a missing name gets a
    /// placeholder and a repeated one a suffix, so that ids stay distinct by name (a
    /// `.std` export names variables, and two ids with one name would become one).
    #[test]
    fn recorded_ids_keep_distinct_names() {
        let m = MetaTables {
            statics: vec![Some("A.f".into())],
            vars: vec![
                Some((0, VarName::Text("1.A.f".into()))),
                None,
                Some((0, VarName::Text("2.A.f".into()))),
                Some((0, VarName::Text("1.A.f".into()))),
            ],
            threads: vec![Some("main".into())],
            ..MetaTables::default()
        };
        let s = m.into_symbols(1);
        let names: Vec<&str> = (0..4).map(|i| s.vars.name(i)).collect();
        assert_eq!(names, ["1.A.f", "?var#1", "2.A.f", "1.A.f #3"]);
        assert_eq!(s.vars.get("2.A.f"), Some(2));
        assert_eq!(s.vars.get("1.A.f #3"), Some(3));
        assert_eq!(s.var_static[1], s.statics.get("?static-of-var#1").unwrap());

        let m = MetaTables {
            statics: vec![Some("A.f".into())],
            vars: (0..1000)
                .map(|i| Some((0, VarName::Text(format!("{i}.A.f")))))
                .collect(),
            ..MetaTables::default()
        };
        let mut s = m.into_symbols(0);
        assert_eq!(s.vars.len(), 1000);
        assert_eq!(s.vars.get("999.A.f"), Some(999));
        assert_eq!(s.var("1000.A.f"), 1000);
        assert_eq!(s.vars.get("1000.A.f"), Some(1000));
    }

    /// Variables recorded by what they are read back with the names a string record
    /// would carry: `OBJ.STATIC` for a field, the static name for a static field,
    /// `OBJ[I]` for an array element, in any order against the static names' records.
    #[test]
    fn object_variables_are_named_like_string_ones() {
        let mut b = Vec::new();
        obj_var_record(&mut b, 0, 1, 12, None);
        obj_var_record(&mut b, 3, 1, 0, None);
        obj_var_record(&mut b, 2, 0, 7, Some(4));
        var_record(&mut b, 1, 1, "5.account.Account.balance");
        name_record(&mut b, M_STATIC, 1, "account.Account.balance");
        name_record(&mut b, M_STATIC, 0, "int[]");
        let mut m = MetaTables::default();
        let mut c = Cursor::new(&b, 0);
        while c.pos < b.len() {
            m.decode(&mut c).unwrap();
        }
        let s = m.into_symbols(0);
        let names: Vec<&str> = (0..4).map(|i| s.vars.name(i)).collect();
        assert_eq!(
            names,
            [
                "12.account.Account.balance",
                "5.account.Account.balance",
                "7[4]",
                "account.Account.balance"
            ]
        );
        assert_eq!(s.var_static, [1, 1, 0, 1]);

        let mut bad = Vec::new();
        bad.push(M_OBJ_VAR);
        for v in [1u64, 0, 7, (1 << 32) + 2] {
            push_uvarint(&mut bad, v);
        }
        let err = MetaTables::default()
            .decode(&mut Cursor::new(&bad, 0))
            .unwrap_err();
        assert!(err.contains("element index below 2^32"), "{err}");
    }
}
