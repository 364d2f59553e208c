//! LEB128 varints and zigzag, the integer coding of every record: small ids and deltas
//! take one byte. Decoding never panics: a truncated or over-long varint is an error.

/// Zigzag-maps a signed value so that small magnitudes become small unsigned values.
#[inline]
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

#[inline]
pub fn unzigzag(u: u64) -> i64 {
    ((u >> 1) as i64) ^ -((u & 1) as i64)
}

/// Longest encoding of a `u64`.
pub const MAX_VARINT: usize = 10;

/// Writes `v` at `buf[pos..]`, returning the position after it. `buf` must have
/// [`MAX_VARINT`] bytes free at `pos`.
#[inline]
pub fn put_uvarint(buf: &mut [u8], mut pos: usize, mut v: u64) -> usize {
    while v >= 0x80 {
        buf[pos] = (v as u8) | 0x80;
        v >>= 7;
        pos += 1;
    }
    buf[pos] = v as u8;
    pos + 1
}

/// Appends `v` to a vector.
pub fn push_uvarint(out: &mut Vec<u8>, v: u64) {
    let mut b = [0u8; MAX_VARINT];
    let n = put_uvarint(&mut b, 0, v);
    out.extend_from_slice(&b[..n]);
}

/// Appends a length-prefixed UTF-8 string.
pub fn push_str(out: &mut Vec<u8>, s: &str) {
    push_uvarint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// A read position in a byte slice; every read says what it expected when it fails.
pub struct Cursor<'a> {
    pub data: &'a [u8],
    pub pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(data: &'a [u8], pos: usize) -> Cursor<'a> {
        Cursor { data, pos }
    }

    pub fn at_end(&self) -> bool {
        self.pos >= self.data.len()
    }

    pub fn u8(&mut self, what: &str) -> Result<u8, String> {
        match self.data.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                Ok(b)
            }
            None => Err(format!("expected {what}, found the end of the chunk")),
        }
    }

    pub fn uvarint(&mut self, what: &str) -> Result<u64, String> {
        let mut v: u64 = 0;
        for i in 0..MAX_VARINT {
            let Some(&b) = self.data.get(self.pos + i) else {
                return Err(format!(
                    "expected {what} (a varint), found the end of the chunk"
                ));
            };
            if i == MAX_VARINT - 1 && b > 1 {
                return Err(format!(
                    "expected {what} (a varint), found one that overflows 64 bits"
                ));
            }
            v |= ((b & 0x7f) as u64) << (7 * i);
            if b & 0x80 == 0 {
                self.pos += i + 1;
                return Ok(v);
            }
        }
        Err(format!(
            "expected {what} (a varint), found one longer than 10 bytes"
        ))
    }

    pub fn u32(&mut self, what: &str) -> Result<u32, String> {
        let v = self.uvarint(what)?;
        u32::try_from(v).map_err(|_| format!("expected {what} (a 32-bit id), found {v}"))
    }

    pub fn svarint(&mut self, what: &str) -> Result<i64, String> {
        self.uvarint(what).map(unzigzag)
    }

    pub fn str(&mut self, what: &str) -> Result<String, String> {
        let n = self.uvarint(what)?;
        let end = usize::try_from(n)
            .ok()
            .and_then(|n| self.pos.checked_add(n))
            .filter(|&e| e <= self.data.len())
            .ok_or_else(|| format!("expected {what} of {n} bytes, found the end of the chunk"))?;
        let s = std::str::from_utf8(&self.data[self.pos..end])
            .map_err(|_| format!("expected {what} as UTF-8 text, found invalid bytes"))?;
        self.pos = end;
        Ok(s.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for v in [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
            let mut b = Vec::new();
            push_uvarint(&mut b, v);
            assert_eq!(Cursor::new(&b, 0).uvarint("v").unwrap(), v);
        }
        for v in [0i64, -1, 1, i64::MIN, i64::MAX] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        assert!(Cursor::new(&[0x80, 0x80], 0).uvarint("v").is_err());
        assert!(Cursor::new(&[0xff; 11], 0).uvarint("v").is_err());
        assert!(Cursor::new(
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02],
            0
        )
        .uvarint("v")
        .is_err());
    }
}
