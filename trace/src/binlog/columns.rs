//! A sealed chunk of event records stored as three columns (codec 3, FORMAT.md §2).
//!
//! Why: an event record interleaves fields that repeat (tag, variable, location: a loop
//! touches the same few) with two that rarely do (the clock delta, whose low bits are
//! noise, and the value). zstd finds only short matches between the noisy bytes, so it
//! compresses slowly and poorly. A thread log therefore keeps the stamp deltas and the
//! values of its open chunk in columns of their own, besides the records, and sealing
//! compresses the three columns separately: on recorded traces this halves zstd's time and
//! takes a quarter to a third off the size. The columns are filled as records are
//! appended ([`Building`]), from the encoder's field boundaries, since parsing the chunk
//! again at sealing costs the recording thread more than zstd saves. The open chunk keeps
//! whole records (what a killed writer leaves must be readable). The trace reader's
//! decoding threads read events straight from the columns ([`ColumnCursor`]), so nothing
//! after them knows the difference.
//!
//! Payload: for each column (stamps, values, rest) one byte of codec (0 stored, 1 zstd),
//! its length after decompression (u32) and its stored length (u32), then the three
//! columns' bytes in that order.

use super::events::{
    has_target as kind_has_target, word_uvarint, DeltaState, Encoded, ENCODE_BUF, TAG_HAS_STAMP,
    TAG_HAS_VALUE, TAG_VALUE_FLAG,
};
#[cfg(test)]
use super::varint::MAX_VARINT;
use super::varint::{unzigzag, Cursor};
use crate::model::{Event, Kind, ThreadId, FLAG_VALUE};

/// Columns of one chunk while reading it; kept to reuse their buffers.
#[derive(Default)]
pub struct Columns {
    pub stamps: Vec<u8>,
    pub values: Vec<u8>,
    pub rest: Vec<u8>,
}

impl Columns {
    /// Pads each column with 16 zero bytes for [`ColumnCursor`]'s fixed-size reads; its
    /// lengths before.
    pub fn pad(&mut self) -> [usize; 3] {
        let lens = [self.stamps.len(), self.values.len(), self.rest.len()];
        for col in [&mut self.stamps, &mut self.values, &mut self.rest] {
            col.extend_from_slice(&[0; 16]);
        }
        lens
    }
}

/// Where the next record of a chunk read straight from its (padded) columns is: the
/// decoding threads read events this way, without rebuilding records first.
#[derive(Clone, Copy, Debug, Default)]
pub struct ColumnCursor {
    s: usize,
    v: usize,
    r: usize,
    lens: [usize; 3],
}

/// The varint at `col[*at..]`, which must end within `len`; `col` is padded.
#[inline(always)]
fn col_uvarint(col: &[u8], at: &mut usize, len: usize, what: &str) -> Result<u64, String> {
    let fast = col
        .get(*at..*at + 8)
        .and_then(|b| word_uvarint(u64::from_le_bytes(b.try_into().ok()?)));
    let (x, n) = match fast {
        Some(r) => r,
        None => {
            // 9 or 10 bytes, or none that ends: the careful reader says which.
            let mut c = Cursor::new(&col[..len.min(col.len())], *at);
            let x = c.uvarint(what)?;
            (x, c.pos - *at)
        }
    };
    if *at + n > len {
        return Err(format!(
            "expected {what} in its column at byte {at}, found the column's end"
        ));
    }
    *at += n;
    Ok(x)
}

impl ColumnCursor {
    /// At the first record of columns with lengths `lens` ([`Columns::pad`]).
    pub fn new(lens: [usize; 3]) -> ColumnCursor {
        ColumnCursor {
            lens,
            ..ColumnCursor::default()
        }
    }

    /// Byte offset of the next record in the record column.
    pub fn at(&self) -> usize {
        self.r
    }

    /// Whether every record was read; an error if the stamp or value column has bytes
    /// left then.
    pub fn done(&self) -> Result<bool, String> {
        if self.r < self.lens[2] {
            return Ok(false);
        }
        if self.s != self.lens[0] || self.v != self.lens[1] {
            return Err(format!(
                "expected the stamp and value columns to end with the records, found {} and {} bytes more",
                self.lens[0] - self.s,
                self.lens[1] - self.v
            ));
        }
        Ok(true)
    }

    /// Decodes the next record of `c` (not [`ColumnCursor::done`]) into `out` as
    /// `(stamp, event)`, as [`super::events::decode`] does the same record.
    #[inline]
    pub fn next(
        &mut self,
        c: &Columns,
        st: &mut DeltaState,
        thread: ThreadId,
        out: &mut (u64, Event),
    ) -> Result<(), String> {
        let tag = c.rest[self.r];
        let Some(kind) = (tag & 0x1f).checked_sub(1).and_then(Kind::from_u8) else {
            return Err(format!(
                "expected a record tag with a kind code 1..=17, found byte {tag:#04x}"
            ));
        };
        self.r += 1;
        let mut stamp = st.stamp;
        if tag & TAG_HAS_STAMP != 0 {
            let d = col_uvarint(&c.stamps, &mut self.s, self.lens[0], "a stamp delta")?;
            stamp = stamp
                .checked_add(d)
                .ok_or("expected a stamp delta, found one that overflows 64 bits")?;
        }
        let target = if kind_has_target(kind) {
            let t = col_uvarint(&c.rest, &mut self.r, self.lens[2], "the event's target id")?;
            u32::try_from(t)
                .map_err(|_| format!("expected the event's target id below 2^32, found {t}"))?
        } else {
            0
        };
        let dl = unzigzag(col_uvarint(
            &c.rest,
            &mut self.r,
            self.lens[2],
            "a location delta",
        )?);
        let loc = (st.loc as i64)
            .checked_add(dl)
            .and_then(|l| u32::try_from(l).ok())
            .ok_or_else(|| {
                format!("expected a location delta, found {dl} (location out of range)")
            })?;
        let value = if tag & TAG_HAS_VALUE != 0 {
            unzigzag(col_uvarint(
                &c.values,
                &mut self.v,
                self.lens[1],
                "the event's value",
            )?)
        } else {
            0
        };
        st.stamp = stamp;
        st.loc = loc;
        out.0 = stamp;
        out.1 = Event::new(thread, kind, target, loc);
        out.1.value = value;
        if tag & TAG_VALUE_FLAG != 0 {
            out.1.flags = FLAG_VALUE;
        }
        Ok(())
    }
}

/// The open chunk's records as columns, filled as they are appended.
pub struct Building {
    stamps: Vec<u8>,
    values: Vec<u8>,
    rest: Vec<u8>,
    /// Bytes used of each column.
    s: usize,
    v: usize,
    r: usize,
    /// Nothing but [`Building::push`]ed records is in the chunk.
    pub valid: bool,
}

impl Building {
    /// Columns for a chunk of `cap` bytes of records. The memory is zeroed pages the
    /// system gives only as they are written.
    pub fn new(cap: usize) -> Building {
        Building {
            stamps: vec![0; cap + 16],
            values: vec![0; cap + 16],
            rest: vec![0; cap + 16],
            s: 0,
            v: 0,
            r: 0,
            valid: true,
        }
    }

    /// Adds the record `f` in `buf`, which the chunk (of at most the `cap` bytes given to
    /// [`Building::new`]) had room for: each field moves with one 16-byte copy.
    #[inline]
    pub fn push(&mut self, buf: &[u8; ENCODE_BUF], f: Encoded) {
        self.stamps[self.s..self.s + 16].copy_from_slice(&buf[1..17]);
        self.s += f.stamp_end - 1;
        self.rest[self.r] = buf[0];
        self.rest[self.r + 1..self.r + 17].copy_from_slice(&buf[f.stamp_end..f.stamp_end + 16]);
        self.r += 1 + f.rest_end - f.stamp_end;
        self.values[self.v..self.v + 16].copy_from_slice(&buf[f.rest_end..f.rest_end + 16]);
        self.v += f.len - f.rest_end;
    }

    /// The stamp, value and record columns so far.
    pub fn columns(&self) -> [&[u8]; 3] {
        [
            &self.stamps[..self.s],
            &self.values[..self.v],
            &self.rest[..self.r],
        ]
    }

    /// Empty again, for the next chunk.
    pub fn clear(&mut self) {
        (self.s, self.v, self.r) = (0, 0, 0);
        self.valid = true;
    }
}

/// Length of the varint at `at` in `b`, if one ends within `MAX_VARINT` bytes.
#[cfg(test)]
fn varint_len(b: &[u8], at: usize) -> Option<usize> {
    let w = b.get(at..)?;
    let n = w.iter().take(MAX_VARINT).position(|&x| x & 0x80 == 0)?;
    Some(n + 1)
}

/// Whether records with this tag (its kind code, tag & 0x1f) carry a target; `None` for
/// a code that names no kind.
#[cfg(test)]
fn has_target(tag: u8) -> Option<bool> {
    (tag & 0x1f)
        .checked_sub(1)
        .and_then(Kind::from_u8)
        .map(kind_has_target)
}

/// Appends the `n` bytes at `src[at..]` to `dst`.
#[cfg(test)]
fn copy(dst: &mut Vec<u8>, src: &[u8], at: usize, n: usize) {
    dst.extend_from_slice(&src[at..at + n]);
}

/// The columns of `raw` (whole records), parsed: what [`Building`] gives without parsing,
/// for tests to check it against.
#[cfg(test)]
pub fn split(raw: &[u8], c: &mut Columns) -> Option<()> {
    c.stamps.clear();
    c.values.clear();
    c.rest.clear();
    let mut p = 0;
    while p < raw.len() {
        let tag = raw[p];
        let with_target = has_target(tag)?;
        c.rest.push(tag);
        p += 1;
        if tag & TAG_HAS_STAMP != 0 {
            let n = varint_len(raw, p)?;
            copy(&mut c.stamps, raw, p, n);
            p += n;
        }
        let mut n = varint_len(raw, p)?;
        if with_target {
            n += varint_len(raw, p + n)?;
        }
        copy(&mut c.rest, raw, p, n);
        p += n;
        if tag & TAG_HAS_VALUE != 0 {
            let n = varint_len(raw, p)?;
            copy(&mut c.values, raw, p, n);
            p += n;
        }
    }
    Some(())
}

/// Codec of one column in the payload.
const COL_STORED: u8 = 0;
const COL_ZSTD: u8 = 1;
/// Bytes before the columns' data: per column, codec, raw length, stored length.
pub const PAYLOAD_HEADER: usize = 3 * 9;

/// The payload of `cols` (stamps, values, records), each compressed by `z` when that
/// makes it smaller.
pub fn encode(cols: [&[u8]; 3], z: &mut zstd::bulk::Compressor<'_>) -> std::io::Result<Vec<u8>> {
    let mut parts: Vec<(u8, u32, Vec<u8>)> = Vec::with_capacity(3);
    for col in cols {
        let packed = if col.is_empty() {
            Vec::new()
        } else {
            z.compress(col)?
        };
        if packed.len() < col.len() {
            parts.push((COL_ZSTD, col.len() as u32, packed));
        } else {
            parts.push((COL_STORED, col.len() as u32, col.to_vec()));
        }
    }
    let mut out =
        Vec::with_capacity(PAYLOAD_HEADER + parts.iter().map(|p| p.2.len()).sum::<usize>());
    for (codec, raw, data) in &parts {
        out.push(*codec);
        out.extend_from_slice(&raw.to_le_bytes());
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    }
    for (_, _, data) in &parts {
        out.extend_from_slice(data);
    }
    Ok(out)
}

/// The columns of `payload` into `c`, each no longer than `max` bytes.
pub fn decode(
    payload: &[u8],
    max: usize,
    z: &mut zstd::bulk::Decompressor<'_>,
    c: &mut Columns,
) -> Result<(), String> {
    if payload.len() < PAYLOAD_HEADER {
        return Err(format!(
            "expected a {PAYLOAD_HEADER}-byte column header, found {} bytes",
            payload.len()
        ));
    }
    let mut at = PAYLOAD_HEADER;
    for (i, (name, col)) in [
        ("stamp", &mut c.stamps),
        ("value", &mut c.values),
        ("record", &mut c.rest),
    ]
    .into_iter()
    .enumerate()
    {
        let h = &payload[i * 9..i * 9 + 9];
        let codec = h[0];
        let raw = u32::from_le_bytes([h[1], h[2], h[3], h[4]]) as usize;
        let len = u32::from_le_bytes([h[5], h[6], h[7], h[8]]) as usize;
        if raw > max {
            return Err(format!(
                "expected a {name} column of at most {max} bytes, found {raw}"
            ));
        }
        let data = payload
            .get(at..at.saturating_add(len))
            .ok_or_else(|| format!("expected {len} bytes of the {name} column, found fewer"))?;
        at += len;
        col.clear();
        match codec {
            COL_STORED if len == raw => col.extend_from_slice(data),
            COL_STORED => {
                return Err(format!(
                    "expected a stored {name} column of {raw} bytes, found {len}"
                ))
            }
            COL_ZSTD => {
                col.reserve(raw);
                let n = z.decompress_to_buffer(data, col).map_err(|e| {
                    format!(
                        "expected a zstd {name} column, found data that does not decompress: {e}"
                    )
                })?;
                if n != raw {
                    return Err(format!(
                        "expected {raw} bytes of the {name} column after decompression, found {n}"
                    ));
                }
            }
            other => {
                return Err(format!(
                    "expected column codec 0 or 1 for the {name} column, found {other}"
                ))
            }
        }
    }
    if at != payload.len() {
        return Err(format!(
            "expected the payload to end after its columns, found {} bytes more",
            payload.len() - at
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::binlog::events::encode as enc;

    /// `n` random records, and the same as [`Building`] columns.
    fn built(n: usize, seed: u64) -> (Vec<u8>, Building) {
        let mut x = seed | 1;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut st = DeltaState::default();
        let mut out = Vec::new();
        let mut b = Building::new(n * MAX_VARINT * 4 + 64);
        let mut stamp = 0u64;
        for _ in 0..n {
            let kind = Kind::from_u8((next() % 17) as u8).unwrap();
            let mut e = Event::new(0, kind, (next() % 5000) as u32, (next() % 300) as u32);
            if next() % 3 == 0 {
                e = e.with_value(next() as i64 >> (next() % 64));
            }
            stamp += next() % 4 * (next() % 1000);
            let mut buf = [0u8; ENCODE_BUF];
            let f = enc(&mut st, stamp, &e, &mut buf);
            out.extend_from_slice(&buf[..f.len]);
            b.push(&buf, f);
        }
        (out, b)
    }

    fn records(n: usize, seed: u64) -> Vec<u8> {
        built(n, seed).0
    }

    #[test]
    fn columns_built_while_appending_are_those_of_the_records() {
        for seed in 1..30u64 {
            let (raw, b) = built((seed * 53 % 700) as usize, seed);
            let mut c = Columns::default();
            split(&raw, &mut c).unwrap();
            assert_eq!(
                b.columns(),
                [&c.stamps[..], &c.values[..], &c.rest[..]],
                "seed {seed}"
            );
        }
    }

    /// Reads every record of `c` straight from its columns: the first error, if any.
    fn read_all(c: &mut Columns) -> Result<(), String> {
        let mut cur = ColumnCursor::new(c.pad());
        let mut st = DeltaState::default();
        let mut out = (0, Event::new(0, Kind::Read, 0, 0));
        while !cur.done()? {
            cur.next(c, &mut st, 0, &mut out)?;
        }
        Ok(())
    }

    #[test]
    fn kinds_without_a_target_are_begin_end_and_branch() {
        for code in 0..32u8 {
            let want = code
                .checked_sub(1)
                .and_then(Kind::from_u8)
                .map(|k| !matches!(k, Kind::Begin | Kind::End | Kind::Branch));
            assert_eq!(has_target(code), want, "code {code}");
        }
    }

    #[test]
    fn columns_survive_encoding() {
        let mut z = zstd::bulk::Compressor::new(1).unwrap();
        let mut d = zstd::bulk::Decompressor::new().unwrap();
        for seed in 1..40u64 {
            let raw = records((seed * 37 % 500) as usize, seed);
            let mut c = Columns::default();
            split(&raw, &mut c).unwrap();
            assert_eq!(c.stamps.len() + c.values.len() + c.rest.len(), raw.len());
            let payload = encode([&c.stamps, &c.values, &c.rest], &mut z).unwrap();
            let mut back = Columns::default();
            decode(&payload, 1 << 20, &mut d, &mut back).unwrap();
            assert_eq!(
                [&back.stamps, &back.values, &back.rest],
                [&c.stamps, &c.values, &c.rest],
                "seed {seed}"
            );
        }
    }

    #[test]
    fn reading_columns_gives_what_reading_records_does() {
        use crate::binlog::events::decode as dec_row;
        for seed in 1..30u64 {
            let raw = records((seed * 41 % 600) as usize, seed);
            let mut c = Columns::default();
            split(&raw, &mut c).unwrap();
            let lens = c.pad();
            let mut cur = ColumnCursor::new(lens);
            let (mut st_c, mut st_r) = (DeltaState::default(), DeltaState::default());
            let mut rc = Cursor::new(&raw, 0);
            let mut out = (0, Event::new(0, Kind::Read, 0, 0));
            while !cur.done().unwrap() {
                cur.next(&c, &mut st_c, 5, &mut out).unwrap();
                assert_eq!(out, dec_row(&mut st_r, &mut rc, 5).unwrap(), "seed {seed}");
            }
            assert!(rc.at_end());
        }
    }

    #[test]
    fn damaged_columns_are_errors_not_panics() {
        let raw = records(300, 7);
        let mut c = Columns::default();
        split(&raw, &mut c).unwrap();
        let mut z = zstd::bulk::Compressor::new(1).unwrap();
        let mut d = zstd::bulk::Decompressor::new().unwrap();
        let payload = encode([&c.stamps, &c.values, &c.rest], &mut z).unwrap();
        // Every cut and every single-byte change either fails with a message or reads as
        // some records (a changed byte can still be well-formed); none panics.
        for cut in 0..payload.len() {
            let mut back = Columns::default();
            if decode(&payload[..cut], 1 << 20, &mut d, &mut back).is_ok() {
                let _ = read_all(&mut back);
            }
        }
        for i in 0..payload.len() {
            let mut p = payload.clone();
            p[i] ^= 0x5a;
            let mut back = Columns::default();
            if decode(&p, 1 << 20, &mut d, &mut back).is_ok() {
                let _ = read_all(&mut back);
            }
        }
        // A record column whose stamps are missing is told.
        let mut short = Columns::default();
        split(&raw, &mut short).unwrap();
        short.stamps.truncate(short.stamps.len() / 2);
        assert!(read_all(&mut short).unwrap_err().contains("stamp delta"));
        // A torn chunk does not split.
        assert!(split(&raw[..raw.len() - 1], &mut Columns::default()).is_none());
    }
}
