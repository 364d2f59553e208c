//! The `.std` text format (docs/STD_FORMAT.md): a superset of RAPID's STD format.
//!
//! Size: the streaming parser and the printer share the name tables and the escaping;
//! the parallel splitter is `split.rs`.
//!
//! One event per line, `THREAD|OP|LOCATION`. The parser streams: it reads a line, interns
//! its names, checks well-formedness and returns the event, so a trace of any length is
//! read in constant memory beyond its names. Every error names the file, the line and
//! what was expected; nothing is skipped silently.

use crate::error::TraceError;
use crate::model::*;
use crate::source::EventSource;
use crate::wellformed::Checker;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

mod split;

/// Streaming `.std` reader.
///
/// A file is split into lines and parsed on a thread of its own ([`split`]), a block of
/// lines at a time, while this one interns the names and checks the events: interning is
/// sequential (ids are given in order of first appearance), the rest is not. Other inputs
/// (a string, any reader) are parsed here, in place from the reader's buffer (a line is
/// copied only when it straddles two buffer fills).
pub struct StdReader<'a> {
    input: Input<'a>,
    p: LineParser,
}

enum Input<'a> {
    Inline {
        input: Box<dyn BufRead + 'a>,
        /// A line that straddles buffer fills, collected here.
        pending: Vec<u8>,
    },
    Split {
        blocks: Box<split::Blocks>,
        block: split::Block,
        /// Next line of `block` to return.
        next: usize,
    },
}

/// Everything but the input: names, well-formedness state, position.
struct LineParser {
    path: PathBuf,
    line: u64,
    symbols: Symbols,
    checker: Checker,
    has_branches: bool,
    /// The last thread name and its id: consecutive lines are mostly of one thread.
    last_thread: (String, ThreadId),
}

impl StdReader<'static> {
    /// Opens a `.std` file; its lines are parsed on a second thread.
    pub fn open(path: &Path) -> Result<Self, TraceError> {
        Self::open_with_block(path, split::BLOCK)
    }

    /// [`StdReader::open`] reading `block` bytes at a time (tests cut lines with it).
    fn open_with_block(path: &Path, block: usize) -> Result<Self, TraceError> {
        let f = File::open(path).map_err(|e| TraceError::io(path, e))?;
        let blocks = Box::new(split::Blocks::start(f, path, block));
        Ok(StdReader::with_input(
            Input::Split {
                blocks,
                block: split::Block::default(),
                next: 0,
            },
            path,
        ))
    }
}

impl<'a> StdReader<'a> {
    /// Reads `.std` from `input`, parsing on this thread; `path` names it in errors.
    pub fn new(input: impl BufRead + 'a, path: &Path) -> Self {
        StdReader::with_input(
            Input::Inline {
                input: Box::new(input),
                pending: Vec::new(),
            },
            path,
        )
    }

    fn with_input(input: Input<'a>, path: &Path) -> Self {
        StdReader {
            input,
            p: LineParser {
                path: path.to_owned(),
                line: 0,
                symbols: Symbols::default(),
                checker: Checker::new(),
                has_branches: false,
                last_thread: (String::new(), u32::MAX),
            },
        }
    }

    /// Line number of the last line read (1-based).
    pub fn line(&self) -> u64 {
        self.p.line
    }

    /// The well-formedness checker, e.g. for the locks a thread holds after the last event.
    pub fn checker(&self) -> &Checker {
        &self.p.checker
    }

    fn read_event(&mut self) -> Result<Option<Event>, TraceError> {
        match &mut self.input {
            Input::Inline { input, pending } => read_inline(&mut self.p, input, pending),
            Input::Split {
                blocks,
                block,
                next,
            } => loop {
                if let Some(l) = block.lines.get(*next) {
                    // The variable's slot in the name table, a few lines ahead: most
                    // variables are in no cache by then.
                    if let Some(ahead) = block.lines.get(*next + PREFETCH_LINES) {
                        self.p.symbols.vars.prefetch(ahead.var_hash);
                    }
                    *next += 1;
                    self.p.line = l.line;
                    let text = &block.text;
                    let name = |s: split::Span| split::text_of(text, s);
                    let f = Fields {
                        thread: name(l.thread),
                        op: l.op.as_ref(name),
                        loc: name(l.loc),
                        var_hash: Some(l.var_hash),
                    };
                    return self.p.event(f).map(Some);
                }
                if let Some(e) = block.err.take() {
                    if let TraceError::Line { line, .. } = e {
                        self.p.line = line;
                    }
                    block.last = true;
                    return Err(e);
                }
                if block.last {
                    return Ok(None);
                }
                *block = blocks.take(std::mem::take(block));
                *next = 0;
            },
        }
    }
}

/// The next event of a reader parsed on this thread.
fn read_inline(
    p: &mut LineParser,
    input: &mut Box<dyn BufRead + '_>,
    pending: &mut Vec<u8>,
) -> Result<Option<Event>, TraceError> {
    loop {
        let avail = match input.fill_buf() {
            Ok(a) => a,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(TraceError::io(&p.path, e)),
        };
        let parsed = if avail.is_empty() {
            // End of input: a last line without a newline is still a line.
            if pending.is_empty() {
                return Ok(None);
            }
            let line = std::mem::take(pending);
            p.parse_line(&line)
        } else if let Some(i) = memchr::memchr(b'\n', avail) {
            let r = if pending.is_empty() {
                p.parse_line(&avail[..i])
            } else {
                pending.extend_from_slice(&avail[..i]);
                let line = std::mem::take(pending);
                let r = p.parse_line(&line);
                *pending = line;
                pending.clear();
                r
            };
            input.consume(i + 1);
            r
        } else {
            let n = avail.len();
            pending.extend_from_slice(avail);
            input.consume(n);
            continue;
        };
        if let Some(e) = parsed? {
            return Ok(Some(e));
        }
    }
}

/// One line's fields, checked, names not yet interned.
struct Fields<'a> {
    thread: &'a str,
    op: Op<&'a str>,
    loc: &'a str,
    /// [`Interner::hash`] of the access's variable, if computed already.
    var_hash: Option<u32>,
}

/// Splits and checks one line (without its newline): `None` for lines that carry no
/// event (blank, comment, RAPID's ignored operations). Needs no names, so it runs on
/// the splitting thread.
fn split_line(raw: &[u8]) -> Result<Option<Fields<'_>>, String> {
    match std::str::from_utf8(raw) {
        Ok(s) => split_str(s),
        Err(e) => Err(format!(
            "invalid UTF-8 at column {}; expected text",
            e.valid_up_to() + 1
        )),
    }
}

/// [`split_line`] of a line known to be text.
fn split_str(text: &str) -> Result<Option<Fields<'_>>, String> {
    let text = text.strip_suffix('\r').unwrap_or(text);
    let starts_plain = text
        .as_bytes()
        .first()
        .is_some_and(|&b| b > b' ' && b < 0x80);
    let trimmed = if starts_plain {
        text
    } else {
        text.trim_start()
    };
    if trimmed.is_empty() || trimmed.starts_with('#') {
        return Ok(None);
    }
    let bytes = text.as_bytes();
    let Some(bar1) = memchr::memchr(b'|', bytes) else {
        return Err(format!(
            "expected THREAD|OP|LOCATION, found `{}` (no `|`)",
            clip(text)
        ));
    };
    let thread = trim(&text[..bar1]);
    let rest = &text[bar1 + 1..];
    let (op, loc) = match memchr::memchr(b'|', rest.as_bytes()) {
        None => (trim(rest), ""),
        Some(bar2) => {
            let loc = &rest[bar2 + 1..];
            if memchr::memchr(b'|', loc.as_bytes()).is_some() {
                return Err(format!(
                    "expected THREAD|OP|LOCATION, found more than three `|`-separated fields in `{}`",
                    clip(text)
                ));
            }
            (trim(&rest[..bar2]), trim(loc))
        }
    };
    let Some(op) = parse_op(op)? else {
        check_name(thread).map_err(|m| format!("thread name: {m}"))?;
        return Ok(None);
    };
    Ok(Some(Fields {
        thread,
        op,
        loc,
        var_hash: None,
    }))
}

impl LineParser {
    fn err(&self, msg: impl Into<String>) -> TraceError {
        TraceError::Line {
            path: self.path.clone(),
            line: self.line,
            msg: msg.into(),
        }
    }

    /// Parses and checks one line (without its newline); `None` for lines that carry no
    /// event.
    fn parse_line(&mut self, raw: &[u8]) -> Result<Option<Event>, TraceError> {
        self.line += 1;
        match split_line(raw).map_err(|m| self.err(m))? {
            Some(f) => self.event(f).map(Some),
            None => Ok(None),
        }
    }

    /// The id of thread `name`, checked (a name equal to the last line's was).
    fn thread_id(&mut self, name: &str) -> Result<ThreadId, String> {
        if self.last_thread.1 != u32::MAX && self.last_thread.0 == name {
            return Ok(self.last_thread.1);
        }
        check_name(name)?;
        let id = self.symbols.thread(name);
        self.last_thread.0.clear();
        self.last_thread.0.push_str(name);
        self.last_thread.1 = id;
        Ok(id)
    }

    /// The event of line [`LineParser::line`], its names interned, checked.
    fn event(&mut self, f: Fields<'_>) -> Result<Event, TraceError> {
        let t = self
            .thread_id(f.thread)
            .map_err(|m| self.err(format!("thread name: {m}")))?;
        let l = self.symbols.loc(f.loc);
        let mut e = match f.op {
            Op::Access(kind, var, val) => {
                let v = match f.var_hash {
                    Some(h) => self.symbols.var_hashed(var, h),
                    None => self.symbols.var(var),
                };
                let e = Event::new(t, kind, v, l);
                match val {
                    Some(x) => e.with_value(x),
                    None => e,
                }
            }
            Op::Lock(kind, lock) => Event::new(t, kind, self.symbols.lock(lock), l),
            Op::Thread(kind, other) => Event::new(t, kind, self.symbols.thread(other), l),
            Op::Bare(kind) => Event::new(t, kind, 0, l),
            Op::Enter(method, set) => {
                let m = self.symbols.method(method);
                let set = match set {
                    None => ObjSet::All,
                    Some(objs) => ObjSet::Objects(
                        objs.iter()
                            .map(|o| self.symbols.objects.intern(o))
                            .collect(),
                    ),
                };
                let s = self.symbols.objset(set);
                let mut e = Event::new(t, Kind::Enter, m, l);
                e.value = s as i64;
                e
            }
            Op::Exit(method) => Event::new(t, Kind::Exit, self.symbols.method(method), l),
        };
        if let Err(msg) = self.checker.check(&mut e, &self.symbols) {
            return Err(self.err(msg));
        }
        if e.kind == Kind::Branch {
            self.has_branches = true;
        }
        Ok(e)
    }
}

impl EventSource for StdReader<'_> {
    fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        self.read_event()
    }
    fn symbols(&mut self) -> &Symbols {
        &self.p.symbols
    }
    fn take_symbols(&mut self) -> Symbols {
        std::mem::take(&mut self.p.symbols)
    }
    fn has_branches(&self) -> bool {
        self.p.has_branches
    }
}

/// Parses a whole `.std` text (for tests and small inputs). `name` is used in errors.
pub fn parse_str(text: &str, name: &str) -> Result<Trace, TraceError> {
    let mut r = StdReader::new(text.as_bytes(), Path::new(name));
    crate::source::read_all(&mut r)
}

/// Parses `.std` from any reader.
pub fn parse_reader(input: impl Read, name: &str) -> Result<Trace, TraceError> {
    let mut r = StdReader::new(BufReader::new(input), Path::new(name));
    crate::source::read_all(&mut r)
}

/// An operation with its names as `S` (text, or where the text is).
enum Op<S> {
    Access(Kind, S, Option<i64>),
    Lock(Kind, S),
    Thread(Kind, S),
    Bare(Kind),
    /// `None` set: `*` (every object).
    Enter(S, Option<Vec<S>>),
    Exit(S),
}

impl<S: Copy> Op<S> {
    /// The same operation with each name mapped by `f`.
    fn as_ref<T>(&self, mut f: impl FnMut(S) -> T) -> Op<T> {
        match self {
            Op::Access(k, v, val) => Op::Access(*k, f(*v), *val),
            Op::Lock(k, l) => Op::Lock(*k, f(*l)),
            Op::Thread(k, t) => Op::Thread(*k, f(*t)),
            Op::Bare(k) => Op::Bare(*k),
            Op::Enter(m, set) => {
                let m = f(*m);
                Op::Enter(m, set.as_ref().map(|v| v.iter().map(|&o| f(o)).collect()))
            }
            Op::Exit(m) => Op::Exit(f(*m)),
        }
    }
}

/// How many lines ahead the reader prefetches a variable's slot in the name table.
const PREFETCH_LINES: usize = 12;

const OPS_EXPECTED: &str = "r(V), w(V), r(V,VAL), w(V,VAL), vr(..), vw(..), acq(L), rel(L), \
fork(T), join(T), begin, end, wait(L), wake(L), notify(L), notifyall(L), br, enter(M;O,..), exit(M)";

fn parse_op(op: &str) -> Result<Option<Op<&str>>, String> {
    let (name, args) = match memchr::memchr(b'(', op.as_bytes()) {
        None => (op, None),
        Some(i) => {
            let Some(inner) = op[i + 1..].strip_suffix(')') else {
                return Err(format!("operation `{}`: expected `)` at the end", clip(op)));
            };
            (trim(&op[..i]), Some(inner))
        }
    };
    let one = |what: &str| -> Result<&str, String> {
        let a = args.ok_or_else(|| format!("`{name}` expects one argument: {name}({what})"))?;
        let a = trim(a);
        check_name(a).map_err(|m| format!("`{name}({a})`: {what}: {m}"))?;
        Ok(a)
    };
    let none = || -> Result<(), String> {
        match args {
            None => Ok(()),
            Some(_) => Err(format!("`{name}` takes no argument")),
        }
    };
    Ok(Some(match name {
        "r" | "w" | "vr" | "vw" => {
            let kind = match name {
                "r" => Kind::Read,
                "w" => Kind::Write,
                "vr" => Kind::VRead,
                _ => Kind::VWrite,
            };
            let a = args.ok_or_else(|| format!("`{name}` expects {name}(V) or {name}(V,VAL)"))?;
            let (var, val) = match memchr::memchr(b',', a.as_bytes()) {
                None => (trim(a), None),
                Some(i) => (trim(&a[..i]), Some(parse_value(trim(&a[i + 1..]))?)),
            };
            check_name(var).map_err(|m| format!("`{name}(..)`: variable: {m}"))?;
            Op::Access(kind, var, val)
        }
        "acq" => Op::Lock(Kind::Acquire, one("L")?),
        "rel" => Op::Lock(Kind::Release, one("L")?),
        "wait" => Op::Lock(Kind::Wait, one("L")?),
        "wake" => Op::Lock(Kind::Wake, one("L")?),
        "notify" => Op::Lock(Kind::Notify, one("L")?),
        "notifyall" | "notifyAll" => Op::Lock(Kind::NotifyAll, one("L")?),
        "fork" => Op::Thread(Kind::Fork, one("T")?),
        "join" => Op::Thread(Kind::Join, one("T")?),
        // RAPID's transaction markers begin(X)/end(X) and its req(L)/dummy(X) lines.
        "begin" | "end" if args.is_some() => return Ok(None),
        "req" | "dummy" => {
            one("X")?;
            return Ok(None);
        }
        "begin" => Op::Bare(Kind::Begin),
        "end" => Op::Bare(Kind::End),
        "br" => {
            none()?;
            Op::Bare(Kind::Branch)
        }
        "enter" => {
            let a = args.ok_or("`enter` expects enter(M;O1,O2,...)")?;
            let Some((m, objs)) = a.split_once(';') else {
                return Err(format!(
                    "`enter({a})`: expected `;` between method and objects"
                ));
            };
            let m = m.trim();
            check_name(m).map_err(|e| format!("`enter(..)`: method: {e}"))?;
            let objs = objs.trim();
            if objs == "*" {
                Op::Enter(m, None)
            } else if objs.is_empty() {
                Op::Enter(m, Some(Vec::new()))
            } else {
                let mut v = Vec::new();
                for o in objs.split(',') {
                    let o = o.trim();
                    check_name(o).map_err(|e| format!("`enter(..)`: object: {e}"))?;
                    v.push(o);
                }
                Op::Enter(m, Some(v))
            }
        }
        "exit" => Op::Exit(one("M")?),
        "" => return Err(format!("empty operation; expected one of {OPS_EXPECTED}")),
        other => {
            return Err(format!(
                "unknown operation `{}`; expected one of {OPS_EXPECTED}",
                clip(other)
            ))
        }
    }))
}

/// `s` without leading and trailing whitespace; a string that starts and ends with a
/// printable ASCII character (almost every name) is returned without decoding a char.
#[inline]
fn trim(s: &str) -> &str {
    let plain = |b: u8| b > b' ' && b < 0x80;
    match (s.as_bytes().first(), s.as_bytes().last()) {
        (Some(&f), Some(&l)) if plain(f) && plain(l) => s,
        _ => s.trim(),
    }
}

/// The bytes names may not contain.
static NOT_IN_NAMES: [bool; 256] = {
    let mut t = [false; 256];
    t[b'|' as usize] = true;
    t[b'(' as usize] = true;
    t[b')' as usize] = true;
    t[b',' as usize] = true;
    t[b';' as usize] = true;
    t
};

#[inline]
fn check_name(s: &str) -> Result<(), String> {
    if s.is_empty() {
        return Err("empty name".into());
    }
    if let Some(&c) = s.as_bytes().iter().find(|&&c| NOT_IN_NAMES[c as usize]) {
        return Err(format!(
            "`{}` contains `{}`, which names may not contain",
            clip(s),
            c as char
        ));
    }
    Ok(())
}

/// A signed 64-bit decimal or a `0x` hexadecimal value (hex is taken as the 64 bits).
pub fn parse_value(s: &str) -> Result<i64, String> {
    let bad = || {
        format!(
            "value `{}`: expected a signed 64-bit decimal or 0x-hexadecimal integer",
            clip(s)
        )
    };
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        if h.is_empty() || h.len() > 16 {
            return Err(bad());
        }
        return u64::from_str_radix(h, 16)
            .map(|x| x as i64)
            .map_err(|_| bad());
    }
    if s.starts_with('+') {
        return Err(bad());
    }
    s.parse::<i64>().map_err(|_| bad())
}

fn clip(s: &str) -> String {
    if s.chars().count() > 60 {
        let t: String = s.chars().take(57).collect();
        format!("{t}...")
    } else {
        s.to_owned()
    }
}

/// Writes one event as a `.std` line (without the newline).
pub fn format_event(e: &Event, sym: &Symbols, out: &mut impl Write) -> std::io::Result<()> {
    let t = sym.thread_name(e.thread);
    let loc = sym.loc_name(e.loc);
    write!(out, "{t}|")?;
    match e.kind {
        Kind::Read | Kind::Write | Kind::VRead | Kind::VWrite => {
            let op = match e.kind {
                Kind::Read => "r",
                Kind::Write => "w",
                Kind::VRead => "vr",
                _ => "vw",
            };
            let v = sym.var_name(e.target);
            if e.has_value() {
                write!(out, "{op}({v},{})", e.value)?;
            } else {
                write!(out, "{op}({v})")?;
            }
        }
        Kind::Acquire => write!(out, "acq({})", sym.lock_name(e.target))?,
        Kind::Release => write!(out, "rel({})", sym.lock_name(e.target))?,
        Kind::Wait => write!(out, "wait({})", sym.lock_name(e.target))?,
        Kind::Wake => write!(out, "wake({})", sym.lock_name(e.target))?,
        Kind::Notify => write!(out, "notify({})", sym.lock_name(e.target))?,
        Kind::NotifyAll => write!(out, "notifyall({})", sym.lock_name(e.target))?,
        Kind::Fork => write!(out, "fork({})", sym.thread_name(e.target))?,
        Kind::Join => write!(out, "join({})", sym.thread_name(e.target))?,
        Kind::Begin => write!(out, "begin")?,
        Kind::End => write!(out, "end")?,
        Kind::Branch => write!(out, "br")?,
        Kind::Enter => {
            write!(out, "enter({};", sym.methods.name(e.target))?;
            match &sym.objsets[e.value as usize] {
                ObjSet::All => write!(out, "*")?,
                ObjSet::Objects(v) => {
                    for (i, o) in v.iter().enumerate() {
                        if i > 0 {
                            write!(out, ",")?;
                        }
                        write!(out, "{}", sym.objects.name(*o))?;
                    }
                }
            }
            write!(out, ")")?;
        }
        Kind::Exit => write!(out, "exit({})", sym.methods.name(e.target))?,
    }
    write!(out, "|{loc}")
}

/// Prints a whole trace in `.std` format.
pub fn write_trace(trace: &Trace, out: &mut impl Write) -> std::io::Result<()> {
    for e in &trace.events {
        format_event(e, &trace.symbols, out)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIG4: &str = "t1|fork(t2)|1\nt1|acq(l)|2\nt1|w(x,1)|3\nt1|w(y,1)|4\nt1|rel(l)|5\n\
t2|begin|6\nt2|acq(l)|7\nt2|r(y,1)|8\nt2|rel(l)|9\nt2|r(x,1)|10\nt2|br|11\nt2|w(z,1)|12\n\
t2|end|13\nt1|join(t2)|14\nt1|r(z,1)|15\nt1|br|16\n";

    #[test]
    fn parses_design_example() {
        let t = parse_str(FIG4, "fig4.std").unwrap();
        assert_eq!(t.events.len(), 16);
        assert!(t.has_branches);
        assert_eq!(t.symbols.threads.len(), 2);
        let e = t.events[2];
        assert_eq!(e.kind, Kind::Write);
        assert_eq!(t.symbols.var_name(e.target), "x");
        assert!(e.has_value());
        assert_eq!(e.value, 1);
        assert_eq!(t.symbols.loc_name(e.loc), "3");
    }

    /// Events (with every name) up to the first error, and that error.
    fn outcome(mut r: StdReader<'_>) -> (Vec<String>, Option<String>) {
        let mut out = Vec::new();
        loop {
            match r.next_event() {
                Ok(Some(e)) => {
                    let mut line = Vec::new();
                    format_event(&e, r.symbols(), &mut line).unwrap();
                    out.push(format!("{} {e:?}", String::from_utf8(line).unwrap()));
                }
                Ok(None) => return (out, None),
                Err(e) => return (out, Some(e.to_string())),
            }
        }
    }

    /// A file read by the splitting thread, cut into blocks of any size, gives what it
    /// gives read line by line here: the same events, ids and errors (file and line).
    #[test]
    fn split_files_read_as_inline() {
        use rand::{Rng, SeedableRng};
        let mut texts: Vec<Vec<u8>> = vec![
            FIG4.into(),
            b"".to_vec(),
            b"\n\n# c\n".to_vec(),
            b"t1|w(x,1)|1".to_vec(),
            b"t1|w(x,1)|1\r\nt1|r(x,1)|2\r\n".to_vec(),
            b"t1|w(x,1)|1\nt1|r(\xff)|2\nt1|w(y)|3\n".to_vec(),
            b"t1|w(x,1)|1\nt1|acq(l)|\xe2\x82\n".to_vec(),
            b"t\xc3\xa9|w(x\xc3\xa9,1)|\xc3\xa9:1\nt\xc3\xa9|br|2\n".to_vec(),
            b"t1|begin(tx)|1\nt1|req(l)|2\nt1|enter(m;a,b)|3\nt1|exit(m)|4\nt1|enter(n;*)|5\n"
                .to_vec(),
            format!("t1|w({},1)|1\nt1|frob|2\n", "v".repeat(300)).into_bytes(),
        ];
        for (text, _) in ERROR_CASES {
            texts.push(text.as_bytes().to_vec());
        }
        // Random damage to a longer valid trace.
        let base: String = (0..200)
            .map(|i| {
                format!(
                    "t{}|{}(v{},{i})|F.java:{i}\n",
                    i % 3,
                    ["r", "w"][i % 2],
                    i % 7
                )
            })
            .collect();
        let mut rng = rand::rngs::SmallRng::seed_from_u64(5);
        for _ in 0..20 {
            let mut t = base.clone().into_bytes();
            let i = rng.gen_range(0..t.len());
            t[i] = [b'|', b'(', 0xff, b'\n', b'x'][rng.gen_range(0..5)];
            texts.push(t);
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.std");
        for text in &texts {
            std::fs::write(&path, text).unwrap();
            let f = std::io::BufReader::new(File::open(&path).unwrap());
            let want = outcome(StdReader::new(f, &path));
            for block in [1, 2, 5, 13, 64, split::BLOCK] {
                let got = outcome(StdReader::open_with_block(&path, block).unwrap());
                assert_eq!(
                    got,
                    want,
                    "block {block}, text {:?}",
                    String::from_utf8_lossy(text)
                );
            }
        }
    }

    #[test]
    fn lines_straddling_buffer_fills_parse_the_same() {
        let whole = parse_str(FIG4, "fig4.std").unwrap();
        for cap in [1, 2, 7, 13, 64] {
            let mut r = StdReader::new(
                BufReader::with_capacity(cap, FIG4.as_bytes()),
                Path::new("x"),
            );
            let t = crate::source::read_all(&mut r).unwrap();
            assert_eq!(t.events, whole.events, "buffer capacity {cap}");
        }
        // No newline at the end, CRLF line ends.
        let t = parse_str("t1|w(x,1)|1\r\nt1|r(x,1)|2", "crlf.std").unwrap();
        assert_eq!(t.events.len(), 2);
        assert_eq!(t.symbols.loc_name(t.events[0].loc), "1");
    }

    /// Whitespace around every name and value is not part of it, ASCII or not.
    #[test]
    fn names_are_trimmed() {
        let t = parse_str(
            " t1 |w( x , 7 )| L:1 \n\u{a0}t1\u{a0}|\tr(\u{2003}x\u{a0})|L:1\u{3000}\nt1|acq( l )|\u{a0}\n",
            "ws.std",
        )
        .unwrap();
        assert_eq!(t.symbols.threads.len(), 1);
        assert_eq!(t.symbols.vars.len(), 1);
        assert_eq!(t.symbols.thread_name(0), "t1");
        assert_eq!(t.symbols.var_name(0), "x");
        assert_eq!(t.symbols.lock_name(0), "l");
        assert_eq!(t.events[0].value, 7);
        assert_eq!(t.symbols.loc_name(t.events[1].loc), "L:1");
        assert_eq!(t.symbols.loc_name(t.events[2].loc), "");
    }

    #[test]
    fn round_trips() {
        let text = "# comment\n\nT 1 |fork( t2 )| A.java:3 \nT 1|w(o1.f,0xff)|\nT 1|vw(v,-5)\n\
T 1|acq(l)|x\nT 1|acq(l)|x\nT 1|wait(l)|w\nt2|acq(l)|\nt2|notifyall(l)|n\nt2|rel(l)|\n\
T 1|wake(l)|k\nT 1|rel(l)|\nT 1|rel(l)|\nt2|enter(java.util.HashMap.put;o1,Main)|9\nt2|exit(java.util.HashMap.put)|9\n\
t2|enter(m;)|\nt2|enter(m;*)|\nt2|req(l)|1\nt2|begin(tx)|\nt2|dummy(q)|\nt2|r(o1.f)|\n";
        let t = parse_str(text, "rt.std").unwrap();
        assert_eq!(t.events.len(), 17);
        assert_eq!(t.events[1].value, 255);
        assert!(t.events[4].is_nested());
        let mut out = Vec::new();
        write_trace(&t, &mut out).unwrap();
        let t2 = parse_str(std::str::from_utf8(&out).unwrap(), "rt2.std").unwrap();
        assert_eq!(t.events, t2.events);
        let mut out2 = Vec::new();
        write_trace(&t2, &mut out2).unwrap();
        assert_eq!(out, out2);
    }

    fn err_of(text: &str) -> String {
        parse_str(text, "bad.std").unwrap_err().to_string()
    }

    /// Texts with an error and (part of) the message each must give.
    const ERROR_CASES: &[(&str, &str)] = &[
            (
                "t1|w(x)|1\nt1|frob(x)|2\n",
                "bad.std:2: unknown operation `frob`",
            ),
            ("t1\n", "bad.std:1: expected THREAD|OP|LOCATION"),
            (
                "t1|w(x)|1|2\n",
                "bad.std:1: expected THREAD|OP|LOCATION, found more than three",
            ),
            (
                "t1|w(x,abc)|1\n",
                "bad.std:1: value `abc`: expected a signed 64-bit",
            ),
            ("t1|w(x,99999999999999999999)|1\n", "bad.std:1: value"),
            ("t1|w(x|1\n", "expected `)`"),
            ("t1|w()|1\n", "variable: empty name"),
            ("|w(x)|1\n", "thread name: empty name"),
            ("t1|w(x)|1\nt(2|w(x)|2\n", "bad.std:2: thread name: `t(2` contains `(`"),
            ("t1|w(x)|1\nt(2|begin(tx)|2\n", "bad.std:2: thread name: `t(2` contains `(`"),
            ("t1|acq()|1\n", "empty name"),
            ("t1|br(x)|1\n", "`br` takes no argument"),
            ("t1|enter(m)|1\n", "expected `;`"),
            (
                "t1|exit(m)|1\n",
                "bad.std:1: exit(m) by thread t1 without an open enter(m;..)",
            ),
            (
                "t1|enter(m;a)|1\nt1|enter(n;)|2\nt1|exit(m)|3\n",
                "bad.std:3: exit(m) by thread t1 while its innermost open call is enter(n;..) (expected exit(n))",
            ),
            (
                "t1|rel(l)|1\n",
                "bad.std:1: release of lock l that thread t1 does not hold",
            ),
            (
                "t1|acq(l)|1\nt2|acq(l)|2\n",
                "bad.std:2: acquire of lock l that thread t1 holds",
            ),
            (
                "t1|fork(t2)|1\nt1|join(t2)|2\nt2|w(x)|3\n",
                "bad.std:3: thread t2 has an event after it was joined",
            ),
            (
                "t1|end|1\nt1|w(x)|2\n",
                "bad.std:2: thread t1 has an event after its end",
            ),
            (
                "t2|w(x)|1\nt1|fork(t2)|2\n",
                "bad.std:2: fork(t2) after thread t2 already has events",
            ),
            ("t1|wake(l)|1\n", "wake(l) without an earlier wait(l)"),
            ("t1|wait(l)|1\n", "wait on l that thread t1 does not hold"),
            (
                "t1|acq(l)|1\nt1|wait(l)|2\nt1|w(x)|3\n",
                "bad.std:3: thread t1 has an event while it waits on l",
            ),
            (
                "t1|w(x)|1\nt1|begin|2\n",
                "begin of thread t1 is not its first event",
            ),
            ("t1|r(a(b))|1\n", "contains `(`"),
            (
                "t1|notify(l)|1\n",
                "bad.std:1: notify(l) by thread t1 that does not hold l",
            ),
    ];

    #[test]
    fn errors_name_file_line_and_expectation() {
        for (text, want) in ERROR_CASES {
            let got = err_of(text);
            assert!(
                got.contains(want),
                "for {text:?}: got {got:?}, want {want:?}"
            );
        }
    }

    #[test]
    fn open_locks_at_end_are_fine() {
        let t = parse_str("t1|acq(l)|1\nt1|w(x)|2\n", "ok.std").unwrap();
        assert_eq!(t.events.len(), 2);
    }
}
