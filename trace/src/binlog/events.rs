//! The event record: one tag byte that carries the kind and flags, then varints.
//!
//! ```text
//! tag      bits 0-4: kind + 1 (1..=17; 0 never starts a record), bit 5: FLAG_VALUE,
//!          bit 6: a value field follows, bit 7: a stamp delta follows (else delta 0)
//! [stamp delta]  uvarint, stamp minus the previous record's stamp in this chunk
//! [target]       uvarint, absent for begin, end and branch
//! loc delta      zigzag varint, loc minus the previous record's loc in this chunk
//! [value]        zigzag varint (for enter: the reachable-set id)
//! ```
//! Deltas restart from 0 at every chunk, so each chunk decodes on its own.

use super::varint::{put_uvarint, unzigzag, zigzag, Cursor};
use crate::model::*;

/// Longest event record: tag, stamp delta, target, loc delta, value.
pub const MAX_EVENT_RECORD: usize = 1 + 10 + 5 + 5 + 10;

pub(super) const TAG_VALUE_FLAG: u8 = 1 << 5;
pub(super) const TAG_HAS_VALUE: u8 = 1 << 6;
pub(super) const TAG_HAS_STAMP: u8 = 1 << 7;

/// Whether a record of kind `k` has a target field.
pub(super) fn has_target(k: Kind) -> bool {
    !matches!(k, Kind::Begin | Kind::End | Kind::Branch)
}

/// Delta state of one chunk, shared by encoder and decoder.
#[derive(Clone, Copy, Debug, Default)]
pub struct DeltaState {
    pub stamp: u64,
    pub loc: u32,
}

/// Room [`encode`] needs: the longest record, and 16 bytes after any field for the
/// fixed-size copies that move fields into columns ([`super::columns`]).
pub const ENCODE_BUF: usize = MAX_EVENT_RECORD + 16;

/// Where an encoded record's fields are: `buf[1..stamp_end]` is the stamp delta,
/// `buf[stamp_end..rest_end]` the target and location delta, `buf[rest_end..len]` the
/// value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Encoded {
    pub len: usize,
    pub stamp_end: usize,
    pub rest_end: usize,
}

/// Encodes `e` at `stamp` into `buf`. `stamp` must not be below `st.stamp`.
#[inline]
pub fn encode(st: &mut DeltaState, stamp: u64, e: &Event, buf: &mut [u8; ENCODE_BUF]) -> Encoded {
    let mut tag = e.kind as u8 + 1;
    if e.flags & FLAG_VALUE != 0 {
        tag |= TAG_VALUE_FLAG;
    }
    let has_value = e.value != 0 || e.flags & FLAG_VALUE != 0;
    if has_value {
        tag |= TAG_HAS_VALUE;
    }
    let delta = stamp.wrapping_sub(st.stamp);
    let mut p = 1;
    if delta != 0 {
        tag |= TAG_HAS_STAMP;
        p = put_uvarint(buf, p, delta);
    }
    let stamp_end = p;
    if has_target(e.kind) {
        p = put_uvarint(buf, p, e.target as u64);
    }
    p = put_uvarint(buf, p, zigzag(e.loc as i64 - st.loc as i64));
    let rest_end = p;
    if has_value {
        p = put_uvarint(buf, p, zigzag(e.value));
    }
    buf[0] = tag;
    st.stamp = stamp;
    st.loc = e.loc;
    Encoded {
        len: p,
        stamp_end,
        rest_end,
    }
}

/// Decodes one record at the cursor (whose tag is known to be non-zero).
pub fn decode(
    st: &mut DeltaState,
    c: &mut Cursor,
    thread: ThreadId,
) -> Result<(u64, Event), String> {
    let tag = c.u8("a record tag")?;
    let code = tag & 0x1f;
    let Some(kind) = code.checked_sub(1).and_then(Kind::from_u8) else {
        return Err(format!(
            "expected a record tag with a kind code 1..=17, found byte {tag:#04x}"
        ));
    };
    let mut stamp = st.stamp;
    if tag & TAG_HAS_STAMP != 0 {
        let d = c.uvarint("a stamp delta")?;
        stamp = stamp
            .checked_add(d)
            .ok_or("expected a stamp delta, found one that overflows 64 bits")?;
    }
    let target = if has_target(kind) {
        c.u32("the event's target id")?
    } else {
        0
    };
    let dl = c.svarint("a location delta")?;
    let loc = (st.loc as i64)
        .checked_add(dl)
        .and_then(|l| u32::try_from(l).ok())
        .ok_or_else(|| format!("expected a location delta, found {dl} (location out of range)"))?;
    let mut e = Event::new(thread, kind, target, loc);
    if tag & TAG_HAS_VALUE != 0 {
        e.value = c.svarint("the event's value")?;
    }
    if tag & TAG_VALUE_FLAG != 0 {
        e.flags |= FLAG_VALUE;
    }
    st.stamp = stamp;
    st.loc = loc;
    Ok((stamp, e))
}

/// Bytes [`decode_fast`] needs after a record's start: every record of at most
/// [`MAX_EVENT_RECORD`] bytes fits.
const WINDOW: usize = 32;

/// One LEB128 varint of at most 8 bytes inside a fixed window, decoded with one load and
/// no branch on its length; `None` when it is longer or the window ends first (the caller
/// then falls back to [`decode`]).
#[inline(always)]
fn window_uvarint(w: &[u8; WINDOW], p: &mut usize) -> Option<u64> {
    let bytes: [u8; 8] = w.get(*p..*p + 8)?.try_into().ok()?;
    let (x, n) = word_uvarint(u64::from_le_bytes(bytes))?;
    *p += n;
    Some(x)
}

/// The varint at the start of the 8 bytes `word` (little endian) and its length, if it
/// ends within them: one load, no branch on the length.
#[inline(always)]
pub(super) fn word_uvarint(word: u64) -> Option<(u64, usize)> {
    // A clear high bit marks the last byte.
    let stop = !word & 0x8080_8080_8080_8080;
    if stop == 0 {
        return None;
    }
    let last_bit = stop.trailing_zeros(); // 7, 15, ..., 63
    let x = word & (u64::MAX >> (63 - last_bit)) & 0x7f7f_7f7f_7f7f_7f7f;
    // Squeeze out the continuation bits: 8 × 7 bits → 56 bits.
    let x = (x & 0x007f_007f_007f_007f) | ((x & 0x7f00_7f00_7f00_7f00) >> 1);
    let x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x3fff_0000_3fff_0000) >> 2);
    let x = (x & 0x0000_0000_0fff_ffff) | ((x & 0x0fff_ffff_0000_0000) >> 4);
    Some((x, (last_bit as usize + 1) / 8))
}

/// The fast path of [`decode`] for the record at `data[pos..]` (whose tag is non-zero):
/// for every record it accepts, the same result, written straight into `out` as
/// `(stamp, event)` (no temporary: the merge reads it back soon), and the position after
/// the record is returned. It gives up (`None`, leaving `st` and `out` untouched) on
/// anything unusual: fewer than 32 bytes left in `data`, a bad kind code, a varint longer
/// than 8 bytes, an overflow. [`decode`] then decides, and phrases the error if any.
#[inline(always)]
pub fn decode_fast(
    st: &mut DeltaState,
    data: &[u8],
    pos: usize,
    thread: ThreadId,
    out: &mut (u64, Event),
) -> Option<usize> {
    let w: &[u8; WINDOW] = data.get(pos..pos.checked_add(WINDOW)?)?.try_into().ok()?;
    let tag = w[0];
    let code = (tag & 0x1f) as usize;
    let kind = *Kind::ALL.get(code.checked_sub(1)?)?;
    let mut p = 1;
    let mut stamp = st.stamp;
    if tag & TAG_HAS_STAMP != 0 {
        stamp = stamp.checked_add(window_uvarint(w, &mut p)?)?;
    }
    let target = if has_target(kind) {
        u32::try_from(window_uvarint(w, &mut p)?).ok()?
    } else {
        0
    };
    let dl = unzigzag(window_uvarint(w, &mut p)?);
    let loc = u32::try_from((st.loc as i64).checked_add(dl)?).ok()?;
    let value = if tag & TAG_HAS_VALUE != 0 {
        unzigzag(window_uvarint(w, &mut p)?)
    } else {
        0
    };
    let flags = if tag & TAG_VALUE_FLAG != 0 {
        FLAG_VALUE
    } else {
        0
    };
    st.stamp = stamp;
    st.loc = loc;
    out.0 = stamp;
    out.1.thread = thread;
    out.1.kind = kind;
    out.1.flags = flags;
    out.1.target = target;
    out.1.loc = loc;
    out.1.value = value;
    Some(pos + p)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever the fast path accepts, `decode` decodes the same way.
    #[test]
    fn fast_path_agrees_with_decode() {
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let mut accepted = 0;
        for round in 0..20_000 {
            let mut data: Vec<u8> = (0..48).map(|_| next() as u8).collect();
            if round % 2 == 0 {
                // A well-formed record, with varints of every length.
                let r = next();
                let kind = Kind::ALL[(r % 17) as usize];
                let big = |x: u64| x >> (x % 64);
                let mut e = Event::new(3, kind, big(next()) as u32, big(next()) as u32);
                if r & 1 << 20 != 0 {
                    e = e.with_value(big(next()) as i64 - (1 << 20));
                }
                let mut st = DeltaState {
                    stamp: big(next()),
                    loc: big(next()) as u32,
                };
                let mut b = [0u8; ENCODE_BUF];
                let stamp = st.stamp.saturating_add(big(next()));
                let n = encode(&mut st, stamp, &e, &mut b).len;
                data[..n].copy_from_slice(&b[..n]);
            }
            let st0 = DeltaState {
                stamp: next() >> (next() % 64),
                loc: (next() >> (next() % 64)) as u32,
            };
            let mut fast = st0;
            let mut out = (0, Event::new(0, Kind::Read, 0, 0));
            let mut slow = st0;
            let mut c = Cursor::new(&data, 0);
            let res = decode(&mut slow, &mut c, 3);
            if let Some(end) = decode_fast(&mut fast, &data, 0, 3, &mut out) {
                accepted += 1;
                assert_eq!(res, Ok(out), "{data:02x?}");
                assert_eq!(end, c.pos);
                assert_eq!((fast.stamp, fast.loc), (slow.stamp, slow.loc));
            }
            // Short data: never a panic.
            for len in 0..40 {
                let mut st = st0;
                let _ = decode_fast(&mut st, &data[..len], 0, 3, &mut out);
            }
        }
        assert!(accepted > 5_000, "{accepted}");
    }
}
