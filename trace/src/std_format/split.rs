//! A `.std` file split into lines and parsed on a thread of its own.
//!
//! Why: finding line ends, checking UTF-8, splitting fields and parsing operations and
//! values is about half of reading a `.std` file, and needs no names; interning names
//! must stay in order (ids are given at first appearance). The splitting thread reads
//! blocks of whole lines and parses each into [`Line`] with its names as byte ranges of
//! the block; the reader interns them. A block ends at the first line that fails to
//! parse, with its error, which the reader returns after the block's events.

use super::{split_line, split_str, Op};
use crate::error::TraceError;
use crate::model::Interner;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, Sender, SyncSender};
use std::thread::JoinHandle;

/// Bytes read per block (a block holds whole lines, so it may be longer).
pub(super) const BLOCK: usize = 1 << 20;

/// Where a name is in its block's text: `start..end`.
pub(super) type Span = (u32, u32);

/// A parsed line that has an event.
pub(super) struct Line {
    pub line: u64,
    pub thread: Span,
    pub op: Op<Span>,
    pub loc: Span,
    /// [`Interner::hash`] of the variable of an access (0 otherwise): hashed here, off
    /// the reader's thread, which also uses it to prefetch.
    pub var_hash: u32,
}

/// A block of lines, parsed.
#[derive(Default)]
pub(super) struct Block {
    /// The lines up to the one that failed (so it is all valid UTF-8).
    pub text: String,
    pub lines: Vec<Line>,
    /// The error of the line after `lines` (or of reading); nothing follows it.
    pub err: Option<TraceError>,
    /// Nothing follows this block.
    pub last: bool,
}

/// The text of span `s` of `text` (a span always lies on character boundaries).
pub(super) fn text_of(text: &str, s: Span) -> &str {
    text.get(s.0 as usize..s.1 as usize).unwrap_or_default()
}

/// The splitting thread and the blocks it sends.
pub(super) struct Blocks {
    rx: Option<Receiver<Block>>,
    /// Blocks the reader is done with, for their buffers.
    back: Sender<Block>,
    handle: Option<JoinHandle<()>>,
    path: PathBuf,
    /// What to report if the channel closes before the last block.
    stopped: String,
}

impl Blocks {
    /// Starts splitting `file`, reading `block` bytes at a time.
    pub fn start(file: File, path: &Path, block: usize) -> Blocks {
        let (tx, rx) = sync_channel(4);
        let (back, spent) = std::sync::mpsc::channel();
        let p = path.to_owned();
        let spawned = std::thread::Builder::new()
            .name("jrace-split".into())
            .spawn(move || split(file, &p, block.max(1), &tx, &spent));
        // A thread that could not start dropped its sender with the closure; one that
        // panicked drops it while unwinding: either way `take` sees the channel close.
        let (handle, stopped) = match spawned {
            Ok(h) => (
                Some(h),
                "the thread splitting this file stopped (a bug in jrace)".to_string(),
            ),
            Err(e) => (None, format!("cannot start a thread to read the file: {e}")),
        };
        Blocks {
            rx: Some(rx),
            back,
            handle,
            path: path.to_owned(),
            stopped,
        }
    }

    /// The next block, handing back `done` for its buffers.
    pub fn take(&self, done: Block) -> Block {
        if done.text.capacity() > 0 {
            let _ = self.back.send(done);
        }
        let rx = self.rx.as_ref().expect("taken only while open");
        rx.recv().unwrap_or_else(|_| Block {
            err: Some(TraceError::Other {
                path: self.path.clone(),
                msg: self.stopped.clone(),
            }),
            last: true,
            ..Block::default()
        })
    }
}

impl Drop for Blocks {
    fn drop(&mut self) {
        // The splitting thread stops at its next send, which fails without a receiver.
        self.rx = None;
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// The splitting thread: reads `file` a block at a time and sends the parsed blocks.
fn split(
    mut file: File,
    path: &Path,
    block: usize,
    tx: &SyncSender<Block>,
    spent: &Receiver<Block>,
) {
    let mut carry: Vec<u8> = Vec::new();
    let mut line_no = 0u64;
    loop {
        let mut b = spent.try_recv().unwrap_or_default();
        let mut text = std::mem::take(&mut b.text).into_bytes();
        text.clear();
        b.lines.clear();
        b.err = None;
        b.last = false;
        text.append(&mut carry);
        // Read until the block holds a line end (or the file ends).
        let mut scanned = 0;
        let mut eof;
        let cut = loop {
            let before = text.len();
            if let Err(e) = (&mut file).take(block as u64).read_to_end(&mut text) {
                b.err = Some(TraceError::io(path, e));
                b.last = true;
                let _ = tx.send(b);
                return;
            }
            eof = text.len() - before < block;
            if let Some(i) = memchr::memrchr(b'\n', &text[scanned..]) {
                break scanned + i + 1;
            }
            scanned = text.len();
            if eof {
                break text.len();
            }
        };
        if cut > u32::MAX as usize {
            b.err = Some(line_err(
                path,
                line_no + 1,
                "expected a line shorter than 4 GB".into(),
            ));
            b.last = true;
            let _ = tx.send(b);
            return;
        }
        carry.extend_from_slice(&text[cut..]);
        text.truncate(cut);
        let failed = parse_block(&mut b, text, path, &mut line_no);
        b.last = failed || (eof && carry.is_empty());
        let last = b.last;
        if tx.send(b).is_err() || last {
            return;
        }
    }
}

/// Parses the lines of `text` into `b` (numbering them from `line_no`); on the first line
/// that fails, sets `b.err` and returns true. The text is checked to be UTF-8 once for
/// the whole block; only a block with a line that is not needs a second look.
fn parse_block(b: &mut Block, text: Vec<u8>, path: &Path, line_no: &mut u64) -> bool {
    let (bad, good) = match String::from_utf8(text) {
        Ok(t) => (None, t),
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let bytes = e.into_bytes();
            let start = memchr::memrchr(b'\n', &bytes[..valid]).map_or(0, |i| i + 1);
            let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i);
            let msg = match split_line(&bytes[start..end]) {
                Err(m) => m,
                Ok(_) => "expected text in UTF-8".into(),
            };
            let good = String::from_utf8(bytes[..start].to_vec()).unwrap_or_default();
            (Some(msg), good)
        }
    };
    b.text = good;
    if parse_lines(b, path, line_no) {
        return true;
    }
    if let Some(msg) = bad {
        *line_no += 1;
        b.err = Some(line_err(path, *line_no, msg));
        return true;
    }
    false
}

/// Parses the lines of `b.text` into `b.lines`; on the first line that fails, sets
/// `b.err`, cuts the text before that line and returns true.
fn parse_lines(b: &mut Block, path: &Path, line_no: &mut u64) -> bool {
    let text = &b.text[..];
    let base = text.as_ptr() as usize;
    let span = |s: &str| -> Span {
        if s.is_empty() {
            return (0, 0);
        }
        let start = s.as_ptr() as usize - base;
        (start as u32, (start + s.len()) as u32)
    };
    let mut at = 0;
    while at < text.len() {
        let end = memchr::memchr(b'\n', &text.as_bytes()[at..]).map_or(text.len(), |i| at + i);
        *line_no += 1;
        match split_str(&text[at..end]) {
            Ok(None) => {}
            Ok(Some(f)) => b.lines.push(Line {
                line: *line_no,
                thread: span(f.thread),
                var_hash: match f.op {
                    Op::Access(_, v, _) => Interner::hash(v),
                    _ => 0,
                },
                op: f.op.as_ref(span),
                loc: span(f.loc),
            }),
            Err(msg) => {
                b.err = Some(line_err(path, *line_no, msg));
                b.text.truncate(at);
                return true;
            }
        }
        at = end + 1;
    }
    false
}

fn line_err(path: &Path, line: u64, msg: String) -> TraceError {
    TraceError::Line {
        path: path.to_owned(),
        line,
        msg,
    }
}
