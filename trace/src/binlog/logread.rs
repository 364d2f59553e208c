//! Reads one log (`STEM.jrl` + optional `STEM.open`) back, one chunk at a time, and
//! decides what a killed writer left: which chunks are sealed, whether the open chunk is
//! current, and whether a torn tail is a crash (clean stop) or a truncation (error).

use super::chunklog::*;
use super::columns::{self, Columns};
use super::VERSION;
use crate::error::TraceError;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Where a chunk's bytes came from, for error messages.
#[derive(Clone, Debug)]
pub struct ChunkOrigin {
    pub path: PathBuf,
    /// Frame offset in `STEM.jrl`, or offset of the first record in `STEM.open`.
    pub offset: u64,
    pub number: u64,
    /// Sealed: decompressed bytes; offsets of records are reported relative to them.
    /// Open: raw records straight from the file, ending at the first zero tag.
    pub sealed: bool,
    /// Record count from the frame header (sealed chunks only).
    pub records: u32,
    /// The chunk was sealed as columns and is left in [`LogReader::columns`], not in the
    /// caller's buffer; byte offsets are then in its record column.
    pub in_columns: bool,
}

impl ChunkOrigin {
    /// An error at byte `at` of this chunk's data.
    pub fn err(&self, at: usize, msg: impl Into<String>) -> TraceError {
        if self.sealed {
            TraceError::Binary {
                path: self.path.clone(),
                offset: self.offset,
                msg: format!(
                    "in sealed chunk {} at byte {at} of its data: {}",
                    self.number,
                    msg.into()
                ),
            }
        } else {
            TraceError::Binary {
                path: self.path.clone(),
                offset: self.offset + at as u64,
                msg: msg.into(),
            }
        }
    }
}

enum Open {
    /// No open chunk file: the writer finished (or never got that far).
    Absent,
    /// Open chunk number and its record bytes.
    Chunk(u64, Vec<u8>),
}

pub struct LogReader {
    sealed_path: PathBuf,
    open_path: PathBuf,
    /// Sealed chunks are left to read. The file is opened for each chunk and closed after
    /// it, so that a trace of more threads than the process may open files (tens of
    /// thousands of virtual threads) still reads.
    sealed: bool,
    len: u64,
    pos: u64,
    /// Number of the next sealed chunk expected.
    next: u64,
    open: Open,
    done: bool,
    /// The log ended without its end frame (read up to its open chunk): the writer was
    /// killed, or the process died, before finishing it.
    unfinished: bool,
    comp: Vec<u8>,
    /// zstd context, made at the first compressed chunk and reused for the others.
    dctx: Option<zstd::bulk::Decompressor<'static>>,
    /// Buffers for chunks sealed as columns.
    columns: Option<Box<Columns>>,
}

/// The zstd context in `d`, made at the first compressed chunk and reused for the others.
fn zstd_ctx<'a>(
    d: &'a mut Option<zstd::bulk::Decompressor<'static>>,
) -> std::io::Result<&'a mut zstd::bulk::Decompressor<'static>> {
    if d.is_none() {
        *d = Some(zstd::bulk::Decompressor::new()?);
    }
    Ok(d.as_mut().expect("made above"))
}

fn bin(path: &Path, offset: u64, msg: impl Into<String>) -> TraceError {
    TraceError::Binary {
        path: path.to_owned(),
        offset,
        msg: msg.into(),
    }
}

fn le32(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}
fn le64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_le_bytes(a)
}

fn check_header(path: &Path, h: &[u8], magic: &[u8; 8], id: u32) -> Result<(), TraceError> {
    if &h[..8] != magic {
        return Err(bin(
            path,
            0,
            format!(
                "expected the magic {:?}, found {:?}",
                String::from_utf8_lossy(magic),
                String::from_utf8_lossy(&h[..8])
            ),
        ));
    }
    let v = le32(&h[8..12]);
    if v != VERSION {
        return Err(bin(
            path,
            8,
            format!("expected format version {VERSION}, found {v}"),
        ));
    }
    let got = le32(&h[12..16]);
    if got != id {
        return Err(bin(
            path,
            12,
            format!("expected log id {id} (from the file name), found {got}"),
        ));
    }
    Ok(())
}

impl LogReader {
    /// Opens log `stem` in `dir`, whose headers must carry `id`.
    pub fn open(dir: &Path, stem: &str, id: u32) -> Result<LogReader, TraceError> {
        let sealed_path = sealed_path(dir, stem);
        let open_path = open_path(dir, stem);
        let open = match File::open(&open_path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Open::Absent,
            Err(e) => return Err(TraceError::io(&open_path, e)),
            Ok(mut f) => {
                let mut data = Vec::new();
                f.read_to_end(&mut data)
                    .map_err(|e| TraceError::io(&open_path, e))?;
                if data.len() < OPEN_HEADER {
                    return Err(bin(&open_path, 0, format!("expected an open-chunk header of {OPEN_HEADER} bytes, found {} bytes (truncated)", data.len())));
                }
                check_header(&open_path, &data, OPEN_MAGIC, id)?;
                let n = le64(&data[OPEN_CHUNK_NO..]);
                data.drain(..OPEN_HEADER);
                Open::Chunk(n, data)
            }
        };
        let (file, len) = match File::open(&sealed_path) {
            Ok(mut f) => {
                let len = f
                    .metadata()
                    .map_err(|e| TraceError::io(&sealed_path, e))?
                    .len();
                let mut h = [0u8; LOG_HEADER];
                if len < LOG_HEADER as u64 {
                    return Err(bin(
                        &sealed_path,
                        0,
                        format!(
                            "expected a {LOG_HEADER}-byte header, found {len} bytes (truncated)"
                        ),
                    ));
                }
                f.read_exact(&mut h)
                    .map_err(|e| TraceError::io(&sealed_path, e))?;
                check_header(&sealed_path, &h, LOG_MAGIC, id)?;
                (true, len)
            }
            // Killed between creating the open chunk and the sealed file: no chunk sealed.
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound && matches!(open, Open::Chunk(..)) =>
            {
                (false, 0)
            }
            Err(e) => return Err(TraceError::io(&sealed_path, e)),
        };
        Ok(LogReader {
            sealed_path,
            open_path,
            sealed: file,
            len,
            pos: LOG_HEADER as u64,
            next: 0,
            open,
            done: false,
            unfinished: false,
            comp: Vec::new(),
            dctx: None,
            columns: None,
        })
    }

    /// Whether the log, read to its end, had no end frame (its writer did not finish it).
    pub fn unfinished(&self) -> bool {
        self.unfinished
    }

    /// The columns of the last chunk read that was sealed as columns.
    pub fn columns(&mut self) -> &mut Columns {
        self.columns.get_or_insert_with(Box::default)
    }

    /// The next chunk's records into `buf` (or, for a chunk sealed as columns, into
    /// [`LogReader::columns`]: see [`ChunkOrigin::in_columns`]), or `None` at the end of
    /// the log.
    pub fn next_chunk(&mut self, buf: &mut Vec<u8>) -> Result<Option<ChunkOrigin>, TraceError> {
        buf.clear();
        if self.done {
            return Ok(None);
        }
        if self.sealed {
            let at = self.pos;
            let left = self.len - at;
            let torn = |what: String| -> Result<(), TraceError> {
                Err(bin(
                    &self.sealed_path,
                    at,
                    format!(
                        "{what}; the log has no end frame and no open chunk, so it was truncated"
                    ),
                ))
            };
            if left == 0 {
                self.sealed = false;
            } else if left < FRAME_HEADER as u64 {
                if matches!(self.open, Open::Absent) {
                    torn(format!(
                        "expected a {FRAME_HEADER}-byte frame header, found {left} bytes"
                    ))?;
                }
                self.sealed = false; // torn by a kill: dropped
            } else {
                let mut file = File::open(&self.sealed_path)
                    .map_err(|e| TraceError::io(&self.sealed_path, e))?;
                let mut h = [0u8; FRAME_HEADER];
                file.seek(SeekFrom::Start(at))
                    .map_err(|e| TraceError::io(&self.sealed_path, e))?;
                file.read_exact(&mut h)
                    .map_err(|e| TraceError::io(&self.sealed_path, e))?;
                if &h[..4] != FRAME_MAGIC {
                    return Err(bin(
                        &self.sealed_path,
                        at,
                        format!(
                            "expected a frame header (magic JRCK), found bytes {:02x?}",
                            &h[..4]
                        ),
                    ));
                }
                let codec = h[4];
                let number = le64(&h[8..]);
                let raw_len = le32(&h[16..]) as usize;
                let comp_len = le32(&h[20..]) as u64;
                let records = le32(&h[24..]);
                let crc = le32(&h[28..]);
                if comp_len > left - FRAME_HEADER as u64 {
                    if matches!(self.open, Open::Absent) {
                        torn(format!(
                            "expected a frame of {comp_len} payload bytes, found {}",
                            left - FRAME_HEADER as u64
                        ))?;
                    }
                    self.sealed = false;
                    return self.after_sealed(buf);
                }
                self.comp.resize(comp_len as usize, 0);
                file.read_exact(&mut self.comp)
                    .map_err(|e| TraceError::io(&self.sealed_path, e))?;
                let mut hasher = crc32fast::Hasher::new();
                hasher.update(&h[..FRAME_CRC_AT]);
                hasher.update(&self.comp);
                if hasher.finalize() != crc {
                    return Err(bin(
                        &self.sealed_path,
                        at,
                        "expected a frame whose CRC matches, found a mismatch (corrupted)",
                    ));
                }
                if number != self.next {
                    return Err(bin(
                        &self.sealed_path,
                        at,
                        format!("expected chunk number {}, found {number}", self.next),
                    ));
                }
                self.pos = at + FRAME_HEADER as u64 + comp_len;
                if raw_len > MAX_CHUNK {
                    return Err(bin(
                        &self.sealed_path,
                        at,
                        format!("expected a chunk of at most {MAX_CHUNK} bytes, found {raw_len}"),
                    ));
                }
                let mut in_columns = false;
                match codec {
                    CODEC_END => {
                        if self.pos != self.len {
                            return Err(bin(
                                &self.sealed_path,
                                self.pos,
                                "expected the end of the file after the end frame, found more data",
                            ));
                        }
                        self.done = true;
                        return Ok(None);
                    }
                    CODEC_STORED => buf.extend_from_slice(&self.comp),
                    CODEC_ZSTD => {
                        buf.reserve(raw_len);
                        let n = zstd_ctx(&mut self.dctx)
                            .and_then(|d| d.decompress_to_buffer(&self.comp[..], buf))
                            .map_err(|e| bin(&self.sealed_path, at, format!("expected a zstd frame, found data that does not decompress: {e}")))?;
                        if n != raw_len {
                            return Err(bin(
                                &self.sealed_path,
                                at,
                                format!("expected {raw_len} bytes after decompression, found {n}"),
                            ));
                        }
                    }
                    CODEC_COLUMNS => {
                        let mut cols = self.columns.take().unwrap_or_default();
                        let read = zstd_ctx(&mut self.dctx)
                            .map_err(|e| format!("expected to decompress, found: {e}"))
                            .and_then(|d| columns::decode(&self.comp, raw_len, d, &mut cols));
                        self.columns = Some(cols);
                        read.map_err(|m| bin(&self.sealed_path, at, m))?;
                        in_columns = true;
                    }
                    c => {
                        return Err(bin(
                            &self.sealed_path,
                            at,
                            format!("expected codec 0, 1, 2 or 3, found {c}"),
                        ))
                    }
                }
                if !in_columns && buf.len() != raw_len {
                    return Err(bin(
                        &self.sealed_path,
                        at,
                        format!("expected {raw_len} bytes of records, found {}", buf.len()),
                    ));
                }
                self.next += 1;
                return Ok(Some(ChunkOrigin {
                    path: self.sealed_path.clone(),
                    offset: at,
                    number,
                    sealed: true,
                    records,
                    in_columns,
                }));
            }
        }
        self.after_sealed(buf)
    }

    /// All sealed chunks read, no end frame: the writer was killed (or is running). The
    /// open chunk is current if its number is the next one; if it is the one just sealed,
    /// the kill came between sealing and clearing it.
    fn after_sealed(&mut self, buf: &mut Vec<u8>) -> Result<Option<ChunkOrigin>, TraceError> {
        self.done = true;
        self.unfinished = true;
        match std::mem::replace(&mut self.open, Open::Absent) {
            Open::Absent => Err(bin(&self.sealed_path, self.pos, "expected an end frame, found the end of the file (the log was truncated, or its .open file was removed)")),
            Open::Chunk(n, data) if n == self.next => {
                *buf = data;
                Ok(Some(ChunkOrigin { path: self.open_path.clone(), offset: OPEN_HEADER as u64, number: n, sealed: false, records: 0, in_columns: false }))
            }
            Open::Chunk(n, _) if n + 1 == self.next => Ok(None),
            Open::Chunk(n, _) => Err(bin(&self.open_path, OPEN_CHUNK_NO as u64, format!("expected open chunk number {} or {} (after the sealed chunks), found {n}: sealed chunks are missing", self.next.saturating_sub(1), self.next))),
        }
    }
}
