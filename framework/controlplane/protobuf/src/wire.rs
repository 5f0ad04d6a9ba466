//! The protobuf wire format: a bounds-checked reader and append-only writer helpers.
//!
//! Every read checks its bounds and returns an [`Error`] instead of panicking, so any byte
//! string can be fed to the decoder.

use crate::Error;

/// Wire type of varints (`int32`, `int64`, `bool`).
pub(crate) const VARINT: u8 = 0;
/// Wire type of 8-byte little-endian values (`double`, `fixed64`).
pub(crate) const FIXED64: u8 = 1;
/// Wire type of length-delimited values (strings, bytes, messages, packed repeated).
pub(crate) const LEN: u8 = 2;
/// Wire type of 4-byte little-endian values (`float`, `fixed32`).
pub(crate) const FIXED32: u8 = 5;

/// A cursor over a protobuf-encoded buffer.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// Starts reading `buf` from its beginning.
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// Whether all bytes have been consumed.
    pub(crate) fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// Reads a base-128 varint of at most 10 bytes.
    pub(crate) fn varint(&mut self) -> Result<u64, Error> {
        let mut value: u64 = 0;
        for i in 0..10 {
            let Some(&byte) = self.buf.get(self.pos) else {
                return Err(Error::Truncated("varint"));
            };
            self.pos += 1;
            if i == 9 && byte > 1 {
                return Err(Error::BadVarint);
            }
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(Error::BadVarint)
    }

    /// Reads a field key: `(tag, wire type)`. Rejects tag 0 and wire types other than 0, 1, 2, 5.
    pub(crate) fn key(&mut self) -> Result<(u32, u8), Error> {
        let key = self.varint()?;
        let tag = key >> 3;
        let wire_type = (key & 7) as u8;
        let valid_type = matches!(wire_type, VARINT | FIXED64 | LEN | FIXED32);
        match u32::try_from(tag) {
            Ok(t) if t != 0 && t < (1 << 29) && valid_type => Ok((t, wire_type)),
            _ => Err(Error::BadKey { tag, wire_type }),
        }
    }

    /// Reads `n` raw bytes.
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], Error> {
        let end = self.pos.checked_add(n).ok_or(Error::Truncated(what))?;
        let slice = self.buf.get(self.pos..end).ok_or(Error::Truncated(what))?;
        self.pos = end;
        Ok(slice)
    }

    /// Reads a length-delimited value.
    pub(crate) fn bytes(&mut self) -> Result<&'a [u8], Error> {
        let len = self.varint()?;
        let len = usize::try_from(len).map_err(|_| Error::Truncated("length-delimited value"))?;
        self.take(len, "length-delimited value")
    }

    /// Reads an 8-byte little-endian value.
    pub(crate) fn fixed64(&mut self) -> Result<u64, Error> {
        let b = self.take(8, "fixed64")?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    /// Reads a 4-byte little-endian value.
    pub(crate) fn fixed32(&mut self) -> Result<u32, Error> {
        let b = self.take(4, "fixed32")?;
        let mut a = [0u8; 4];
        a.copy_from_slice(b);
        Ok(u32::from_le_bytes(a))
    }

    /// Skips a value of the given wire type (unknown fields are ignored, as Go does).
    pub(crate) fn skip(&mut self, wire_type: u8) -> Result<(), Error> {
        match wire_type {
            VARINT => self.varint().map(drop),
            FIXED64 => self.fixed64().map(drop),
            LEN => self.bytes().map(drop),
            FIXED32 => self.fixed32().map(drop),
            other => Err(Error::BadKey {
                tag: 0,
                wire_type: other,
            }),
        }
    }
}

/// Appends a varint.
pub(crate) fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8 & 0x7f) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Appends a field key.
pub(crate) fn put_key(out: &mut Vec<u8>, tag: u32, wire_type: u8) {
    put_varint(out, (u64::from(tag) << 3) | u64::from(wire_type));
}

/// Appends a length-delimited field.
pub(crate) fn put_len(out: &mut Vec<u8>, tag: u32, bytes: &[u8]) {
    put_key(out, tag, LEN);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_round_trip() {
        for v in [
            0u64,
            1,
            127,
            128,
            300,
            u32::MAX as u64,
            u64::MAX,
            (-1i64) as u64,
        ] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            let mut r = Reader::new(&out);
            assert_eq!(r.varint(), Ok(v));
            assert!(r.is_empty());
        }
    }

    #[test]
    fn malformed_varints_are_errors() {
        assert_eq!(
            Reader::new(&[0x80]).varint(),
            Err(Error::Truncated("varint"))
        );
        assert_eq!(Reader::new(&[0xff; 11]).varint(), Err(Error::BadVarint));
        let mut ten = [0xffu8; 10];
        ten[9] = 0x02;
        assert_eq!(Reader::new(&ten).varint(), Err(Error::BadVarint));
    }

    #[test]
    fn huge_lengths_are_errors() {
        let mut buf = Vec::new();
        put_varint(&mut buf, u64::MAX);
        assert!(matches!(
            Reader::new(&buf).bytes(),
            Err(Error::Truncated(_))
        ));
        assert!(matches!(
            Reader::new(&[5, 1, 2]).bytes(),
            Err(Error::Truncated(_))
        ));
    }

    #[test]
    fn bad_keys_are_errors() {
        assert!(matches!(
            Reader::new(&[0x00]).key(),
            Err(Error::BadKey { .. })
        ));
        assert!(matches!(
            Reader::new(&[0x0b]).key(),
            Err(Error::BadKey { .. })
        ));
        assert_eq!(Reader::new(&[0x0a]).key(), Ok((1, LEN)));
    }
}
