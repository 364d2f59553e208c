//! The crash-safe chunked log writer shared by thread logs and the metadata log.
//!
//! A log `STEM` is two files: `STEM.jrl`, append-only, holding sealed (compressed,
//! CRC-framed) chunks, and `STEM.open`, a fixed-size memory map holding the one open
//! chunk as raw records. Appending a record is a copy into the map with the tag byte
//! stored last, so a process killed at any instant leaves either a whole record or a zero
//! tag. Sealing compresses the open chunk, appends it as a frame, and only then clears the
//! map and bumps the open chunk's number: at every instant the reader can tell which copy
//! of a chunk is the current one (see FORMAT.md, "What a killed writer leaves").

use super::columns::{self, Building};
use super::events::{Encoded, ENCODE_BUF};
use super::{OPEN_EXT, SEALED_EXT, VERSION};
use memmap2::MmapMut;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{fence, AtomicU64, Ordering};

pub const LOG_MAGIC: &[u8; 8] = b"JRACELOG";
pub const OPEN_MAGIC: &[u8; 8] = b"JRACEOPN";
pub const FRAME_MAGIC: &[u8; 4] = b"JRCK";
/// Size of the header of `STEM.jrl`.
pub const LOG_HEADER: usize = 32;
/// Size of the header of `STEM.open`; records start here.
pub const OPEN_HEADER: usize = 64;
/// Offset in `STEM.open` of the open chunk's number (u64, little endian).
pub const OPEN_CHUNK_NO: usize = 16;
/// Size of a frame header in `STEM.jrl`.
pub const FRAME_HEADER: usize = 32;
/// Bytes of the frame header covered by the CRC (all but the CRC itself).
pub const FRAME_CRC_AT: usize = 28;

/// Frame codecs.
pub const CODEC_STORED: u8 = 0;
pub const CODEC_ZSTD: u8 = 1;
pub const CODEC_END: u8 = 2;
/// Event records sealed as columns ([`super::columns`]).
pub const CODEC_COLUMNS: u8 = 3;

/// Largest chunk the reader accepts (sanity bound before allocating).
pub const MAX_CHUNK: usize = 1 << 28;

pub fn file_header(magic: &[u8; 8], id: u32) -> [u8; 32] {
    let mut h = [0u8; 32];
    h[..8].copy_from_slice(magic);
    h[8..12].copy_from_slice(&VERSION.to_le_bytes());
    h[12..16].copy_from_slice(&id.to_le_bytes());
    h
}

/// Builds a sealed frame: header (with CRC) followed by the payload.
pub fn frame(codec: u8, chunk: u64, raw_len: u32, records: u32, payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(FRAME_HEADER + payload.len());
    f.extend_from_slice(FRAME_MAGIC);
    f.extend_from_slice(&[codec, 0, 0, 0]);
    f.extend_from_slice(&chunk.to_le_bytes());
    f.extend_from_slice(&raw_len.to_le_bytes());
    f.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    f.extend_from_slice(&records.to_le_bytes());
    let mut crc = crc32fast::Hasher::new();
    crc.update(&f[..FRAME_CRC_AT]);
    crc.update(payload);
    f.extend_from_slice(&crc.finalize().to_le_bytes());
    f.extend_from_slice(payload);
    f
}

pub fn sealed_path(dir: &Path, stem: &str) -> PathBuf {
    dir.join(format!("{stem}.{SEALED_EXT}"))
}
pub fn open_path(dir: &Path, stem: &str) -> PathBuf {
    dir.join(format!("{stem}.{OPEN_EXT}"))
}

fn tmp_path(p: &Path) -> PathBuf {
    let mut s = p.as_os_str().to_owned();
    s.push(".tmp");
    PathBuf::from(s)
}

pub struct ChunkLog {
    sealed: File,
    open_path: PathBuf,
    map: Option<MmapMut>,
    /// Capacity of the open chunk in bytes.
    cap: usize,
    /// Bytes of records in the open chunk.
    used: usize,
    records: u32,
    /// Number of the open chunk (= number of chunks sealed so far).
    chunk: u64,
    compressor: zstd::bulk::Compressor<'static>,
    finished: bool,
    /// A frame could not be written (a full disk): nothing is sealed any more, and the
    /// open chunk stays as it is, the log's last records, for the reader.
    broken: bool,
    /// Bytes at the end of the open chunk that only [`ChunkLog::append_reserved`] uses.
    reserve: usize,
    /// Bytes written to `STEM.jrl` so far.
    sealed_bytes: u64,
    /// For a log of event records: the open chunk's columns ([`super::columns`]).
    columns: Option<Box<Building>>,
}

impl ChunkLog {
    /// Creates `STEM.jrl` and `STEM.open` in `dir`; fails if the log already exists.
    pub fn create(dir: &Path, stem: &str, id: u32, cap: usize, level: i32) -> io::Result<ChunkLog> {
        let cap = cap.clamp(4096, MAX_CHUNK);
        // Each file is made complete under a temporary name and renamed into place, so a
        // kill during creation never leaves a file with a partial header. The open chunk
        // comes first: a `.jrl` without `.open` means a finished log.
        let open_path = open_path(dir, stem);
        let sealed_path = sealed_path(dir, stem);
        if open_path.exists() || sealed_path.exists() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} already exists", sealed_path.display()),
            ));
        }
        let (open_tmp, sealed_tmp) = (tmp_path(&open_path), tmp_path(&sealed_path));
        let made = (|| -> io::Result<(MmapMut, File)> {
            fault::inject(fault::Fault::Create)?;
            let f = OpenOptions::new()
                .create(true)
                .truncate(true)
                .read(true)
                .write(true)
                .open(&open_tmp)?;
            f.set_len((OPEN_HEADER + cap) as u64)?;
            // The map is written through, so its blocks must exist: on a full disk a store
            // into a hole the file system cannot fill is a SIGBUS, not an error.
            fault::inject(fault::Fault::Reserve)?;
            reserve_blocks(&f, (OPEN_HEADER + cap) as u64)?;
            fault::inject(fault::Fault::Map)?;
            // SAFETY: the file is ours (created above, never truncated while mapped); other
            // processes only ever read it after this one is gone or finished.
            let mut map = unsafe { MmapMut::map_mut(&f)? };
            map[..32].copy_from_slice(&file_header(OPEN_MAGIC, id));
            std::fs::rename(&open_tmp, &open_path)?;
            fault::inject(fault::Fault::Create)?;
            let mut sealed = OpenOptions::new()
                .create(true)
                .truncate(true)
                .write(true)
                .open(&sealed_tmp)?;
            sealed.write_all(&file_header(LOG_MAGIC, id))?;
            std::fs::rename(&sealed_tmp, &sealed_path)?;
            Ok((map, sealed))
        })();
        // A log that could not be made leaves nothing behind.
        let (map, sealed) = made.inspect_err(|_| {
            for p in [&open_tmp, &open_path, &sealed_tmp, &sealed_path] {
                let _ = std::fs::remove_file(p);
            }
        })?;
        let compressor = zstd::bulk::Compressor::new(level)?;
        Ok(ChunkLog {
            sealed,
            open_path,
            map: Some(map),
            cap,
            used: 0,
            records: 0,
            chunk: 0,
            compressor,
            finished: false,
            broken: false,
            reserve: 0,
            sealed_bytes: 32,
            columns: None,
        })
    }

    /// Bytes this log occupies so far: sealed frames plus the open chunk's records.
    pub fn bytes(&self) -> u64 {
        self.sealed_bytes + self.used as u64
    }

    /// Bytes still free in the open chunk for [`ChunkLog::append`].
    #[inline]
    pub fn remaining(&self) -> usize {
        (self.cap - self.reserve).saturating_sub(self.used)
    }

    /// Keeps the last `bytes` of the open chunk for [`ChunkLog::append_reserved`]: a
    /// record that must land even when nothing can be sealed any more (a full disk).
    pub fn set_reserve(&mut self, bytes: usize) {
        self.reserve = bytes.min(self.cap / 2);
    }

    /// Appends a small record into the open chunk, into the reserve if need be, without
    /// sealing. Fails when even the reserve is used up.
    pub fn append_reserved(&mut self, rec: &[u8]) -> io::Result<()> {
        if rec.len() > self.remaining() && !self.broken {
            let _ = self.seal(); // room for later records; a failure leaves the chunk as is
        }
        self.not_only_events();
        self.write_within(rec, self.cap)
    }

    /// A record that is not an event goes into the open chunk: it is sealed whole.
    fn not_only_events(&mut self) {
        if let Some(b) = self.columns.as_deref_mut() {
            b.valid = false;
        }
    }

    /// Appends one record (`rec[0]`, the tag, must be non-zero) that fits in the open
    /// chunk. The body is stored first and the tag last, so a torn record reads as a
    /// zero tag.
    #[inline]
    pub fn write_fitting(&mut self, rec: &[u8]) -> io::Result<()> {
        self.not_only_events();
        self.write_within(rec, self.cap - self.reserve)
    }

    /// [`ChunkLog::write_fitting`] into the first `limit` bytes of the open chunk.
    #[inline]
    fn write_within(&mut self, rec: &[u8], limit: usize) -> io::Result<()> {
        self.write_span(rec, rec.len(), limit)
    }

    /// Writes the record of `len` bytes at the start of `span` by copying all of `span`
    /// (its bytes past the record are zero, as the chunk is past its last record: one
    /// fixed-size copy writes nothing a reader could take for a record).
    #[inline]
    fn write_span(&mut self, span: &[u8], len: usize, limit: usize) -> io::Result<()> {
        let Some(map) = self.map.as_mut() else {
            return Err(finished_err());
        };
        if len == 0 || span[0] == 0 || self.used + len > limit || self.used + span.len() > self.cap
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "record does not fit",
            ));
        }
        let at = OPEN_HEADER + self.used;
        map[at + 1..at + span.len()].copy_from_slice(&span[1..]);
        fence(Ordering::Release);
        // SAFETY: `at` is inside the map (checked above); a volatile store keeps the tag
        // store after the body stores.
        unsafe { std::ptr::write_volatile(map.as_mut_ptr().add(at), span[0]) };
        self.used += len;
        self.records += 1;
        Ok(())
    }

    /// Appends a record of any size: seals first when it does not fit, and writes a
    /// record larger than a whole chunk as a sealed chunk of its own.
    pub fn append(&mut self, rec: &[u8]) -> io::Result<()> {
        if self.map.is_none() {
            return Err(finished_err());
        }
        if rec.len() > self.cap - self.reserve {
            self.seal()?;
            self.write_frame(rec, 1)?;
            self.set_open_chunk_no(self.chunk + 1);
            self.chunk += 1;
            return Ok(());
        }
        if rec.len() > self.remaining() {
            self.seal()?;
        }
        self.write_fitting(rec)
    }

    fn set_open_chunk_no(&mut self, n: u64) {
        if let Some(map) = self.map.as_mut() {
            fence(Ordering::Release);
            // SAFETY: the map is page-aligned and longer than OPEN_HEADER, so this is an
            // aligned u64 inside it; only this thread writes the map.
            let p = unsafe { &*(map.as_mut_ptr().add(OPEN_CHUNK_NO) as *const AtomicU64) };
            p.store(n.to_le(), Ordering::Release);
        }
    }

    /// Seals this log's chunks as columns: its records are event records
    /// ([`super::events`]), appended with [`ChunkLog::write_event`].
    pub fn seal_as_event_columns(&mut self) {
        self.columns = Some(Box::new(Building::new(self.cap)));
    }

    /// Appends event record `f` of `buf` (which fits in the open chunk), and its fields to
    /// the chunk's columns. `buf` must be zero after the record: with room in the map the
    /// record is copied with its zeros in one fixed-size copy.
    #[inline]
    pub fn write_event(&mut self, buf: &[u8; ENCODE_BUF], f: Encoded) -> io::Result<()> {
        const SPAN: usize = 32;
        debug_assert!(buf[f.len..SPAN].iter().all(|&b| b == 0));
        let span = if self.used + SPAN <= self.cap {
            &buf[..SPAN]
        } else {
            &buf[..f.len]
        };
        self.write_span(span, f.len, self.cap - self.reserve)?;
        if let Some(b) = self.columns.as_deref_mut() {
            b.push(buf, f);
        }
        Ok(())
    }

    fn write_frame(&mut self, raw: &[u8], records: u32) -> io::Result<()> {
        let (codec, packed) = match self.columns.as_deref() {
            // The columns hold exactly this chunk's records.
            Some(b) if b.valid && raw.len() == b.columns().iter().map(|c| c.len()).sum() => (
                CODEC_COLUMNS,
                columns::encode(b.columns(), &mut self.compressor)?,
            ),
            _ => (CODEC_ZSTD, self.compressor.compress(raw)?),
        };
        let f = if packed.len() < raw.len() {
            frame(codec, self.chunk, raw.len() as u32, records, &packed)
        } else {
            frame(CODEC_STORED, self.chunk, raw.len() as u32, records, raw)
        };
        if let Err(e) = fault::write_frame(&mut self.sealed, &f) {
            // The log may now end in a partial frame: seal nothing more. The open chunk
            // file stays as it is, so a reader still gets every record (the torn frame is
            // dropped), and the reserve can still take a record.
            self.broken = true;
            return Err(e);
        }
        self.sealed_bytes += f.len() as u64;
        Ok(())
    }

    /// Seals the open chunk (if it holds records): compress, append the frame, then clear
    /// the map and advance the open chunk's number.
    pub fn seal(&mut self) -> io::Result<()> {
        if self.records == 0 {
            return Ok(());
        }
        if self.broken {
            return Err(broken_err());
        }
        let Some(map) = self.map.take() else {
            return Err(finished_err());
        };
        let res = self.write_frame(&map[OPEN_HEADER..OPEN_HEADER + self.used], self.records);
        if let Err(e) = res {
            self.map = Some(map);
            return Err(e);
        }
        let mut map = map;
        map[OPEN_HEADER..OPEN_HEADER + self.used].fill(0);
        self.map = Some(map);
        self.set_open_chunk_no(self.chunk + 1);
        self.chunk += 1;
        self.used = 0;
        self.records = 0;
        if let Some(b) = self.columns.as_deref_mut() {
            b.clear();
        }
        Ok(())
    }

    /// Seals, writes the end frame and removes the open chunk file.
    pub fn finish(&mut self) -> io::Result<()> {
        if self.finished {
            return Ok(());
        }
        if self.broken {
            // The open chunk file stays, mapped: it holds the log's last records, and
            // its reserve can still take one.
            return Err(broken_err());
        }
        self.seal()?;
        self.sealed
            .write_all(&frame(CODEC_END, self.chunk, 0, 0, &[]))?;
        self.finished = true;
        self.map = None;
        std::fs::remove_file(&self.open_path)
    }
}

impl Drop for ChunkLog {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

fn finished_err() -> io::Error {
    io::Error::other("log already finished")
}

fn broken_err() -> io::Error {
    io::Error::other("an earlier write to the log failed")
}

/// Allocates the file's first `len` bytes on disk (zeros), or says why it cannot.
fn reserve_blocks(f: &File, len: u64) -> io::Result<()> {
    use std::os::unix::io::AsRawFd;
    // SAFETY: a plain system call on a file descriptor we own.
    let r = unsafe { libc::posix_fallocate(f.as_raw_fd(), 0, len as libc::off_t) };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(r))
    }
}

/// Fault injection for tests: `JRACE_TEST_FAULT=KIND:N` makes the N-th operation of that
/// kind in this process fail as a full disk would (`ENOSPC`), where KIND is `create` (a
/// log's file), `reserve` (its open chunk's blocks), `map` (mapping it) or `frame` (a
/// sealed chunk's write, which then stops half way). Unset, it costs one load per
/// operation, and none of these is on an event's path.
mod fault {
    use std::io::{self, Write};
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::OnceLock;

    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    pub enum Fault {
        Create,
        Reserve,
        Map,
        Frame,
    }

    fn plan() -> Option<(Fault, u64)> {
        static PLAN: OnceLock<Option<(Fault, u64)>> = OnceLock::new();
        *PLAN.get_or_init(|| {
            let v = std::env::var("JRACE_TEST_FAULT").ok()?;
            let (k, n) = v.split_once(':')?;
            let kind = match k {
                "create" => Fault::Create,
                "reserve" => Fault::Reserve,
                "map" => Fault::Map,
                "frame" => Fault::Frame,
                _ => return None,
            };
            Some((kind, n.parse().ok()?))
        })
    }

    /// Whether this operation of `kind` is the one planned to fail.
    fn due(kind: Fault) -> bool {
        static SEEN: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];
        match plan() {
            Some((k, n)) if k == kind => {
                SEEN[kind as usize].fetch_add(1, Ordering::Relaxed) + 1 == n
            }
            _ => false,
        }
    }

    fn full() -> io::Error {
        io::Error::from_raw_os_error(28) // ENOSPC
    }

    pub fn inject(kind: Fault) -> io::Result<()> {
        if due(kind) {
            Err(full())
        } else {
            Ok(())
        }
    }

    /// `w.write_all(bytes)`, or half of it and a full disk when a fault is due.
    pub fn write_frame(w: &mut impl Write, bytes: &[u8]) -> io::Result<()> {
        if due(Fault::Frame) {
            w.write_all(&bytes[..bytes.len() / 2])?;
            return Err(full());
        }
        w.write_all(bytes)
    }
}
